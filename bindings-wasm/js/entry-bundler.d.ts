// Types of pkg/bundler/shardid.js: the classes, without leases.
import type api from './api.js'

export { Layout, Generator, Parts, PublicIds, checkPublicId, fromUuid, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } from './api.js'
export type { EncodingName, ErrorCode, ErrorFields, GeneratorOptions, IdInput, LayoutSpec, PublicIdFormat, PublicIdsOptions, TimeInput, U64Input } from './api.js'
declare const _default: Omit<typeof api, 'lease' | 'LeasedGenerator'>
export default _default
