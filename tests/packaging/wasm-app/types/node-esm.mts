// The package's types from a Node ES module (module "nodenext"): the `import` entry.
import shardid, { Layout } from 'shardid-wasm'

const parts = Layout.DISCORD.decode(175928847299117063n)
export const seconds: number = parts.timestampMs / 1000 + shardid.Layout.TWITTER.maxShard
