// Types of pkg/bundler/shardid.js: the classes, without leases.
import type api from './api.js'

// Without PublicIds, checkPublicId and fromUuid (shardid-wasm/public's): build.sh adds them to
// public.d.ts. Without shardFromOrdinal either: UNSUPPORTED in both modules (no host).
export { Layout, Generator, Parts, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } from './api.js'
export type { EncodingName, ErrorCode, ErrorFields, GeneratorOptions, IdInput, LayoutSpec, TimeInput, U64Input } from './api.js'
declare const _default: Omit<typeof api, 'lease' | 'LeasedGenerator' | 'shardFromOrdinal' | 'PublicIds' | 'checkPublicId' | 'fromUuid'>
export default _default
