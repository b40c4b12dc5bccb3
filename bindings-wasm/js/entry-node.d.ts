// Types of node/shardid.js (CommonJS): `module.exports` is the API object, the same as the
// Node addon's (`lease` throws UNSUPPORTED: the module has no file system), and its `default`
// is itself, for code compiled from `import shardid from 'shardid-wasm'`.
import type * as api from './api.js'

declare const shardid: typeof api.default & { readonly default: typeof api.default }
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
  type GeneratorOptions = api.GeneratorOptions
  type LeaseOptions = api.LeaseOptions
  type Parts = api.Parts
  type Layout = api.Layout
  type Generator = api.Generator
  type LeasedGenerator = api.LeasedGenerator
  type EncodingName = api.EncodingName
  type PublicIdFormat = api.PublicIdFormat
  type PublicIdsOptions = api.PublicIdsOptions
  type PublicIds = api.PublicIds
}
export = shardid
