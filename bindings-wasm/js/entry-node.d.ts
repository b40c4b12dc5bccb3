// Types of pkg/node/shardid.js: the same API as the Node addon's (`lease` throws UNSUPPORTED:
// the module has no file system).
export * from './api'
export { default } from './api'
