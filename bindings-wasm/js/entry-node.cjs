'use strict'
// shardid over the WebAssembly module, for Node (CommonJS): pkg/node/shardid.js.
const raw = require('./shardid_wasm.js')
const memory = raw.wasmMemory()
const { acrossModules, makeBackend } = require('./backend.js')
module.exports = acrossModules(require('./api.js').makeApi(makeBackend(raw, () => memory)))
// `import shardid from 'shardid-wasm'` compiled to CommonJS reads `.default`: the same object.
Object.defineProperty(module.exports, '__esModule', { value: true })
Object.defineProperty(module.exports, 'default', { value: module.exports })
