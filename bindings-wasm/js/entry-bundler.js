// shardid over the WebAssembly module, for bundlers (pkg/bundler/shardid.js): the bundler
// instantiates the module. No leases: a page has no file system.
import * as raw from './shardid_wasm.js'
import { makeApi } from './api.js'
import { acrossModules, makeBackend } from './backend.js'

const memory = raw.wasmMemory()
const api = acrossModules(makeApi(makeBackend(raw, () => memory)))
// The default module has no public IDs (its size budget: they are the module shardid-wasm/public):
// PublicIds, checkPublicId and fromUuid are not exported here, so that an import of them fails
// when the code is compiled or linked, not when it runs. build.sh adds them to public.js.
export const { Layout, Generator, Parts, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } = api
export default api
