// Node's shardid/segments per ID, against the same process's time-sortable nextId(), on the
// server bench.py starts: `node bench/segments/node.mjs <connection string>` (bench.py runs it).
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Generator, Layout } = require('./index.js')
const { denseIds } = require('./segments.js')

// bench.py has grown the tag to segments of 4,000,000 within the growth rule: a synchronous loop of
// a million IDs lets no fetch land, so it must fit in the segments in memory. Run against a new
// tag (2,000 IDs a take) it fails with SEGMENT_UNAVAILABLE.
const ids = await denseIds({ connectionString: process.argv[2], tag: 'node', schema: 'seg', minSize: 4_000_000, maxSize: 4_000_000, targetMs: 1_000 })
// A layout whose cap (4 M IDs a millisecond) a loop never reaches: the per-call cost.
const generator = new Generator({ layout: new Layout({ epochMs: 0, timeBits: 41, shardBits: 0, sequenceBits: 22 }), shard: 0 })
const N = 1_000_000
const rounds = { 'shardid segments nextId()': [], 'shardid segments nextIds(1000), per ID': [], 'shardid Generator.nextId() (time-sortable)': [] }
let sink = 0n
for (let r = 0; r < 5; r++) {
  let t = process.hrtime.bigint()
  for (let i = 0; i < N; i++) sink ^= ids.nextId()
  rounds['shardid segments nextId()'].push(Number(process.hrtime.bigint() - t) / N)
  await ids.nextIdsAsync(1) // lets the prefetch land between rounds, as a service's event loop would
  t = process.hrtime.bigint()
  for (let i = 0; i < N / 1000; i++) sink ^= (await ids.nextIdsAsync(1000))[999]
  rounds['shardid segments nextIds(1000), per ID'].push(Number(process.hrtime.bigint() - t) / N)
  t = process.hrtime.bigint()
  for (let i = 0; i < N; i++) sink ^= generator.nextId()
  rounds['shardid Generator.nextId() (time-sortable)'].push(Number(process.hrtime.bigint() - t) / N)
}
const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]
console.log(`\nNode: ns per ID (median of 5 rounds of ${N.toLocaleString()})`)
for (const [name, v] of Object.entries(rounds)) console.log(`  ${name.padEnd(46)} ${median(v).toFixed(1).padStart(8)}`)
const dense = median(rounds['shardid segments nextId()'])
console.log(`  segments nextId / Generator.nextId = ${(dense / median(rounds['shardid Generator.nextId() (time-sortable)'])).toFixed(2)} (at most 1)`)
console.log(`  segments fetched: ${ids.fetches}${sink === 1n ? '' : ''}`)
await ids.close()
