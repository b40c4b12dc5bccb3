// Decodes (and makes) IDs through the WebAssembly module under Node: the same classes as the
// native addon, over bindings-wasm/pkg/node (built by bindings-wasm/build.sh).
const { Generator, Layout, version } = require('../../bindings-wasm/pkg/node/shardid.js')

console.log(`WebAssembly (shardid ${version}) under Node:`)
const fromJson = JSON.parse('{"ids": ["175928847299117063", "1050118621198921728"]}').ids
const discord = Layout.DISCORD.decode(fromJson[0])
console.log(`  Discord ${fromJson[0]}  ->  ${discord.date.toISOString()}  shard ${discord.shard}  sequence ${discord.sequence}`)
const { timestampMs, shard } = Layout.TWITTER.decodeMany([fromJson[1]])
console.log(`  Twitter ${fromJson[1]}  ->  ${new Date(timestampMs[0]).toISOString()}  worker ${shard[0]}  (decodeMany)`)
const id = new Generator({ layout: Layout.INSTAGRAM, shard: 5 }).nextId()
console.log(`  made here: ${id}  ->  ${Layout.INSTAGRAM.decode(id).date.toISOString()}`)
