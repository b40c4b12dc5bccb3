// Types of pkg/web/shardid.js: `init()` loads the module and gives the API.
import type api from './api.js'

export type * from './api.js'
/** What `init()` takes: where the `.wasm` is (default: next to this file), or its bytes. */
export type InitInput = string | URL | Request | Response | BufferSource | WebAssembly.Module
/** Loads the module once; resolves with the classes (`Layout`, `Generator`, ...). */
export default function init(input?: InitInput | Promise<InitInput>): Promise<typeof api>
/** The classes, once `init()` has resolved; throws before. */
export declare function shardid(): typeof api
