// Types of node/shardid.js (CommonJS): `module.exports` is the API object, the same as the
// Node addon's (`lease` throws UNSUPPORTED: the module has no file system), and its `default`
// is itself, for code compiled from `import shardid from 'shardid-wasm'`. Without public IDs
// (PublicIds, checkPublicId, fromUuid throw UNSUPPORTED in the default module: they are
// shardid-wasm/public's, whose public.d.ts build.sh points at wasm-api-public.js), nor
// shardFromOrdinal (a pod's hostname: UNSUPPORTED in both modules, which have no host).
// wasm-api.d.ts says what else the module lacks.
import type * as api from './api.js'
import type * as wasm from './wasm-api.js'

declare const shardid: wasm.Api & { readonly default: wasm.Api }
declare namespace shardid {
  type IdInput = api.IdInput
  type TimeInput = api.TimeInput
  type U64Input = api.U64Input
  type ErrorCode = api.ErrorCode
  type ErrorFields = api.ErrorFields
  type FieldOrderName = api.FieldOrderName
  type PresetName = api.PresetName
  type ShardIdError = api.ShardIdError
  type LayoutSpec = api.LayoutSpec
  type GeneratorOptions = wasm.GeneratorOptions
  type Parts = api.Parts
  type AnyLayout = wasm.AnyLayout
  type Layout = wasm.Layout
  type Generator = wasm.Generator
  type EncodingName = api.EncodingName
}
export = shardid
