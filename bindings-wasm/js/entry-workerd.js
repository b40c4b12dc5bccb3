// shardid over the WebAssembly module for Cloudflare Workers (workerd/shardid.js, the package's
// `workerd` export condition, which wrangler's bundler resolves): workerd compiles no
// WebAssembly from bytes at run time ("Wasm code generation disallowed by embedder"), so the
// default entry's bytes-in-JavaScript would not start a Worker. The .wasm is imported instead:
// wrangler (or workerd's own config, `wasm = embed "…"`) hands it over compiled, and
// instantiating a compiled module is allowed, synchronously, so the classes are ready on import
// as with the default entry.
import { initSync } from '../web/shardid_wasm.js'
import * as raw from '../web/shardid_wasm.js'
import module from '../web/shardid_wasm_bg.wasm'
import { makeApi } from '../web/api.js'
import { acrossModules, makeBackend } from '../web/backend.js'

initSync({ module })
const memory = raw.wasmMemory()
const api = acrossModules(makeApi(makeBackend(raw, () => memory)))
// The default module has no public IDs (its size budget: they are the module shardid-wasm/public):
// PublicIds, checkPublicId and fromUuid are not exported here, so that an import of them fails
// when the code is compiled or linked, not when it runs. build.sh adds them to public.js.
export const { Layout, Generator, Parts, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } = api
export default api
