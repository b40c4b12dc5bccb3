// Types of the shardid-wasm package's `import` entry (inline/shardid.js): the classes, ready on
// import, without leases (a page has no file system).
import type api from '../web/api.js'

// Without PublicIds, checkPublicId and fromUuid (shardid-wasm/public's): build.sh adds them to
// public.d.ts. Without shardFromOrdinal either: UNSUPPORTED in both modules (no host).
export { Layout, Generator, Parts, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } from '../web/api.js'
export type { EncodingName, ErrorCode, ErrorFields, GeneratorOptions, IdInput, LayoutSpec, TimeInput, U64Input } from '../web/api.js'
declare const _default: Omit<typeof api, 'lease' | 'LeasedGenerator' | 'shardFromOrdinal' | 'PublicIds' | 'checkPublicId' | 'fromUuid'>
export default _default
