// Types of pkg/bundler/shardid.js: the classes, without leases.
import type api from './api.js'

export { Layout, Generator, Parts, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } from './api.js'
export type { ErrorCode, ErrorFields, GeneratorOptions, IdInput, LayoutSpec, TimeInput, U64Input } from './api.js'
declare const _default: Omit<typeof api, 'lease' | 'LeasedGenerator'>
export default _default
