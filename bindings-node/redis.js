'use strict'
// shardid/redis: shard leases through a Redis 7 or Valkey server (issue 57), over ioredis (an
// optional peer dependency). Dense IDs on Redis are shardid/segments' (a `redis://` URL, run by
// dialects/redis.js).
//
// The lease is the SQL leases' driver (database-lease.js: its generator, heartbeat timer,
// ceiling records, retake and close) over the core's lease steps (native.RedisLeaseSteps,
// shardid::redis::lease_steps: the claim, renewal, ceiling record and release scripts with
// their keys and arguments, and the reading of their replies), each script made for the run_id
// of the connection it is sent on, on a connection of Redis's dialect object
// (dialects/redis.js: no reconnection, queue or resend by ioredis itself). Nothing about the
// shards or the IDs is decided here.

const native = require('./native.generated.js')
const { makeError, unreachableError } = require('./errors.js')
const { holdingLoop } = require('./idle.js')
const { Link } = require('./dialects/index.js')
const { isRedisUrl, check, dialect, DEFAULT_PREFIX } = require('./dialects/redis.js')
const { DatabaseLease, Tenure, SECRET, invalidArgument } = require('./database-lease.js')
const { Layout } = require('./index.js')

/** An expiring lease's time to live when none is given (ms). */
const DEFAULT_TTL_MS = 10_000

// The dialect object of the lease's Link: Redis's, named the way database-lease.js names a SQL
// database's lease (no SQL: the steps are the core's Redis scripts).
const leaseDialect = { ...dialect, lease: { sql: null, module: 'shardid/redis' } }

/**
 * One claim's steps in the shape database-lease.js's Tenure runs a SQL lease protocol in: a
 * renewal, a ceiling's record and the release, each a "statement" that is a function of the
 * run_id of the connection it is sent on (RedisLease._run calls it there), and the reading of
 * their replies. The keys, arguments and scripts are the core's.
 */
class ClaimSteps {
  constructor(steps, fencingToken) {
    this.kind = 'expiring'
    this.steps = steps
    this.fencingToken = fencingToken
  }

  renew(shard) { return { text: (runId) => this.steps.renew(runId, shard), values: null } }
  record(shard, units) { return { text: (runId) => this.steps.record(runId, shard, units), values: null } }
  release(shard) { return { text: (runId) => this.steps.release(runId, shard), values: null } }
  /** Whether the reply says the shard still holds this claim's token (false: lost for good). */
  kept(reply) { return native.RedisLeaseSteps.held(reply) }
  /** How far this host's clock was ahead of the server's by a renewal's reply, when more than
   *  the skew a lease allows (the lease then stops with CLOCK_SKEW): the core's rule. */
  clockAhead(reply) { return this.steps.clockAhead(reply) }
  // Every script can be sent again (RedisLease._run does, once).
  resendAfter() { return null }
}

/** A generator on a shard leased through a Redis server (see `lease`). */
class RedisLease extends DatabaseLease {
  constructor(secret, o, connection) {
    super(secret, o, o.layout, null, connection)
    /** The prefix of the keys. */
    this.schema = o.schema
    this._holder = `${require('node:os').hostname()} pid ${process.pid} (node)`
    /** The lease hash's key (one per layout under the prefix). */
    this.key = this._steps().key // INVALID_ARGUMENT (prefix, time to live, range) before connecting
    this.table = this.key
  }

  /** The core's steps of one claim: a new token each. */
  _steps() {
    const [first, end] = this._options.shards
    return new native.RedisLeaseSteps(this.schema, this._layoutIndex, first, end, this.ttlMs, this._holder)
  }

  /** The fencing token of the current claim: one more than the shard's last claim's (a store
   *  that writes on the holder's behalf can refuse a smaller one). */
  get fencingToken() {
    return this._tenure.protocol.fencingToken
  }

  // Sends the script `make(runId)` names (the run_id of the connection it goes on: a script made
  // with the identity of the server before a reconnection, sent to the server after it, would
  // not see that the shard's data stepped back). Every error gives the connection up; a script
  // that failed on a connection opened before is sent once more on a new one (the server
  // restarted, or a sentinel named another primary).
  async _run(make, _values, _tenure) {
    for (let reconnected = false; ;) {
      const fresh = this._connection.fresh
      try {
        return await this._connection.use((conn) => {
          const call = make(conn.runId)
          return this._dialect.row(conn, call.script, call.values)
        })
      } catch (err) {
        if (!fresh && !reconnected) {
          reconnected = true
          continue
        }
        throw this._dialect.unreachable(err) ? unreachableError(err) : err
      }
    }
  }

  async _take() {
    const steps = this._steps()
    let sent = null
    const reply = await this._run((runId) => {
      sent = native.leaseNow()
      return steps.claim(runId)
    })
    // The claim is made (the client's clock read by the core) just before it is sent.
    const claim = steps.claimed(reply)
    if (claim.claimed === 'clockSkew') {
      // This host's clock is too far ahead of the server's (the SQL leases' rule): the shard
      // taken is freed at once, then the error (nothing left claimed).
      try {
        await this._run((runId) => steps.release(runId, claim.shard))
      } catch {
        // The claim expires on its own; the skew is the error.
      }
      throw makeError('CLOCK_SKEW', { aheadMs: BigInt(claim.aheadMs), maxMs: BigInt(claim.maxMs) }) // BigInt, as the SQL leases'
    }
    if (claim.claimed === 'none') {
      const [first, end] = this._options.shards
      throw makeError('NO_FREE_SHARD', { first: BigInt(first), end: BigInt(end), heldIn: `Redis key ${steps.key}` })
    }
    if (claim.claimed !== 'shard') {
      throw makeError('DATABASE', { reason: 'the Redis server answered the claim with a reply no lease script makes' })
    }
    this._tallyIndex ??= native.leaseTallyNew(this._layoutIndex, 'redis')
    const protocol = new ClaimSteps(steps, BigInt(claim.fencingToken))
    const tenure = new Tenure(this, protocol, { shard: claim.shard, recorded: claim.ceiling }, sent, this._options)
    // A shard last written by another server (a promoted replica, a restart that lost writes)
    // starts above that server's clock plus the hosts' skew: wait it out here, the heartbeat
    // running, rather than fail the first IDs.
    const wait = native.ceilingWaitMs(tenure.index, BigInt(claim.ceiling ?? 0))
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    this._tenure = tenure
    return tenure
  }
}

/**
 * `await lease({ layout, url, shards: [first, end], ttlMs?, retake?, schema?,
 * backwardsToleranceMs?, maxBorrowUnits? })`: leases the first free shard of `first..end` (end
 * excluded) through the Redis server `url` names (`redis://`, `rediss://`, `unix://`,
 * `redis+sentinel://`), the lease hash under the key prefix `schema` (`shardid`), expiring
 * `ttlMs` (1,000 to 86,400,000; 10,000 by default) after its last renewal by the server's clock:
 * a holder that dies frees its shard then; one stopped past it ends with `LEASE_LOST` at its next
 * ceiling (with `retake: true`, the next call takes a new lease). A timer renews it every third
 * of its time to live. Rejects with `INVALID_ARGUMENT` (a bad URL, prefix, time to live or
 * range), `NO_FREE_SHARD`, `DATABASE_UNREACHABLE`, `UNSUPPORTED` without ioredis, `CLOCK_SKEW`
 * when this host's clock is more than 2 s ahead of the server's (the shard it took freed first).
 */
async function lease(options) {
  const o = { ...(options ?? {}) }
  if (!(o.layout instanceof Layout) || typeof o.url !== 'string' || !Array.isArray(o.shards) || o.shards.length !== 2 ||
      (o.schema != null && typeof o.schema !== 'string')) {
    throw invalidArgument('lease', 'takes { layout: Layout, url, shards: [first, end], ttlMs?, retake?, schema?, backwardsToleranceMs?, maxBorrowUnits? }')
  }
  if (!isRedisUrl(o.url)) {
    throw makeError('INVALID_ARGUMENT', { argument: 'url', reason: 'must be a Redis URL (redis://, rediss://, unix:// or redis+sentinel://)' }, RangeError)
  }
  check(o.url, 'url')
  if (o.kind !== undefined && o.kind !== 'expiring') {
    throw makeError('INVALID_ARGUMENT', { argument: 'kind', reason: "must be 'expiring': a lease on Redis expires (no session lock)" }, RangeError)
  }
  const [first, end] = o.shards.map(Number)
  if (!(Number.isSafeInteger(first) && Number.isSafeInteger(end) && first >= 0 && end <= 2 ** 31)) {
    throw makeError('INVALID_ARGUMENT', { argument: 'shards', reason: 'must be [first, end] within 0..2^31' }, RangeError)
  }
  const settings = { ...o, shards: [first, end], kind: 'expiring', ttlMs: o.ttlMs ?? DEFAULT_TTL_MS, schema: o.schema ?? DEFAULT_PREFIX }
  const connection = new Link(leaseDialect, leaseDialect.opener(o.url))
  const held = new RedisLease(SECRET, settings, connection)
  try {
    await held._take()
  } catch (err) {
    await holdingLoop(() => connection.end())
    throw err
  }
  return held
}

module.exports = { lease, RedisLease, DEFAULT_TTL_MS }
