// Public IDs in Node: shardid's PublicIds against the same addon's Layout.decode (the target:
// encode and decode at most 2x it) and against sqids (npm `sqids`, the short-ID library users
// compare with; it encodes without hiding: no key), in one run: `scripts/bench-node.sh
// public_ids`. sqids takes numbers up to 2^53 - 1 only, so every library gets the same 1,000
// consecutive IDs from 2^52 (valid IDs of Instagram's layout too); shardid takes them as
// bigints, as it gives them. Every function runs once per round, in turn (21 rounds of
// 500,000 calls; sqids 20,000): medians of the rounds and of their ratios, ns per call.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Layout, PublicIds } = require('./index.js')
const Sqids = require('sqids').default

const KEY = new TextEncoder().encode('benchmark key 16')
const FIRST = 2n ** 52n
const ids = Array.from({ length: 1000 }, (_, i) => FIRST + BigInt(i))
const numbers = ids.map(Number)

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

/** ns per call of `fn(i)` over one run of `n` calls, `i` cycling over 0..999. */
function run(fn, n) {
  let sink
  const start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) sink = fn(i % 1000)
  globalThis.sink = sink
  return Number(process.hrtime.bigint() - start) / n
}

// Every function is timed once per round, in turn, so that a shared machine's drift falls on
// all of them alike; the figures are medians over the rounds, and each ratio the median of
// the rounds' ratios.
const BASE = 'shardid Layout.INSTAGRAM.decode(id)'
const fns = {}
fns[BASE] = (i) => Layout.INSTAGRAM.decode(ids[i])
fns['shardid Layout.INSTAGRAM.validateId(id) (bigint out)'] = (i) => Layout.INSTAGRAM.validateId(ids[i])
for (const encoding of ['base32', 'base58']) {
  const pub = new PublicIds({ key: KEY, prefix: 'note', encoding })
  const texts = ids.map((id) => pub.encode(id))
  fns[`shardid PublicIds.encode (${encoding})`] = (i) => pub.encode(ids[i])
  fns[`shardid PublicIds.decode (${encoding})`] = (i) => pub.decode(texts[i])
}
const sqids = new Sqids()
const sqidsTexts = numbers.map((n) => sqids.encode([n]))
if (sqidsTexts.some((t, i) => sqids.decode(t)[0] !== numbers[i])) throw new Error('sqids did not round-trip')
const slow = { 'sqids encode([id])': (i) => sqids.encode([numbers[i]]), 'sqids decode(text)[0]': (i) => sqids.decode(sqidsTexts[i])[0] }
Object.assign(fns, slow)

const ROUNDS = 21
const samples = Object.fromEntries(Object.keys(fns).map((k) => [k, []]))
for (const [name, fn] of Object.entries(fns)) run(fn, name in slow ? 20_000 : 200_000) // warm up
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, fn] of Object.entries(fns)) samples[name].push(run(fn, name in slow ? 20_000 : 500_000))
}

const width = Math.max(...Object.keys(fns).map((k) => k.length))
console.log(`${'benchmark'.padEnd(width)}  ns per call (median of ${ROUNDS} rounds)   / Layout.decode (median of the rounds' ratios)`)
const ratio = (name, base = BASE) => median(samples[name].map((v, r) => v / samples[base][r]))
for (const name of Object.keys(fns)) {
  console.log(`${name.padEnd(width)}  ${median(samples[name]).toFixed(1).padStart(9)}   ${ratio(name).toFixed(2).padStart(8)}`)
}
console.log('\nRatios (targets in parentheses):')
for (const encoding of ['base32', 'base58']) {
  for (const op of ['encode', 'decode']) {
    console.log(`  PublicIds.${op} (${encoding}) / Layout.decode = ${ratio(`shardid PublicIds.${op} (${encoding})`).toFixed(2)} (at most 2)`)
  }
}
console.log(`  sqids encode / PublicIds.encode (base32)   = ${ratio('sqids encode([id])', 'shardid PublicIds.encode (base32)').toFixed(1)}x (above 1)`)
console.log(`  sqids decode / PublicIds.decode (base32)   = ${ratio('sqids decode(text)[0]', 'shardid PublicIds.decode (base32)').toFixed(1)}x (above 1)`)
