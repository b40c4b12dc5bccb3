// The default WebAssembly module's API as its entries export it at run time: the Node package's
// types (api.d.ts, shared with the addon) without what this module only answers UNSUPPORTED to,
// so that TypeScript refuses the call instead of the page failing when it runs:
//   - Layout#toUuid, #toUuidBytes, #fromUuid: the UUIDv7 bridge is shardid-wasm/public's (this
//     module's size budget); wasm-api-public.d.ts gives that module's Layout its bridge back;
//   - Generator#stats: the counters are in neither module (the same budget), only the addon.
// JavaScript without types still finds these names at run time, saying UNSUPPORTED and where to
// look. The entries' own types leave out lease, LeasedGenerator, shardFromOrdinal (no file
// system, no host) and, in the default module, PublicIds, checkPublicId and fromUuid.
// tests/edge/names.mjs checks every entry's types against the entry, class member by member.
import type * as node from './api.js'

export type { EncodingName, ErrorCode, ErrorFields, FieldOrderName, IdInput, LayoutSpec, PresetName, TimeInput, U64Input } from './api.js'
export { Parts, ShardIdError, jsonReplacer, nowMs, version, threadsShareState } from './api.js'

/** The members of the addon's Layout that only shardid-wasm/public's Layout has. */
type Bridge = 'toUuid' | 'toUuidBytes' | 'fromUuid'

/**
 * A Layout of either WebAssembly module: what every class and function of both takes (one
 * module's Layout is accepted by the other's), and what a Generator's `layout` is (a
 * Generator is made by the first module loaded in the realm, so its layout may be the default
 * module's, without the UUIDv7 bridge).
 */
export interface AnyLayout extends Omit<node.Layout, Bridge> {}

/** A module's Layout class: the constructor and every preset make `L`. */
export type LayoutClass<L> = {
  /** Validates a custom layout (`INVALID_LAYOUT` naming the broken rule). */
  new (spec: node.LayoutSpec): L
  readonly prototype: L
} & { readonly [K in Exclude<keyof typeof node.Layout, 'prototype'>]: L }

/** A validated bit layout of the default module: no UUIDv7 bridge (`shardid-wasm/public`'s). */
export type Layout = AnyLayout
export declare const Layout: LayoutClass<Layout>

/** What `new Generator(...)` takes: a Layout of either module. */
export interface GeneratorOptions extends Omit<node.GeneratorOptions, 'layout'> {
  layout: AnyLayout
}
/**
 * Makes unique, strictly increasing IDs for one shard of a layout; every Generator of the realm
 * for the same layout and shard, of either module, shares one state. No `stats()`: the
 * counters are the Node addon's.
 */
export interface Generator extends Omit<node.Generator, 'stats' | 'layout'> {
  /** The layout of the IDs it makes (the first module's Layout: see `AnyLayout`). */
  readonly layout: AnyLayout
}
export declare const Generator: {
  /** `SHARD_OUT_OF_RANGE` when the shard does not fit the layout. */
  new (options: GeneratorOptions): Generator
  readonly prototype: Generator
}

/**
 * A `JSON.parse` reviver: the values of `keys` as bigint IDs of `layout` (required: IDs are
 * checked against the layout that made them), checked; an array of them too. Throws
 * `INVALID_ID` for anything else.
 */
export declare function jsonReviver(keys: readonly string[], layout: AnyLayout): (key: string, value: unknown) => unknown

/** What the entries export, and what `import shardid from 'shardid-wasm'` and `init()` give. */
export interface Api {
  Layout: typeof Layout
  Generator: typeof Generator
  Parts: typeof node.Parts
  ShardIdError: typeof node.ShardIdError
  jsonReplacer: typeof node.jsonReplacer
  jsonReviver: typeof jsonReviver
  nowMs: typeof node.nowMs
  version: string
  threadsShareState: boolean
}
