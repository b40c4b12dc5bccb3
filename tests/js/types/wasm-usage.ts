// Compiled by `tsc --noEmit --strict` in tests/js/run.sh: each WebAssembly target's types say
// what that target exports.
import init, { shardid } from 'shardid-wasm/web'
import * as bundler from 'shardid-wasm/bundler'
import bundled, { Generator, Layout, ShardIdError } from 'shardid-wasm/bundler'
import wasmNode from 'shardid-wasm/node'

// The web build: init() first, then the classes.
const api = await init()
const webId: bigint = new api.Generator({ layout: api.Layout.TWITTER, shard: 1 }).nextId()
const later = shardid().Layout.TWITTER.decode(webId)
console.log(later.timestampMs, await init(new URL('./shardid_wasm_bg.wasm', 'https://example.com/')))

// The bundler build: the classes at once, and no leases.
const id: bigint = new Generator({ layout: Layout.INSTAGRAM, shard: 2 }).nextId()
try {
  Layout.INSTAGRAM.decode(-1n)
} catch (err) {
  if (err instanceof ShardIdError) console.log(err.code)
}
console.log(id, bundled.version)
// @ts-expect-error: a page has no file system, so the bundler build has no lease()
bundler.lease
// @ts-expect-error: nor does its default export
bundled.lease

// The Node build: the Node API without what the module answers UNSUPPORTED to (its types as
// the other targets': tests/edge/names.mjs checks each against the module at run time).
const nodeLayout = wasmNode.Layout.DISCORD
console.log(nodeLayout.decode('175928847299117063').shard)
// @ts-expect-error: no lease() (lock files: the module has no file system)
wasmNode.lease
// @ts-expect-error: no UUIDv7 bridge in the default module (shardid-wasm/public's)
nodeLayout.toUuid(1n)
