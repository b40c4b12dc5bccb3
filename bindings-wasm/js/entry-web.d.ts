// Types of pkg/web/shardid.js: `init()` loads the module and gives the API. The default module's
// API has no public IDs (PublicIds, checkPublicId, fromUuid: shardid-wasm/web/public's, whose
// public.d.ts build.sh points at wasm-api-public.js); at run time they throw UNSUPPORTED, as
// shardFromOrdinal does in both modules (no host). wasm-api.d.ts says what else it lacks.
import type { Api } from './wasm-api.js'

export type * from './wasm-api.js'
/** Where the `.wasm` is (default: next to this file), its bytes, or the compiled module. */
export type InitInput = string | URL | Request | Response | BufferSource | WebAssembly.Module
/**
 * Loads the module once; resolves with the classes (`Layout`, `Generator`, ...). Takes the input
 * itself or wasm-bindgen's `{ module_or_path }`: on Cloudflare Workers, the `.wasm` imported as
 * a module (`import wasm from 'shardid-wasm/web/shardid_wasm_bg.wasm'`), as workerd compiles no
 * WebAssembly from bytes.
 */
export default function init(input?: InitInput | Promise<InitInput> | { module_or_path: InitInput | Promise<InitInput> }): Promise<Api>
/** The classes, once `init()` has resolved; throws before. */
export declare function shardid(): Api
