// Types of node/shardid.js (CommonJS): `module.exports` is the API object, the same as the
// Node addon's (`lease` throws UNSUPPORTED: the module has no file system), and its `default`
// is itself, for code compiled from `import shardid from 'shardid-wasm'`. Without public IDs
// (PublicIds, checkPublicId, fromUuid throw UNSUPPORTED in the default module: they are
// shardid-wasm/public's, whose public.d.ts build.sh makes with `never` in their place), nor
// shardFromOrdinal (a pod's hostname: UNSUPPORTED in both modules, which have no host).
import type * as api from './api.js'

type Api = Omit<typeof api.default, 'shardFromOrdinal' | 'PublicIds' | 'checkPublicId' | 'fromUuid'>
declare const shardid: Api & { readonly default: Api }
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
