// Types of index.mjs, the ES module entry: the same objects as the CommonJS entry's
// (index.d.ts), here as an ES module's exports.
export * from './index.js'
export { default } from './index.js'
