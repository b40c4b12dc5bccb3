// shardid-wasm/public's API as its entries export it at run time: the default module's
// (wasm-api.d.ts) with the UUIDv7 bridge on its Layout, public IDs and fromUuid. Every class
// and function still takes a Layout of either module (AnyLayout). build.sh points the public
// entries' types (public.d.ts) here.
import type * as node from './api.js'
import type { AnyLayout, Api as DefaultApi, LayoutClass } from './wasm-api.js'

export * from './wasm-api.js'
export { checkPublicId } from './api.js'

/** A validated bit layout of `shardid-wasm/public`: with the UUIDv7 bridge. */
export type Layout = node.Layout
export declare const Layout: LayoutClass<Layout>

/** What a public ID's format is: its type prefix, encoding and layout (of either module). */
export interface PublicIdFormat extends Omit<node.PublicIdFormat, 'layout'> {
  layout?: AnyLayout
}
/** What `new PublicIds(...)` takes. */
export interface PublicIdsOptions extends Omit<node.PublicIdsOptions, 'layout'> {
  layout?: AnyLayout
}
/** Public IDs: an ID as short, opaque text for URLs and APIs and back, under a secret key. */
export interface PublicIds extends node.PublicIds {}
export declare const PublicIds: {
  new (options: PublicIdsOptions): PublicIds
  /** From keys as text (32 hex digits, or `VERSION:HEX` pairs separated by commas). */
  fromKeys(keys: string, format: PublicIdFormat | string): PublicIds
  /** From the keys in the environment variable `variable` (default `SHARDID_PUBLIC_ID_KEYS`). */
  fromEnv(format: PublicIdFormat & { variable?: string }): PublicIds
  readonly prototype: PublicIds
}

/** The ID a UUID made by `Layout#toUuid` holds; without `layout`, the preset its marker names. */
export declare function fromUuid(uuid: string | Uint8Array, layout?: AnyLayout | null): bigint

/** What the public entries export, and what their default export and `init()` give. */
export interface Api extends Omit<DefaultApi, 'Layout'> {
  Layout: typeof Layout
  PublicIds: typeof PublicIds
  checkPublicId: typeof node.checkPublicId
  fromUuid: typeof fromUuid
}
