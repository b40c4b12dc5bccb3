// Types of pkg/web/shardid.js: `init()` loads the module and gives the API. The default module's
// API has no public IDs (PublicIds, checkPublicId, fromUuid: shardid-wasm/web/public's; build.sh
// removes them from this Omit for public.d.ts); at run time they throw UNSUPPORTED, as
// shardFromOrdinal does in both modules (no host).
import type api from './api.js'

export type * from './api.js'
/** The classes `init()` gives. */
export type Api = Omit<typeof api, 'lease' | 'LeasedGenerator' | 'shardFromOrdinal' | 'PublicIds' | 'checkPublicId' | 'fromUuid'>
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
