// shardid's Node addon against its peers, in one run: `scripts/bench-node.sh`.
//
// Generation: median over bursts of 1000 calls, each right after a millisecond boundary (below
// the Twitter layout's 4096 IDs per ms, so nobody has to wait). Batches: one nextIds(4000)
// per millisecond. Decoding: median over runs of 1,000,000 calls. Duplicates: 200,000 IDs made
// flat out by each library (above the cap: @sapphire/snowflake repeats IDs there).
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Generator, Layout } = require('./index.js')
const { Snowflake: Sapphire } = require('@sapphire/snowflake')
const { Snowflake: NodejsSnowflake } = require('nodejs-snowflake')
const FlakeId = require('flake-idgen')
const { v7: uuidv7 } = require('uuid')

const TWITTER_EPOCH = 1288834974657
const BURST = 1000
const ROUNDS = 400

function nextMillisecond() {
  const start = Date.now()
  while (Date.now() === start);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** Median ns per call over bursts of `burst` calls that each start on a fresh millisecond. */
function perCall(make, burst = BURST, rounds = ROUNDS) {
  // Warm up (and let the JIT settle). Flat out this runs above the cap, where flake-idgen
  // throws once a millisecond's sequence is used up: that is not what is measured here.
  for (let i = 0; i < 20_000; i++) {
    try {
      make()
    } catch {
      nextMillisecond()
    }
  }
  const samples = []
  let sink
  for (let r = 0; r < rounds; r++) {
    nextMillisecond()
    const start = process.hrtime.bigint()
    for (let i = 0; i < burst; i++) sink = make()
    samples.push(Number(process.hrtime.bigint() - start) / burst)
  }
  globalThis.sink = sink
  return median(samples)
}

function perCallFlat(fn, n = 1_000_000, rounds = 15) {
  for (let i = 0; i < 200_000; i++) fn()
  const samples = []
  let sink
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < n; i++) sink = fn()
    samples.push(Number(process.hrtime.bigint() - start) / n)
  }
  globalThis.sink = sink
  return median(samples)
}

/** Duplicates among `n` IDs made flat out, and how many calls threw instead of returning. */
function duplicates(make, n = 200_000) {
  const ids = []
  let threw = 0
  for (let i = 0; i < n; i++) {
    try {
      ids.push(make())
    } catch {
      threw++
    }
  }
  const key = (x) => (Buffer.isBuffer(x) ? x.toString('hex') : String(x))
  const dups = ids.length - new Set(ids.map(key)).size
  return threw ? `${dups} (and ${threw} calls threw: the sequence ran out)` : `${dups}`
}

const shardid = new Generator({ layout: Layout.TWITTER, shard: 1 })
const sapphire = new Sapphire(BigInt(TWITTER_EPOCH))
const nodejsSnowflake = new NodejsSnowflake({ custom_epoch: TWITTER_EPOCH, instance_id: 1 })
const flake = new FlakeId({ id: 1, epoch: TWITTER_EPOCH })

const makers = {
  'shardid nextId()': () => shardid.nextId(),
  'shardid nextIdString()': () => shardid.nextIdString(),
  '@sapphire/snowflake generate()': () => sapphire.generate({ workerId: 1n }),
  'nodejs-snowflake getUniqueID()': () => nodejsSnowflake.getUniqueID(),
  'flake-idgen next()': () => flake.next(),
  'uuid v7()': () => uuidv7(),
}
const results = {}
for (const [name, make] of Object.entries(makers)) results[name] = perCall(make)
results['shardid nextIds(4000), per ID'] = perCall(() => shardid.nextIds(4000), 1) / 4000

const id = shardid.nextId()
results['shardid Layout.TWITTER.decode(id)'] = perCallFlat(() => Layout.TWITTER.decode(id))
results['@sapphire/snowflake deconstruct(id)'] = perCallFlat(() => sapphire.deconstruct(id))
results['shardid decode(id).date (a Date made)'] = perCallFlat(() => Layout.TWITTER.decode(id).date)

const width = Math.max(...Object.keys(results).map((k) => k.length))
console.log(`${'benchmark'.padEnd(width)}  ns per ID (median)`)
for (const [name, ns] of Object.entries(results)) console.log(`${name.padEnd(width)}  ${ns.toFixed(1).padStart(8)}`)

console.log('\nDuplicates in 200,000 IDs made flat out (above the cap):')
for (const name of ['shardid nextId()', '@sapphire/snowflake generate()', 'nodejs-snowflake getUniqueID()', 'flake-idgen next()', 'uuid v7()']) {
  console.log(`  ${name}: ${duplicates(makers[name])}`)
}

const r = results
console.log('\nRatios (targets in parentheses):')
console.log(`  nextId / nodejs-snowflake        = ${(r['shardid nextId()'] / r['nodejs-snowflake getUniqueID()']).toFixed(2)} (at most 0.7)`)
console.log(`  nextIds(4000) per ID             = ${r['shardid nextIds(4000), per ID'].toFixed(1)} ns (at most 15)`)
console.log(`  decode / sapphire deconstruct    = ${(r['shardid Layout.TWITTER.decode(id)'] / r['@sapphire/snowflake deconstruct(id)']).toFixed(2)} (at most 1)`)
