// Types of the shardid-wasm package's `import` entry (inline/shardid.js): the classes, ready on
// import, without leases (a page has no file system).
import type api from '../web/api.js'

export { Layout, Generator, Parts, PublicIds, checkPublicId, fromUuid, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } from '../web/api.js'
export type { EncodingName, ErrorCode, ErrorFields, GeneratorOptions, IdInput, LayoutSpec, PublicIdFormat, PublicIdsOptions, TimeInput, U64Input } from '../web/api.js'
declare const _default: Omit<typeof api, 'lease' | 'LeasedGenerator'>
export default _default
