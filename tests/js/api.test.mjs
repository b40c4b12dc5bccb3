// The JS API: bad input per kind with its `code`, 64-bit safety, generators and workers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'

import { shardid, modulePath } from './load.mjs'

const { Layout, Generator } = shardid
const DISCORD_DOCS_ID = 175928847299117063n

function throwsCode(fn, code, cls) {
  assert.throws(fn, (err) => {
    assert.equal(err.code, code, `${err.message}`)
    if (cls) assert.ok(err instanceof cls, `${err.constructor.name}: ${err.message}`)
    return true
  })
}

test('decode returns numbers, a lazy date, and takes bigint, strings and safe numbers', () => {
  const p = Layout.DISCORD.decode(DISCORD_DOCS_ID)
  assert.deepEqual([p.timestampMs, p.shard, p.sequence], [1462015105796, 32, 7])
  assert.equal(p.date.toISOString(), '2016-04-30T11:18:25.796Z')
  assert.deepEqual(Layout.DISCORD.decode('175928847299117063'), p)
  assert.deepEqual(Layout.TWITTER.decode(5), Layout.TWITTER.decode(5n))
  // Leading zeros within 20 digits, as in every language (the core's parse_decimal).
  assert.deepEqual(Layout.DISCORD.decode('00175928847299117063'), p)
  throwsCode(() => Layout.DISCORD.decode('000175928847299117063'), 'INVALID_ID', RangeError)
  // JSON keeps every field, the date as its ISO string.
  assert.equal(JSON.stringify(p), '{"timestampMs":1462015105796,"shard":32,"sequence":7,"date":"2016-04-30T11:18:25.796Z"}')
})

test('IDs are never rounded or wrapped', () => {
  throwsCode(() => Layout.DISCORD.decode(175928847299117063), 'INVALID_ID', RangeError) // unsafe number
  throwsCode(() => Layout.DISCORD.decode(-1n), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.DISCORD.decode(2n ** 64n), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.DISCORD.decode(2n ** 64n + 5n), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.TWITTER.decode(2n ** 63n), 'INVALID_ID', RangeError)
  for (const bad of ['', '-1', '+1', ' 1', '1e3', '0x10', '1_000', '18446744073709551616', '١٢']) {
    throwsCode(() => Layout.DISCORD.decode(bad), 'INVALID_ID', RangeError)
  }
  throwsCode(() => Layout.DISCORD.decode(1.5), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.DISCORD.decode(-3), 'INVALID_ID', RangeError)
  // A value of the wrong type is INVALID_ARGUMENT, whatever the argument (core/src/args.rs).
  for (const bad of [true, null, undefined, {}, [], Symbol('x')]) {
    throwsCode(() => Layout.DISCORD.decode(bad), 'INVALID_ARGUMENT', TypeError)
  }
})

test('one rule per argument: the kind, the fields and the advice fit the argument', () => {
  const g = new Generator({ layout: Layout.TWITTER, shard: 1 })
  // A shard given as text is the wrong type, not out of range.
  assert.throws(() => new Generator({ layout: Layout.TWITTER, shard: '5' }), (err) =>
    err instanceof TypeError && err.code === 'INVALID_ARGUMENT' && err.argument === 'shard' &&
    err.message === 'shard must be a bigint or a safe integer, not a string')
  // A fraction is not an integer; a shard or a count is never told to pass a decimal string.
  assert.throws(() => Layout.TWITTER.compose(Date.now(), 1.5, 0), (err) =>
    err instanceof RangeError && err.code === 'SHARD_OUT_OF_RANGE' && err.reason === 'is not an integer' &&
    err.message === 'shard is not an integer')
  assert.throws(() => g.nextIds(1.5), (err) => err.code === 'INVALID_ARGUMENT' && err.message === 'n is not an integer')
  assert.throws(() => Layout.TWITTER.compose(Date.now(), 2 ** 60, 0), (err) =>
    err.code === 'SHARD_OUT_OF_RANGE' && !/string/.test(err.message) && /bigint/.test(err.message))
  // An ID may come as text, and its advice says so; the error keeps the value as given.
  assert.throws(() => Layout.TWITTER.decode(2 ** 60), (err) =>
    err.code === 'INVALID_ID' && /decimal string/.test(err.message) && err.id === 2 ** 60)
  assert.throws(() => Layout.TWITTER.decode(' 12'), (err) =>
    err.code === 'INVALID_ID' && err.id === ' 12' && err.message === 'id is not a decimal integer in 0..2^64')
  assert.throws(() => Layout.TWITTER.decode(-1n), (err) => err.id === -1n && err.message === 'id is negative')
  // Times: before 1970 is before the epoch, an invalid Date or a fraction is an argument error.
  assert.throws(() => Layout.TWITTER.minIdAt(new Date(-1)), (err) => err.code === 'TIMESTAMP_BEFORE_EPOCH')
  assert.throws(() => Layout.TWITTER.minIdAt(new Date(NaN)), (err) =>
    err.code === 'INVALID_ARGUMENT' && err.message === 'timestamp is an invalid date')
  assert.throws(() => Layout.TWITTER.minIdAt(1.5), (err) => err.code === 'INVALID_ARGUMENT')
})

test('bad arguments per kind', () => {
  const t = Layout.TWITTER
  throwsCode(() => t.compose(t.epochMs, 1024, 0), 'SHARD_OUT_OF_RANGE', RangeError)
  throwsCode(() => t.compose(t.epochMs, -1, 0), 'SHARD_OUT_OF_RANGE', RangeError)
  throwsCode(() => t.compose(t.epochMs, 0, 4096), 'SEQUENCE_OUT_OF_RANGE', RangeError)
  throwsCode(() => t.compose(t.epochMs - 1, 0, 0), 'TIMESTAMP_BEFORE_EPOCH', RangeError)
  throwsCode(() => t.compose(2n ** 64n - 1n, 0, 0), 'TIMESTAMP_PAST_EXPIRY', RangeError)
  throwsCode(() => t.minIdAt(new Date(0)), 'TIMESTAMP_BEFORE_EPOCH', RangeError)
  throwsCode(() => t.minIdAt(new Date(NaN)), 'INVALID_ARGUMENT', RangeError)
  throwsCode(() => t.minIdAt('2024'), 'INVALID_ARGUMENT', TypeError)
  throwsCode(() => t.shardForKey(5, 0), 'INVALID_SHARD_COUNT', RangeError)
  throwsCode(() => Layout.DISCORD.scatterDecimal(18446744073709551609n), 'SCATTER_OVERFLOW', RangeError)
  throwsCode(() => new Layout({ epochMs: 0, timeBits: 60, shardBits: 10, sequenceBits: 10 }), 'INVALID_LAYOUT', RangeError)
  throwsCode(() => new Layout({ epochMs: 0, timeBits: 41, shardBits: 10, sequenceBits: 12, order: 'up' }), 'INVALID_LAYOUT', RangeError)
  throwsCode(() => new Generator({ layout: Layout.INSTAGRAM, shard: 8192 }), 'SHARD_OUT_OF_RANGE', RangeError)
  throwsCode(() => new Generator({ layout: 'instagram', shard: 1 }), 'INVALID_ARGUMENT', TypeError)
  assert.equal(t.minIdAt(new Date(1700000000000)), t.minIdAt(1700000000000))
})

test('generator state errors are plain Errors with codes', () => {
  const tiny = new Layout({ epochMs: 1000, timeBits: 8, shardBits: 2, sequenceBits: 2 })
  const g = new Generator({ layout: tiny, shard: 3, backwardsToleranceMs: 5 })
  for (let i = 0; i < 4; i++) g.nextIdAt(1100)
  throwsCode(() => g.nextIdAt(1100), 'SEQUENCE_EXHAUSTED', Error)
  throwsCode(() => g.nextIdAt(1094), 'CLOCK_MOVED_BACKWARDS', Error)
  throwsCode(() => g.nextId(), 'TIMESTAMP_PAST_EXPIRY', RangeError)
})

test('one generator, many IDs: bigint, strings, batches, no duplicates', () => {
  const g = new Generator({ layout: Layout.TWITTER, shard: 77 })
  const ids = [g.nextId(), BigInt(g.nextIdString()), ...g.nextIds(20000)]
  assert.equal(typeof ids[0], 'bigint')
  assert.equal(new Set(ids).size, ids.length)
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1])
  assert.ok(ids.every((id) => Layout.TWITTER.decode(id).shard === 77))
  // A second Generator for the same shard shares the state.
  const again = new Generator({ layout: Layout.TWITTER, shard: 77 })
  assert.ok(again.nextId() > ids.at(-1))
})

test('worker threads: one shard shared (Node addon) or one shard each (WebAssembly)', async () => {
  // The addon is loaded once per process: workers on one shard share its state. A WebAssembly
  // instance has its own memory: workers must each have their own shard.
  const shared = shardid.threadsShareState
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { Layout, Generator } = require(workerData.module)
    const g = new Generator({ layout: Layout.INSTAGRAM, shard: workerData.shard })
    const ids = new BigUint64Array(100000)
    for (let i = 0; i < 50000; i++) ids[i] = g.nextId()
    ids.set(g.nextIds(50000), 50000)
    parentPort.postMessage(ids)
  `
  const runs = Array.from({ length: 4 }, (_, i) => new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { module: modulePath, shard: shared ? 99 : 100 + i } })
    w.once('message', resolve)
    w.once('error', reject)
  }))
  const main = new Generator({ layout: Layout.INSTAGRAM, shard: 99 }).nextIds(50000)
  const all = [...main]
  for (const ids of await Promise.all(runs)) all.push(...ids)
  assert.equal(all.length, 450000)
  assert.equal(new Set(all).size, all.length)
})

test('both builds export the same API', () => {
  assert.deepEqual(Object.keys(shardid).sort(), ['Generator', 'Layout', 'LeasedGenerator', 'Parts', 'PublicIds', 'ShardIdError', 'checkPublicId', 'fromUuid', 'jsonReplacer', 'jsonReviver', 'lease', 'nowMs', 'shardFromOrdinal', 'threadsShareState', 'version'])
  const proto = (cls) => Object.getOwnPropertyNames(cls.prototype).sort()
  assert.deepEqual(proto(shardid.Layout), ['compose', 'constructor', 'decode', 'decodeMany', 'equals', 'expiresAt', 'fromUuid', 'gatherBits', 'gatherDecimal', 'maxIdAt', 'minIdAt', 'scatterBits', 'scatterDecimal', 'shardForKey', 'toJSON', 'toUuid', 'toUuidBytes', 'validateId'])
  assert.deepEqual(proto(shardid.Generator), ['constructor', 'nextId', 'nextIdAt', 'nextIdString', 'nextIds', 'nextIdsAsync', 'nextIdsAt', 'stats'])
  assert.deepEqual(proto(shardid.LeasedGenerator), ['close', 'constructor', 'nextId', 'nextIdAt', 'nextIdString', 'nextIds', 'nextIdsAsync', 'shard'])
  assert.deepEqual(Object.keys(shardid.Layout.TWITTER).sort(), ['epochMs', 'expiresAtMs', 'maxId', 'maxSequence', 'maxShard', 'order', 'sequenceBits', 'shardBits', 'signed', 'timeBits', 'unitMs'])
  assert.equal(shardid.version, '0.1.0')
})

test('decodeMany agrees with decode, for arrays of strings and bigints and BigUint64Arrays', () => {
  const g = new Generator({ layout: Layout.SONYFLAKE, shard: 4242 })
  const ids = [...g.nextIds(5000), DISCORD_DOCS_ID]
  const columns = Layout.SONYFLAKE.decodeMany(ids.map(String))
  const fromTyped = Layout.SONYFLAKE.decodeMany(BigUint64Array.from(ids))
  assert.deepEqual(fromTyped, columns)
  ids.forEach((id, i) => {
    const p = Layout.SONYFLAKE.decode(id)
    assert.deepEqual([columns.timestampMs[i], columns.shard[i], columns.sequence[i]], [p.timestampMs, p.shard, p.sequence])
  })
  assert.equal(Layout.TWITTER.decodeMany([]).shard.length, 0)
  throwsCode(() => Layout.TWITTER.decodeMany(['1', '-1']), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.TWITTER.decodeMany('123'), 'INVALID_ARGUMENT', TypeError)
  assert.throws(() => Layout.TWITTER.decodeMany(['1', 'x2']), (err) => err.id === 'x2' && err.argument === 'ids[i]')
})

test('decodeMany of strings refuses bad strings, including ones holding a comma', () => {
  throwsCode(() => Layout.TWITTER.decodeMany(['1', '2,3']), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.TWITTER.decodeMany(['1', '']), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.TWITTER.decodeMany(['1', ' 2']), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.TWITTER.decodeMany([String(2n ** 63n)]), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.DISCORD.decodeMany(['18446744073709551616']), 'INVALID_ID', RangeError)
  throwsCode(() => Layout.DISCORD.decodeMany(['99999999999999999999']), 'INVALID_ID', RangeError)
  assert.equal(Layout.DISCORD.decodeMany(['18446744073709551615']).sequence[0], 4095)
  assert.deepEqual(Array.from(Layout.DISCORD.decodeMany(['175928847299117063', '0']).shard), [32, 0])
})

test('generators for one shard share one state, whatever their options or signedness', () => {
  const signed = new Layout({ epochMs: 1_600_000_000_000, timeBits: 41, shardBits: 10, sequenceBits: 12 })
  const unsigned = new Layout({ epochMs: 1_600_000_000_000, timeBits: 41, shardBits: 10, sequenceBits: 12, signed: false })
  const a = new Generator({ layout: signed, shard: 5 })
  const b = new Generator({ layout: signed, shard: 5, backwardsToleranceMs: 5, maxBorrowUnits: 2 })
  const c = new Generator({ layout: unsigned, shard: 5 })
  const t = 1_700_000_000_000
  const ids = [a.nextIdAt(t), b.nextIdAt(t), c.nextIdAt(t), a.nextIdAt(t)]
  assert.deepEqual(ids.map((id) => signed.decode(id).sequence), [0, 1, 2, 3])
})

test('nowMs, validateId, expiresAt and equals', () => {
  // The generators' clock: the wall clock anchored to a monotonic one, never going back.
  const before = shardid.nowMs()
  const wall = Date.now()
  const after = shardid.nowMs()
  assert.ok(before <= after && Math.abs(before - wall) < 1000, `${before} ${wall} ${after}`)
  const id = new Generator({ layout: Layout.TWITTER, shard: 78 }).nextId()
  assert.equal(Layout.TWITTER.validateId(String(id)), id)
  assert.equal(Layout.INSTAGRAM.expiresAt.toISOString(), '2046-06-27T17:00:49.496Z')
  assert.ok(Layout.TWITTER.equals(new Layout({ epochMs: 1288834974657, timeBits: 41, shardBits: 10, sequenceBits: 12 })))
  assert.ok(!Layout.TWITTER.equals(Layout.DISCORD) && !Layout.TWITTER.equals({}))
})

test('no count kills the process: too many IDs is a RangeError with a code', async () => {
  // In a child, on a signal the test fails: before the bound, nextIds(2 ** 40) aborted Node
  // (a failed allocation) and the WebAssembly build trapped with "unreachable".
  const { execFileSync } = await import('node:child_process')
  const probe = `
    const { Layout, Generator } = require(${JSON.stringify(modulePath)})
    const g = new Generator({ layout: Layout.INSTAGRAM, shard: 1 })
    const seen = []
    for (const n of [2 ** 40, 2 ** 53 - 1, 2n ** 64n - 1n, 2 ** 24 + 1, 2 ** 29]) {
      for (const call of [() => g.nextIds(n), () => g.nextIdsAt(1700000000000n, n)]) {
        try { call(); seen.push('no error') } catch (e) { seen.push(e.constructor.name + ' ' + e.code + ' ' + e.argument + ' ' + e.reason) }
      }
    }
    console.log(JSON.stringify(seen))
  `
  const out = JSON.parse(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8', timeout: 60000 }))
  assert.equal(out.length, 10)
  for (const got of out) assert.equal(got, 'RangeError INVALID_ARGUMENT n must be at most 16777216 IDs per call: ask in batches')
})

test('decimal scatter by 1, 2 or 3 digits; another count is INVALID_ARGUMENT', () => {
  const l = Layout.TWITTER
  assert.equal(l.scatterDecimal(1234567n, 2), 1672345n)
  assert.equal(l.gatherDecimal(1672345n, 2), 1234567n)
  assert.equal(l.scatterDecimal('1234567', 3n), 1567234n)
  assert.equal(l.scatterDecimal(1234567n), 1723456n)
  for (const bad of [0, 4, 2.5, -1, 4n]) throwsCode(() => l.scatterDecimal(1234567n, bad), 'INVALID_ARGUMENT', RangeError)
  throwsCode(() => l.gatherDecimal(1234567n, '2'), 'INVALID_ARGUMENT', TypeError)
})

test('nextIdsAsync makes a large batch without blocking the event loop', async () => {
  const g = new Generator({ layout: Layout.INSTAGRAM, shard: 77 })
  let ticks = 0
  const timer = setInterval(() => { ticks++ }, 1)
  const ids = await g.nextIdsAsync(50000) // ~49 ms of Instagram's layout, 13 chunks
  clearInterval(timer)
  assert.equal(ids.length, 50000)
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1])
  assert.ok(ticks >= 2, `the event loop ran ${ticks} times during the batch`)
  assert.equal((await g.nextIdsAsync(3)).length, 3)
  await assert.rejects(g.nextIdsAsync(2 ** 24 + 1), { code: 'INVALID_ARGUMENT', argument: 'n' })
  await assert.rejects(g.nextIdsAsync(-1), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(g.nextIdsAsync('5'), { code: 'INVALID_ARGUMENT' })
})
