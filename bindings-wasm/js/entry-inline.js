// shardid over the WebAssembly module with the module's bytes inside the JavaScript
// (shardid_wasm_bytes.js, base64): the default entry of the shardid-wasm package for every
// `import`. Any bundler (esbuild, Vite, webpack, Rollup) takes it with no plugin and no .wasm
// file to copy, and the module is compiled synchronously on import (it is small: browsers
// allow that on the main thread), so the classes are ready with no `await init()`.
import { initSync } from './shardid_wasm.js'
import * as raw from './shardid_wasm.js'
import { makeApi } from '../web/api.js'
import { acrossModules, makeBackend } from '../web/backend.js'
import { wasmBase64 } from './shardid_wasm_bytes.js'

const bytes = Uint8Array.from(atob(wasmBase64), (c) => c.charCodeAt(0))
initSync({ module: bytes })
const memory = raw.wasmMemory()
const api = acrossModules(makeApi(makeBackend(raw, () => memory)))
// The default module has no public IDs (its size budget: they are the module shardid-wasm/public):
// PublicIds, checkPublicId and fromUuid are not exported here, so that an import of them fails
// when the code is compiled or linked, not when it runs. build.sh adds them to public.js.
export const { Layout, Generator, Parts, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } = api
export default api
