// Types of pkg/bundler/shardid.js: the classes, without leases.
import type api from './api'

export { Layout, Generator, Parts, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } from './api'
export type { ErrorCode, ErrorFields, GeneratorOptions, IdInput, LayoutSpec, TimeInput, U64Input } from './api'
declare const _default: Omit<typeof api, 'lease' | 'LeasedGenerator'>
export default _default
