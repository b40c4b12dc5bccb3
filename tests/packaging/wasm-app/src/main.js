// The page's code, written as a frontend would: the package by name, no init, no plugin.
import shardid, { Generator, Layout, jsonReplacer } from 'shardid-wasm'

const result = {}
try {
  const parts = Layout.DISCORD.decode('175928847299117063')
  result.discord = [String(parts.timestampMs), parts.shard, parts.sequence]
  const ids = new Generator({ layout: Layout.INSTAGRAM, shard: 7 }).nextIds(1000)
  result.increasing = ids.every((id, i) => i === 0 || id > ids[i - 1])
  result.shards = [...new Set(Array.from(ids, (id) => Layout.INSTAGRAM.decode(id).shard))]
  result.json = JSON.stringify({ id: ids[0] }, jsonReplacer) === `{"id":"${ids[0]}"}`
  result.sameObject = shardid.Layout === Layout
  try {
    Layout.TWITTER.decode('12x')
  } catch (err) {
    result.error = err.code
  }
} catch (err) {
  result.failure = String(err && err.stack || err)
}
document.body.dataset.result = JSON.stringify(result)
document.querySelector('output').textContent = JSON.stringify(result)
