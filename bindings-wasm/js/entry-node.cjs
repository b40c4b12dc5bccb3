'use strict'
// shardid over the WebAssembly module, for Node (CommonJS): pkg/node/shardid.js.
const raw = require('./shardid_wasm.js')
const memory = raw.wasmMemory()
module.exports = require('./api.js').makeApi(require('./backend.js').makeBackend(raw, () => memory))
