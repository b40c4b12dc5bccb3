// Node's serials per call against its dense nextId() on the server bench.py starts:
// `node bench/serials/node.mjs <connection string> <format> <zone>` (bench.py runs it).
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { denseIds, serials, SerialFormat } = require('./segments.js')

const [connectionString, format, zone] = process.argv.slice(2)
const BIG = 4_000_000
const ids = await denseIds({ connectionString, tag: 'dense_node', minSize: BIG, maxSize: BIG, targetMs: 1_000 })
const s = await serials({ connectionString, tag: 'ser_node', format, zone, minSize: BIG, maxSize: BIG, targetMs: 1_000 })
const f = new SerialFormat(format, zone)
const sample = await s.nextSerialAsync()
const N = 1_000_000
const rounds = { 'Node dense nextId()': [], 'Node nextSerial()': [], 'Node SerialFormat.parse()': [] }
let sink = 0
for (let r = 0; r < 5; r++) {
  let t = process.hrtime.bigint()
  for (let i = 0; i < N; i++) sink ^= Number(ids.nextId() & 1n)
  rounds['Node dense nextId()'].push(Number(process.hrtime.bigint() - t) / N)
  t = process.hrtime.bigint()
  for (let i = 0; i < N; i++) sink ^= s.nextSerial().length
  rounds['Node nextSerial()'].push(Number(process.hrtime.bigint() - t) / N)
  t = process.hrtime.bigint()
  for (let i = 0; i < N; i++) sink ^= f.parse(sample).period.length
  rounds['Node SerialFormat.parse()'].push(Number(process.hrtime.bigint() - t) / N)
  await new Promise((resolve) => setTimeout(resolve, 100)) // lets the prefetches land, as a service's event loop would
}
const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]
console.log(`\nNode: ns per call (median of 5 rounds of ${N.toLocaleString()})`)
for (const [name, v] of Object.entries(rounds)) console.log(`  ${name.padEnd(38)} ${median(v).toFixed(1).padStart(8)}`)
const base = median(rounds['Node dense nextId()'])
console.log(`  nextSerial / nextId = ${(median(rounds['Node nextSerial()']) / base).toFixed(2)} (at most 3)`)
console.log(`  parse / nextId      = ${(median(rounds['Node SerialFormat.parse()']) / base).toFixed(2)} (at most 3)${sink === -1 ? '' : ''}`)
await ids.close()
await s.close()
