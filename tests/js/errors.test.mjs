// The one error contract, for the Node addon and the WebAssembly module alike: every kind of
// the core's table (tests/vectors/errors.json) is known, thrown with its code, its fields in
// camelCase and the core's message, and recognised by `instanceof ShardIdError`.
import test from 'node:test'
import assert from 'node:assert/strict'
import { shardid, vectors } from './load.mjs'

const { Layout, Generator, ShardIdError } = shardid
const kinds = vectors('errors.json').kinds

test('ShardIdError knows every kind of the core, in order of number', () => {
  assert.deepEqual(ShardIdError.codes, kinds.map((k) => k.code))
  assert.ok(kinds.length >= 18)
})

test('instanceof ShardIdError: true for every error shardid throws, false for others', () => {
  for (const call of [() => Layout.TWITTER.decode(-1n), () => Layout.INSTAGRAM.decode(2n ** 63n),
    () => new Generator({ layout: null, shard: 1 }), () => Layout.TWITTER.compose(0, 0, 0)]) {
    assert.throws(call, (err) => err instanceof ShardIdError && err instanceof Error)
  }
  assert.equal(new Error('x') instanceof ShardIdError, false)
  assert.equal(Object.assign(new Error('x'), { code: 'ENOENT' }) instanceof ShardIdError, false)
  assert.equal(null instanceof ShardIdError, false)
  assert.throws(() => new ShardIdError(), TypeError)
})

test('a core error carries its kind\'s fields in camelCase, as bigints, and the core\'s message', () => {
  const kind = kinds.find((k) => k.code === 'SHARD_OUT_OF_RANGE')
  assert.throws(() => Layout.TWITTER.compose(Date.now(), 5000, 0), (err) => {
    assert.ok(err instanceof RangeError)
    assert.equal(err.code, kind.code)
    assert.equal(err.shard, 5000n)
    assert.equal(err.max, 1023n)
    assert.equal(err.message, 'shard 5000 is out of range: the layout holds 0..=1023')
    return true
  })
  assert.throws(() => Layout.TWITTER.decode(2n ** 63n), (err) => err.code === 'INVALID_ID' && err.id === 2n ** 63n &&
    err.message === '9223372036854775808 is not a valid ID for this layout')
  // The generator's state is a plain Error, with its time as a bigint.
  const g = new Generator({ layout: new Layout({ epochMs: 0, timeBits: 50, shardBits: 1, sequenceBits: 1 }), shard: 0 })
  g.nextIdAt(1000)
  g.nextIdAt(1000)
  assert.throws(() => g.nextIdAt(1000), (err) => !(err instanceof RangeError) && err.code === 'SEQUENCE_EXHAUSTED' &&
    err.retryAtMs === 1001n && err.message === 'sequence exhausted for this time unit; retry at 1001 ms')
})

test('layout errors say why, with the reason as a field', () => {
  assert.throws(() => new Layout({ epochMs: 0, timeBits: 0, shardBits: 1, sequenceBits: 1 }), (err) =>
    err.code === 'INVALID_LAYOUT' && err.reason === 'the time field needs at least 1 bit' &&
    err.message === 'invalid layout: the time field needs at least 1 bit')
  assert.throws(() => new Layout({ epochMs: 0, timeBits: 8, shardBits: 55, sequenceBits: 1 }), (err) =>
    err.code === 'INVALID_LAYOUT' && /do not fit JavaScript numbers/.test(err.reason))
})

test('INVALID_ARGUMENT names the argument and the reason', () => {
  assert.throws(() => new Generator({ layout: 'INSTAGRAM', shard: 1 }), (err) =>
    err instanceof TypeError && err.code === 'INVALID_ARGUMENT' && err.argument === 'options.layout' &&
    err.message === `${err.argument} ${err.reason}`)
})
