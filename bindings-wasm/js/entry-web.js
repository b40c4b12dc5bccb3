// shardid over the WebAssembly module, for browsers (pkg/web/shardid.js): `await init()` once,
// then use the classes it returns (or `shardid()` later).
import wasmInit, * as raw from './shardid_wasm.js'
import { makeApi } from './api.js'
import { acrossModules, makeBackend } from './backend.js'

let api
let loading
/**
 * `init()`, `init(urlOrBytesOrModule)` or `init({ module_or_path })`: wasm-bindgen's glue takes
 * only the object form without printing its deprecation warning, so anything else is wrapped in
 * one here (a `WebAssembly.Module`, bytes, a URL, a `Response`: none is a plain object). Loads
 * once: later calls (a Worker's every request, say) resolve with the same classes.
 */
export default function init(input) {
  loading ??= load(input).catch((err) => {
    loading = undefined
    throw err
  })
  return loading
}
async function load(input) {
  const plain = input != null && Object.getPrototypeOf(input) === Object.prototype
  await wasmInit(input === undefined || plain ? input : { module_or_path: input })
  const memory = raw.wasmMemory()
  api = acrossModules(makeApi(makeBackend(raw, () => memory)))
  return api
}
export function shardid() {
  if (!api) throw new Error('call `await init()` first')
  return api
}
