// Generator.stats(): the core's counters as bigints, camelCase names from the core's table,
// equal to what a scripted clock made happen (the Node addon).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { shardid } from './load.mjs'

const { Layout, Generator } = shardid
const T = 1_700_000_000_000n
// The WebAssembly module leaves the counters out (its size budget): stats() says so.
const isWasm = !shardid.threadsShareState

test('the WebAssembly build refuses stats() clearly', { skip: !isWasm }, () => {
  const g = new Generator({ layout: Layout.SONYFLAKE, shard: 4300 })
  assert.throws(() => g.stats(), (err) => err.code === 'UNSUPPORTED' && /size budget/.test(err.message))
})

test('stats() names the core table\'s counters, in camelCase, as bigints', { skip: isWasm }, () => {
  const g = new Generator({ layout: Layout.SONYFLAKE, shard: 4301 })
  const stats = g.stats()
  assert.deepEqual(Object.keys(stats), ['ids', 'waits', 'borrowedUnits', 'clockBackwards', 'clockBackwardsRefused', 'tickerStarts'])
  for (const v of Object.values(stats)) assert.equal(typeof v, 'bigint')
  assert.equal(stats.ids, 0n)
})

test('borrowed units, steps back and refusals are counted exactly', { skip: isWasm }, () => {
  // Sonyflake: 256 IDs per 10 ms unit; one unit may be borrowed.
  const g = new Generator({ layout: Layout.SONYFLAKE, shard: 4302, maxBorrowUnits: 1 })
  assert.equal(g.nextIdsAt(T, 320).length, 320) // the unit, then 64 of the next, borrowed
  for (let k = 1n; k <= 7n; k++) {
    g.nextIdAt(T + 1000n * k)
    g.nextIdAt(T + 1000n * k - 50n) // 5 units behind, within the tolerance
  }
  for (let i = 0; i < 3; i++) {
    assert.throws(() => g.nextIdAt(T - 5000n), (err) => err.code === 'CLOCK_MOVED_BACKWARDS')
  }
  const stats = g.stats()
  assert.equal(stats.ids, 334n)
  assert.equal(stats.borrowedUnits, 1n)
  assert.equal(stats.clockBackwards, 7n)
  assert.equal(stats.clockBackwardsRefused, 3n)
  assert.equal(stats.waits, 0n, 'the At calls never wait')
  // Every handle on the layout and shard reports the same state.
  assert.deepEqual(new Generator({ layout: Layout.SONYFLAKE, shard: 4302 }).stats(), stats)
})

test('every ID is counted', { skip: isWasm }, () => {
  const g = new Generator({ layout: Layout.TWITTER, shard: 1002 })
  for (let i = 0; i < 1000; i++) g.nextId()
  g.nextIds(5000)
  assert.equal(g.stats().ids, 6000n)
})
