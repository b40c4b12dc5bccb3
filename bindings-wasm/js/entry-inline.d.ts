// Types of the shardid-wasm package's `import` entry (inline/shardid.js): the classes, ready on
// import, without leases (a page has no file system).
import type { Api } from '../web/wasm-api.js'

// Without PublicIds, checkPublicId and fromUuid (shardid-wasm/public's): build.sh points
// public.d.ts at wasm-api-public.js, which has them. Without shardFromOrdinal either:
// UNSUPPORTED in both modules (no host). wasm-api.d.ts says what else the module lacks.
export { Layout, Generator, Parts, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } from '../web/wasm-api.js'
export type { AnyLayout, EncodingName, ErrorCode, ErrorFields, GeneratorOptions, IdInput, LayoutSpec, TimeInput, U64Input } from '../web/wasm-api.js'
declare const _default: Api
export default _default
