// Node's side of bench/lease/bench.py: `node node.mjs <connection string> <rounds>`; prints one
// JSON line of median ns per ID over bursts of 1,000 right after a millisecond boundary.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Generator, Layout } = require('./index.js')
const { lease } = require('./postgres.js')

const [connectionString, roundsText] = process.argv.slice(2)
const rounds = Number(roundsText)
const BURST = 1000

const nextMillisecond = () => {
  const start = Date.now()
  while (Date.now() === start);
}

async function perCall(make, n) {
  const samples = []
  for (let r = 0; r < n; r++) {
    nextMillisecond()
    const start = process.hrtime.bigint()
    for (let i = 0; i < BURST; i++) await make()
    samples.push(Number(process.hrtime.bigint() - start) / BURST)
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]
}

const gen = new Generator({ layout: Layout.TWITTER, shard: 901 })
const held = await lease({ layout: Layout.TWITTER, connectionString, shards: [16, 24], table: 'bench_leases' })
const results = { 'gen.nextId()': [], 'await gen.nextId()': [], 'await lease.nextId()': [] }
for (let r = 0; r < 3; r++) {
  results['gen.nextId()'].push(await perCall(() => gen.nextId(), rounds / 3))
  results['await gen.nextId()'].push(await perCall(async () => gen.nextId(), rounds / 3))
  results['await lease.nextId()'].push(await perCall(() => held.nextId(), rounds / 3))
}
await held.close()
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]
console.log(JSON.stringify(Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]))))
