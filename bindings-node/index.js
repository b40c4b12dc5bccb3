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
    const first = [...tried][0]
    const { version } = require('./package.json')
    // What works depends on where this shardid came from: say each case.
    const error = new Error(
      `shardid has no native addon for ${process.platform}-${process.arch}: the package ${missing} is not installed. ` +
        'It is an optional dependency of shardid, one package per platform. ' +
        `From a release's files: install the platform's tarball beside shardid's (npm install shardid-${version}.tgz ${first}-${version}.tgz). ` +
        'From the npm registry: npm install shardid, without --omit=optional or --no-optional. ' +
        'From a checkout: build the addon in the package folder (cd bindings-node && npm install && npm run build) and ' +
        'install that folder (npm install path/to/bindings-node); a tarball made by npm pack holds no addon. ' +
        'Or use the WebAssembly build, shardid-wasm.'
    )
    error.code = 'MISSING_NATIVE_ADDON'
    error.cause = err
    throw error
  }
}
