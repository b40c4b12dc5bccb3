// shardid over the WebAssembly module, for bundlers (pkg/bundler/shardid.js): the bundler
// instantiates the module. No leases: a page has no file system.
import * as raw from './shardid_wasm.js'
import { makeApi } from './api.js'
import { makeBackend } from './backend.js'

const memory = raw.wasmMemory()
const api = makeApi(makeBackend(raw, () => memory))
export const { Layout, Generator, Parts, PublicIds, checkPublicId, fromUuid, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } = api
export default api
