// Makes and decodes IDs from Node with the `shardid` package (the napi-rs addon).
import { Generator, Layout, version } from '../../bindings-node/index.mjs'

const gen = new Generator({ layout: Layout.INSTAGRAM, shard: 5 })
console.log(`Node (shardid ${version}), Instagram layout, shard 5:`)
for (const id of gen.nextIds(3)) {
  const { date, shard, sequence } = Layout.INSTAGRAM.decode(id)
  console.log(`  ${id}  ->  ${date.toISOString()}  shard ${shard}  sequence ${sequence}`)
}
// IDs travel in JSON as strings: nextIdString() makes them, decode() takes them.
console.log(`  as JSON: ${JSON.stringify({ id: gen.nextIdString() })}`)
console.log(`  Discord's documented ID: ${JSON.stringify(Layout.DISCORD.decode('175928847299117063'))}`)
