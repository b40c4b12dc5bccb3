// shardid over the WebAssembly module, for browsers (pkg/web/shardid.js): `await init()` once,
// then use the classes it returns (or `shardid()` later).
import wasmInit, * as raw from './shardid_wasm.js'
import { makeApi } from './api.js'
import { makeBackend } from './backend.js'

let api
export default async function init(input) {
  await wasmInit(input)
  const memory = raw.wasmMemory()
  api = makeApi(makeBackend(raw, () => memory))
  return api
}
export function shardid() {
  if (!api) throw new Error('call `await init()` first')
  return api
}
