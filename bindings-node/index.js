'use strict'
// The `shardid` package (CommonJS): the classes of api.js over the native addon, whose loader
// napi-rs generates (native.generated.js). The addon comes in a package per platform
// (shardid-linux-x64-gnu, ...), an optional dependency npm installs only where it fits.
module.exports = require('./api.js').makeApi(loadNative())
// `import shardid from 'shardid'` compiled to CommonJS by TypeScript or Babel reads `.default`
// (index.d.ts declares a default export): the same object.
Object.defineProperty(module.exports, '__esModule', { value: true })
Object.defineProperty(module.exports, 'default', { value: module.exports })

function loadNative () {
  try {
    return require('./native.generated.js')
  } catch (err) {
    // The loader tried this platform's package and says so only deep in its causes: name it.
    const tried = new Set()
    for (let e = err; e; e = e.cause) {
      for (const [, name] of String(e.message).matchAll(/Cannot find module '(shardid-[^'/]+)'/g)) {
        if (!name.endsWith('-wasm32-wasi')) tried.add(name) // napi's WASI fallback, never published
      }
    }
    if (tried.size === 0) throw err
    const missing = [...tried].join(' or ')
    const error = new Error(
      `shardid has no native addon for ${process.platform}-${process.arch}: the package ${missing} is not installed. ` +
        'It is an optional dependency of shardid, installed by npm on the platforms it supports; ' +
        `reinstall (npm install shardid, without --omit=optional or --no-optional), or use the WebAssembly build, shardid-wasm.`
    )
    error.code = 'MISSING_NATIVE_ADDON'
    error.cause = err
    throw error
  }
}
