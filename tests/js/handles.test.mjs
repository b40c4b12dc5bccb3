// The native objects the addon hands the package (issue 60, findings 5 and 7):
// - leases, allocators, serials and a lease's counters are owned by their JS objects, not by a
//   fixed table of 4,096 slots that was never freed: 10,000 opened and closed in one process
//   (past 4,096, where the 4,097th failed with "a process holds 2^32 leases");
// - the arrays the addon answers in (decode, the segments' signal, a parsed serial) are kept
//   per instance of the addon, never per thread: two copies of the package in one thread (a
//   cleared require.cache, as Jest's registries make) each read their own answers, also after
//   the other copy was collected (the addon wrote into the freed array before).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

const addonOnly = { skip: process.env.SHARDID_JS_MODULE ? 'native objects are the Node addon\'s' : false }
const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const packageDir = dirname(require.resolve('./package.json'))

// More than twice the old table's 4,096 slots; bounded in time too (~1 s here).
const CYCLES = 10_000
const TIME_LIMIT = { timeout: 120_000 }

function collectGarbage() {
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc')
  for (let i = 0; i < 4; i++) gc()
}

// Collects the objects closed so far and lets their finalizers run (napi runs some on a later
// turn of the event loop): the core's list of live objects, which exporters read and each new
// object's registration sweeps, then holds only what is alive.
async function settle() {
  collectGarbage()
  await new Promise((resolve) => setImmediate(resolve))
}

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'shardid-handles-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

test(`${CYCLES} lock-file leases opened and closed in one process, then one more`, { ...addonOnly, ...TIME_LIMIT }, async (t) => {
  const { Layout, lease } = require('./index.js')
  const directory = scratch(t)
  for (let i = 0; i < CYCLES; i++) {
    if (i % 1000 === 0) await settle()
    const held = lease({ layout: Layout.TWITTER, directory, shards: [0, 1] })
    assert.equal(held.shard, 0) // the one shard: the previous lease gave it back
    held.close()
  }
  const last = lease({ layout: Layout.TWITTER, directory, shards: [0, 1] })
  assert.equal(typeof last.nextId(), 'bigint')
  last.close()
  // Closed is closed, as before: its object still answers, with the core's error.
  assert.throws(() => last.nextId(), (err) => err.code === 'LEASE_LOST' || err.code === 'CLOSED')
})

test(`${CYCLES} allocators, serials, database leases' generators and counters made and closed, as the package makes them`, { ...addonOnly, ...TIME_LIMIT }, async () => {
  const native = require('./native.generated.js')
  const layout = native.layoutPreset('twitter')
  const format = native.serialFormatNew('ORD-{yyyy}{MM}{dd}-{seq:6}', 'UTC')
  for (let i = 0; i < CYCLES; i++) {
    if (i % 1000 === 0) await settle()
    const ids = native.segmentNew(1, 10, 1000, 'seg', 'handles')
    native.segmentUnregister(ids) // what DenseIds' close() does
    const serials = native.serialsNew(format, 'seg', 'handles', 1, 10, 1000, 0)
    native.serialsClose(serials)
    const tally = native.leaseTallyNew(layout, 'shardid_leases')
    const ceiling = native.ceilingNew(layout, 1, 0n, undefined, undefined, undefined, undefined, tally)
    native.ceilingClose(ceiling)
    const claim = native.claimBackend(`handles-test-${i}`)
    native.releaseBackend(claim)
  }
  // Each kind still makes one, and it works.
  const ids = native.segmentNew(1, 10, 1000, 'seg', 'handles')
  native.segmentPrime(ids) // the first fetch is due
  native.segmentFill(ids, '1', '5', '1')
  assert.equal(native.segmentNextId(ids), 1n)
  native.segmentUnregister(ids)
  const tally = native.leaseTallyNew(layout, 'shardid_leases')
  const ceiling = native.ceilingNew(layout, 1, 0n, undefined, undefined, undefined, undefined, tally)
  assert.throws(() => native.ceilingNextId(ceiling), (err) => err.code === 'CEILING_PENDING')
  assert.equal(native.leaseTallyStats(tally)[0], 1n) // one acquisition
  // Anything else is refused as before, with the package's error.
  for (const bad of [0, 7, null, {}, 'x', tally]) {
    assert.throws(() => native.segmentNextId(bad), (err) => err.code === 'INVALID_ARGUMENT' && /is not a shardid DenseIds/.test(err.message))
  }
  assert.throws(() => native.ceilingNextId(ids), (err) => err.code === 'INVALID_ARGUMENT')
})

test('a layout made again is the same entry: making it many times uses up no slot', addonOnly, () => {
  const native = require('./native.generated.js')
  // A layout made again is the same entry: no slot is used up by making one many times.
  const first = native.layoutPreset('twitter')
  for (let i = 0; i < CYCLES; i++) assert.equal(native.layoutPreset('twitter'), first)
})

// Forgets the package's own modules (the .node file too), not its dependencies.
function forgetPackage() {
  for (const key of Object.keys(require.cache)) {
    if (key.startsWith(packageDir + '/') && !key.includes('/node_modules/')) delete require.cache[key]
  }
}

// A second copy of the package in this thread: every module of bindings-node/ (the .node file
// too, so the addon is initialised again: a new napi env) loaded afresh.
function freshCopy() {
  forgetPackage()
  return {
    index: require('./index.js'),
    segments: require('./segments.js'),
  }
}

test('two copies of the package in one thread decode, parse serials and fetch segments each into their own arrays, also after one is collected', addonOnly, async (t) => {
  const a = freshCopy()
  let b = freshCopy()
  assert.notEqual(a.index.Layout, b.index.Layout) // two copies indeed
  const layoutA = a.index.Layout.DISCORD
  const layoutB = b.index.Layout.DISCORD
  const id = layoutA.compose(1_700_000_000_000, 7, 3)
  const idOther = layoutA.compose(1_700_000_000_123, 2, 9)
  const parts = (p) => [p.timestampMs, p.shard, p.sequence]
  // Interleaved: each copy answers its own call.
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(parts(layoutA.decode(id)), [1_700_000_000_000, 7, 3])
    assert.deepEqual(parts(layoutB.decode(idOther)), [1_700_000_000_123, 2, 9])
    assert.deepEqual(parts(layoutA.decode(idOther)), [1_700_000_000_123, 2, 9])
  }
  // A third copy of the JavaScript over copy B's addon (a bundle that duplicates api.js): it
  // reads the array B's instance kept, so neither takes the other's over.
  for (const file of ['index.js', 'api.js']) delete require.cache[join(packageDir, file)]
  const layoutC = require('./index.js').Layout.DISCORD
  assert.notEqual(layoutC, layoutB)
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(parts(layoutB.decode(id)), [1_700_000_000_000, 7, 3])
    assert.deepEqual(parts(layoutC.decode(idOther)), [1_700_000_000_123, 2, 9])
    assert.deepEqual(parts(layoutB.decode(idOther)), [1_700_000_000_123, 2, 9])
  }
  const formatA = new a.segments.SerialFormat('ORD-{yyyy}{MM}{dd}-{seq:6}', 'UTC')
  const formatB = new b.segments.SerialFormat('ORD-{yyyy}{MM}{dd}-{seq:6}', 'UTC')
  assert.equal(formatA.parse('ORD-20261125-000123').number, 123n)
  assert.equal(formatB.parse('ORD-20261126-000456').number, 456n)
  assert.equal(formatA.parse('ORD-20261127-000789').day, 27)

  // Copy A's dense IDs on SQLite with tiny segments: every fetch is signalled to A, though B
  // was loaded after A.
  const file = join(scratch(t), 'ids.db')
  await a.segments.createTag(`sqlite:///${file}`, 'copies')
  const ids = await a.segments.denseIds({ connectionString: `sqlite:///${file}`, tag: 'copies', minSize: 5, maxSize: 5, waitMs: 2000 })
  try {
    const got = []
    for (let i = 0; i < 40; i++) got.push(await ids.nextIdAsync())
    assert.deepEqual(got, Array.from({ length: 40 }, (_, i) => BigInt(i + 1)))
  } finally {
    await ids.close()
  }

  // Copy B dropped and collected: copy A reads its own arrays, never B's freed one.
  b = null
  forgetPackage()
  collectGarbage()
  for (let i = 0; i < 1000; i++) {
    const shard = i % 8
    const p = layoutA.decode(layoutA.compose(1_700_000_000_000 + i, shard, i % 5))
    assert.deepEqual(parts(p), [1_700_000_000_000 + i, shard, i % 5])
  }
  assert.equal(formatA.parse('ORD-20261128-000042').number, 42n)
})

// Last in this file: it fills the process's table of distinct layouts.
test('a process holds 4,096 distinct layouts, and the 4,097th is refused with that number', addonOnly, () => {
  const { Layout } = require('./index.js')
  const made = new Set()
  let refused = null
  for (let i = 0; i <= 4096 && refused === null; i++) {
    try {
      made.add(new Layout({ epochMs: 1_600_000_000_000 + i, timeBits: 41, shardBits: 10, sequenceBits: 12 }))
    } catch (err) {
      refused = err
    }
  }
  // Some distinct layouts may be in the table already (the presets, the suite's own).
  assert.ok(made.size > 4000 && made.size < 4096, `${made.size}`)
  assert.equal(refused?.code, 'INVALID_LAYOUT')
  assert.match(refused.message, /a process holds 4,096 distinct layouts/)
})
