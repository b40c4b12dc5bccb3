// The package's types as a frontend's TypeScript sees them (moduleResolution "bundler").
import shardid, { Generator, Layout, type IdInput } from 'shardid-wasm'
import init from 'shardid-wasm/web'

const id: IdInput = '175928847299117063'
const shard: number = Layout.DISCORD.decode(id).shard
const next: bigint = new Generator({ layout: Layout.INSTAGRAM, shard }).nextId()
const same: typeof Layout = shardid.Layout
// @ts-expect-error leases need a file system: not in the WebAssembly package's types
shardid.lease
async function later(): Promise<bigint> {
  const api = await init()
  return api.Layout.TWITTER.minIdAt(0) + next + BigInt(same.INSTAGRAM.maxShard)
}
export { later }
