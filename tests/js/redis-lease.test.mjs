// shardid/redis's lease refuses what it cannot use before it connects, with the codes of every
// lease (INVALID_ARGUMENT naming the option, DATABASE_UNREACHABLE for a server that is not
// there), always as a rejection of the returned promise. No server: the leases on real
// redis-servers, beside asyncio Python's, are tests/python/test_redis_lease.py's.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const addonOnly = { skip: process.env.SHARDID_JS_MODULE ? 'Redis is in the Node addon only' : false }
const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))

test('a Redis lease refuses bad options before connecting, as a rejection', addonOnly, async () => {
  const { lease, DEFAULT_TTL_MS } = require('./redis.js')
  const { Layout, ShardIdError } = require('./index.js')
  assert.equal(DEFAULT_TTL_MS, 10_000)
  const layout = Layout.INSTAGRAM
  // Port 1: nothing listens there, so an option checked only after connecting would show up
  // as DATABASE_UNREACHABLE instead of its INVALID_ARGUMENT.
  const url = 'redis://127.0.0.1:1'
  const cases = [
    [undefined, 'lease'],
    [{ layout, shards: [0, 2] }, 'lease'], // no url
    [{ layout: 'instagram', url, shards: [0, 2] }, 'lease'],
    [{ layout, url, shards: 2 }, 'lease'],
    [{ layout, url: 'postgresql://h/db', shards: [0, 2] }, 'url'],
    [{ layout, url: 'redis://127.0.0.1:notaport', shards: [0, 2] }, 'url'],
    [{ layout, url: 'redis+sentinel://127.0.0.1:26379', shards: [0, 2] }, 'url'], // no master named
    [{ layout, url, shards: [0, 2], ttlMs: 10 }, 'ttlMs'], // the core's range: 1 s to 1 day
    [{ layout, url, shards: [0, 2], ttlMs: 86_400_001 }, 'ttlMs'],
    [{ layout, url, shards: [0, 2], schema: 'a:b' }, 'schema'],
    [{ layout, url, shards: [3, 3] }, 'shards'],
    [{ layout, url, shards: [0, 2 ** 13 + 1] }, 'shards'], // Instagram's 13 shard bits
    [{ layout, url, shards: [-1, 2] }, 'shards'],
    [{ layout, url, shards: [0, 2], kind: 'session' }, 'kind'],
  ]
  for (const [options, argument] of cases) {
    let promise
    assert.doesNotThrow(() => { promise = lease(options) }, `${JSON.stringify(options)}: thrown, not rejected`)
    await assert.rejects(promise, (err) => {
      assert.ok(err instanceof ShardIdError, `${JSON.stringify(options)}: ${err}`)
      assert.equal(err.code, 'INVALID_ARGUMENT', `${JSON.stringify(options)}: ${err.code} ${err.message}`)
      assert.equal(err.argument, argument, `${JSON.stringify(options)}: ${err.message}`)
      return true
    })
  }
  // Valid options, no server: DATABASE_UNREACHABLE, ioredis's error as its cause.
  await assert.rejects(lease({ layout, url, shards: [0, 2], ttlMs: 1_000 }), (err) => {
    assert.equal(err.code, 'DATABASE_UNREACHABLE', err.message)
    assert.ok(err.cause, 'the driver error as the cause')
    return true
  })
})

test("a claim or renewal by a host whose clock is too far ahead of the server's is the core's clock skew", addonOnly, () => {
  // The core reads this host's clock when the claim is made and compares it with the server's
  // clock the claim script returns (its reply's last value), by the SQL leases' rule (issue 57);
  // redis.js then sends the release and throws CLOCK_SKEW. No server: replies as the script
  // makes them, `[shard, ceiling, fencing token, held, now]`.
  const native = require('./native.generated.js')
  const { Layout } = require('./index.js')
  const l = Layout.INSTAGRAM
  const layout = native.layoutNew(l.epochMs, l.unitMs, l.timeBits, l.shardBits, l.sequenceBits, l.order, l.signed)
  const steps = new native.RedisLeaseSteps('shardid', layout, 0, 4, 10_000, 'test')
  const claimed = (serverBehindMs) => {
    steps.claim('rid')
    return steps.claimed(['2', '-1', '5', '0', String(Date.now() - serverBehindMs)])
  }
  const refused = claimed(3_000)
  assert.equal(refused.claimed, 'clockSkew', JSON.stringify(refused))
  assert.equal(refused.shard, 2)
  assert.equal(refused.maxMs, 2_000)
  assert.ok(refused.aheadMs > 2_000 && refused.aheadMs <= 3_100, JSON.stringify(refused))
  for (const behind of [1_000, -3_000]) {
    const taken = claimed(behind)
    assert.deepEqual([taken.claimed, taken.shard, taken.fencingToken], ['shard', 2, '5'], JSON.stringify(taken))
  }
  // A renewal's reply, `[1, now]`: the lease stops (database-lease.js's heartbeat throws
  // CLOCK_SKEW from then on) when the clock moved too far ahead since the claim.
  const renewed = (serverBehindMs) => {
    steps.renew('rid', 2)
    return steps.clockAhead(['1', String(Date.now() - serverBehindMs)])
  }
  const ahead = renewed(3_000)
  assert.ok(ahead > 2_000 && ahead <= 3_100, String(ahead))
  assert.equal(renewed(1_000), null)
  steps.renew('rid', 2)
  assert.equal(steps.clockAhead(['0']), null, 'a lost lease is not skew')
})
