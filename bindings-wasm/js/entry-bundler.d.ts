// Types of pkg/bundler/shardid.js: the classes, without leases.
import type { Api } from './wasm-api.js'

// Without PublicIds, checkPublicId and fromUuid (shardid-wasm/public's): build.sh points
// public.d.ts at wasm-api-public.js, which has them. Without shardFromOrdinal either:
// UNSUPPORTED in both modules (no host). wasm-api.d.ts says what else the module lacks.
export { Layout, Generator, Parts, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } from './wasm-api.js'
export type { AnyLayout, EncodingName, ErrorCode, ErrorFields, GeneratorOptions, IdInput, LayoutSpec, TimeInput, U64Input } from './wasm-api.js'
declare const _default: Api
export default _default
