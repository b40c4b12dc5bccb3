// Cached lookups in Node's shardid/dictionary, run by bench/dictionary/bench.py against its
// server (topic "latency", filled there): `node node.mjs <url>`.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Dictionary } = require('./dictionary.js')

const words = new Dictionary({ connectionString: process.argv[2], topic: 'latency' })
const values = []
for (let k = 0; k < 100; k++) for (let i = 0; i < 100; i++) values.push(`latency-${k}-${i}`)
for (let s = 0; s < values.length; s += 1000) await words.ids(values.slice(s, s + 1000))

const rates = []
const batchRates = []
for (let round = 0; round < 3; round++) {
  let t0 = process.hrtime.bigint()
  for (let r = 0; r < 20; r++) for (const v of values) await words.id(v)
  rates.push((values.length * 20) / (Number(process.hrtime.bigint() - t0) / 1e9))
  t0 = process.hrtime.bigint()
  for (let s = 0; s < values.length; s += 100) await words.ids(values.slice(s, s + 100))
  batchRates.push(values.length / (Number(process.hrtime.bigint() - t0) / 1e9))
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (x) => Math.round(x).toLocaleString('en-US')
console.log(`  Node await Dictionary.id(value):      ${fmt(median(rates)).padStart(12)} lookups/s (range ${fmt(Math.min(...rates))}-${fmt(Math.max(...rates))}; target >= 1,000,000)`)
console.log(`  Node await Dictionary.ids(100), per:  ${fmt(median(batchRates)).padStart(12)} lookups/s`)
await words.close()
