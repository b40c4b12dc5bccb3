'use strict'
// The driver of database leases that shardid/postgres (pg), shardid/mysql (mysql2) and
// shardid/sqlite (better-sqlite3 or node:sqlite) share: it
// runs the core's lease protocol (shardid::sql::LeaseProtocol) on a connection the lease owns
// (a Link of dialects/index.js), in the SQL of the database the entry point names. What
// differs between the databases (the connection, how an error names itself, the SQL the
// protocol starts with) is the link's dialect. The steps, statements and parameters are the
// core's. Not for direct use.

const native = require('./native.generated.js')
const { Layout } = require('./index.js')
const { makeError, unreachableError, closedError, withCause } = require('./errors.js')
const { STATS } = require('./core.generated.js')
const { dialectOf, Link } = require('./dialects/index.js')

const SECRET = Symbol('shardid.lease')
const DEFAULT_TTL_MS = 10_000

const invalidArgument = (argument, reason) => makeError('INVALID_ARGUMENT', { argument, reason }, TypeError)

// The addon's index of a layout, from its public fields (an equal layout gets one index).
const layoutIndex = (l) => native.layoutNew(l.epochMs, l.unitMs, l.timeBits, l.shardBits, l.sequenceBits, l.order, l.signed)

// One lease taken by the protocol: its shard, generator and heartbeat. A DatabaseLease holds one
// at a time (another after a loss, with `retake`).
class Tenure {
  constructor(lease, protocol, step, sentAt, o) {
    this.lease = lease
    this.protocol = protocol
    this.shard = step.shard
    this.expiring = protocol.kind === 'expiring'
    this.claim = step.backend != null ? native.claimBackend(step.backend) : null
    this.index = native.ceilingNew(lease._layoutIndex, step.shard, BigInt(step.recorded ?? 0),
      o.backwardsToleranceMs, o.maxBorrowUnits, this.expiring ? lease.ttlMs : null, this.expiring ? sentAt : null,
      lease._tallyIndex)
    this.ended = false
    this.timer = null
    this.recording = Promise.resolve()
    if (this.expiring) this._schedule()
  }

  // The lease is lost: the core stops the generator (and counts the loss, once), and here is
  // the error to throw.
  lost(why = 'is no longer held') {
    native.ceilingRevoke(this.index)
    return makeError('LEASE_LOST', { shard: BigInt(this.shard) }, Error, `the lease on shard ${this.shard} ${why}: take a new lease`)
  }

  _schedule() {
    if (this.ended) return
    const wait = native.ceilingWait(this.index)
    if (wait === null) return native.ceilingRevoke(this.index)
    this.timer = setTimeout(() => this._beat(), wait)
    this.timer.unref()
  }

  // The heartbeat: renews the lease when due; stops the generator once it is lost.
  async _beat() {
    if (this.ended) return
    const wait = native.ceilingWait(this.index)
    if (wait === null) return native.ceilingRevoke(this.index)
    if (wait > 0) return this._schedule()
    const sent = native.ceilingSending(this.index)
    if (sent === null) return native.ceilingRevoke(this.index)
    const { text, values } = this.protocol.renew(this.shard)
    let row
    try {
      row = await this.lease._run(text, values, this)
    } catch {
      native.ceilingFailed(this.index)
      return this._schedule()
    }
    // This host's clock too far ahead of the database's (the renewal returns the database's
    // clock; the core compares): the generator stops, and says why (CLOCK_SKEW).
    const ahead = this.protocol.clockAhead(row)
    if (ahead !== null) return native.ceilingRevokeClockSkew(this.index, ahead)
    if (!this.protocol.kept(row)) {
      native.ceilingRevoke(this.index)
      return
    }
    native.ceilingRenewed(this.index, sent)
    this._schedule()
  }

  // Records a ceiling, one write at a time, and only while the row holds the lease's token.
  record(units) {
    this.recording = this.recording.catch(() => {}).then(async () => {
      const sent = this.expiring ? native.ceilingSending(this.index) : native.leaseNow()
      if (sent === null) throw this.lost()
      const { text, values } = this.protocol.record(this.shard, units)
      const row = await this.lease._run(text, values, this)
      if (!this.protocol.kept(row)) {
        native.ceilingRevoke(this.index)
        throw this.lost()
      }
      native.ceilingConfirm(this.index, units, this.expiring ? sent : null)
    })
    return this.recording
  }

  async end() {
    this.ended = true
    if (this.timer) clearTimeout(this.timer)
    native.ceilingClose(this.index)
    try {
      const { text, values } = this.protocol.release(this.shard)
      await this.lease._run(text, values, this)
    } catch {
      // An expiring lease that cannot be released expires on its own.
    }
    if (this.claim !== null) native.releaseBackend(this.claim)
  }
}

class DatabaseLease {
  constructor(secret, o, layout, table, connection) {
    if (secret !== SECRET) throw invalidArgument(new.target.name, 'is made by lease() from shardid/postgres, shardid/mysql or shardid/sqlite')
    this._dialect = connection.dialect
    // The SQL the protocol speaks: MySQL's once a MySQL server refused MariaDB's.
    this._sqlDialect = connection.dialect.lease.sql
    this.layout = layout
    this.table = table
    // The table's schema (PostgreSQL), database (MySQL) or attached database (SQLite);
    // null: PostgreSQL's where the search path finds the table (checked, then named in every
    // statement), the URL's database, SQLite's main.
    this.schema = o.schema ?? null
    this.kind = o.kind ?? 'expiring'
    this.ttlMs = o.ttlMs ?? DEFAULT_TTL_MS
    this.retake = Boolean(o.retake)
    this._options = o
    this._layoutIndex = layoutIndex(layout)
    this._connection = connection
    this._closed = false
    this._tenure = null
    this._taking = null
    // The core's counters of this lease (shardid::lease::Tally), made at its first claim.
    this._tallyIndex = null
  }

  _protocol() {
    const holder = `${require('node:os').hostname()} pid ${process.pid}`
    const [first, end] = this._options.shards.map(Number)
    return new native.LeaseProtocol(this.kind, this.ttlMs, this._layoutIndex, this.table, first, end, holder, this._sqlDialect, this.schema)
  }

  // Runs a statement of `tenure`'s: reconnects first for an expiring lease, and sends it again
  // once on a fresh connection when an old one fails (the database was restarted: every
  // statement of the lease can be repeated); a session lease's lock ended with its session. A
  // statement the database rolled back whole (a deadlock, a Galera node refusing writes while
  // the cluster evicts a node) is sent again after the protocol's wait (`resendAfter`), while
  // the lease is not past its deadline.
  async _run(text, values, tenure) {
    for (let reconnected = false, resent = 0; ;) {
      const fresh = this._connection.fresh
      if (fresh && !tenure.expiring) throw tenure.lost('lost its database session')
      try {
        return await this._connection.run(text, values)
      } catch (err) {
        if (this._connection.fresh) {
          if (!tenure.expiring) throw withCause(tenure.lost('lost its database session'), err)
          if (fresh || reconnected) throw this._dialect.unreachable(err) ? unreachableError(err) : err
          reconnected = true
          continue
        }
        // The database's own error: the connection is fine.
        const wait = tenure.protocol.resendAfter(this._dialect.code(err), resent++)
        if (wait === null || (tenure.expiring && native.ceilingSending(tenure.index) === null)) throw err
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    }
  }

  async _take() {
    const protocol = this._protocol()
    let sent = native.leaseNow()
    for (;;) {
      const step = protocol.next()
      if (step.action === 'taken') {
        this._sqlDialect = protocol.dialect
        this._tallyIndex ??= native.leaseTallyNew(this._layoutIndex, this.table)
        const tenure = new Tenure(this, protocol, step, sent, this._options)
        // After a failover the ceiling may be ahead of this host's clock: wait it out here, the
        // heartbeat running, rather than fail the first IDs.
        const wait = native.ceilingWaitMs(tenure.index, BigInt(step.recorded ?? 0))
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
        this._tenure = tenure
        return tenure
      }
      if (step.action === 'raise') {
        throw makeError('DATABASE', { reason: 'the database answered a lease statement with an unexpected row' })
      }
      sent = native.leaseNow()
      let row
      try {
        row = await this._connection.run(step.text, step.values)
      } catch (err) {
        protocol.fail(this._dialect.code(err))
        if (protocol.next().action === 'raise') throw this._dialect.unreachable(err) ? unreachableError(err) : err
        continue
      }
      protocol.feed(row)
    }
  }

  /** The shard this process holds (after `close()`, the one it held). */
  get shard() {
    return this._tenure.shard
  }

  /** Whether the lease is held now (an expiring lease: renewed in time and not taken over). */
  get held() {
    return !this._closed && native.ceilingHolds(this._tenure.index)
  }

  /** What this lease did, over every shard it took: `acquisitions`, `renewals` (heartbeats, and
   *  ceiling writes, which renew too), `ceilingWrites`, `lateRenewals` (back more than two
   *  thirds of the time to live after the last renewal was sent), `losses` (closing is none)
   *  and `held` (1n or 0n), as bigints named by the core's table. */
  stats() {
    const values = native.leaseTallyStats(this._tallyIndex)
    const out = {}
    STATS.lease.forEach((name, i) => { out[name] = values[i] })
    return out
  }

  /** One ID now (a bigint). */
  nextId() {
    // Nearly every ID is below the recorded ceiling: no await inside, as a plain generator's.
    if (!this._closed) {
      try {
        return Promise.resolve(native.ceilingNextId(this._tenure.index))
      } catch (err) {
        if (err.code !== 'CEILING_PENDING' && err.code !== 'LEASE_LOST') return Promise.reject(err)
      }
    }
    return this._call((t) => native.ceilingNextId(t.index))
  }
  async nextIdString() {
    return String(await this.nextId())
  }
  /** One ID as if the clock read `now` (ms, bigint or Date); never waits for the clock. */
  nextIdAt(now) {
    return this._call((t) => native.ceilingNextIdAt(t.index, now instanceof Date ? now.getTime() : now))
  }
  /** `n` IDs now, as a BigUint64Array. */
  nextIds(n) {
    return this._call((t) => native.ceilingNextIds(t.index, n))
  }

  async _call(make) {
    let retook = false
    for (;;) {
      if (this._closed) throw this._closedError()
      const tenure = this._tenure
      try {
        return await this._make(tenure, make)
      } catch (err) {
        if (this._closed && err.code === 'LEASE_LOST') throw this._closedError() // closed meanwhile
        if (err.code !== 'LEASE_LOST' || !this.retake || this._closed || retook) throw err
        retook = true
        if (this._tenure === tenure) {
          this._taking ??= (async () => {
            await tenure.end()
            await this._take()
          })().finally(() => { this._taking = null })
        }
        await this._taking
      }
    }
  }

  _closedError() {
    return closedError(`the lease on shard ${this._tenure.shard}`)
  }

  async _make(tenure, make) {
    for (;;) {
      try {
        return make(tenure)
      } catch (err) {
        if (err.code !== 'CEILING_PENDING') throw err
        await tenure.record(native.ceilingWanted(tenure.index))
      }
    }
  }

  /** Releases the shard at once (another process may take it, and continues above this one's
   *  IDs); the lease makes no more IDs (they reject with `CLOSED`). Closing twice is fine. */
  async close() {
    if (this._closed) return
    this._closed = true
    await this._taking?.catch(() => {})
    await this._tenure.end()
    await this._connection.end()
  }
}

// `await using lease = await lease(...)` where the runtime has it.
if (Symbol.asyncDispose) DatabaseLease.prototype[Symbol.asyncDispose] = DatabaseLease.prototype.close

// The options every entry point takes, checked: the table, and [first, end].
function checkOptions(options, connection) {
  const o = { ...(options ?? {}) }
  const table = o.table ?? 'shardid_leases'
  if (!(o.layout instanceof Layout) || !Array.isArray(o.shards) || o.shards.length !== 2 ||
      typeof table !== 'string' || (o.schema != null && typeof o.schema !== 'string')) {
    throw invalidArgument('lease', `takes { layout: Layout, ${connection}, shards: [first, end], kind?, ttlMs?, retake?, table?, schema? }`)
  }
  const [first, end] = o.shards.map(Number)
  if (!(Number.isSafeInteger(first) && Number.isSafeInteger(end) && first >= 0 && end <= 2 ** 31)) {
    throw makeError('INVALID_ARGUMENT', { argument: 'shards', reason: 'must be [first, end] within 0..2^31' })
  }
  if (o.kind !== undefined && typeof o.kind !== 'string') {
    throw invalidArgument('kind', "must be 'expiring' (the default) or 'session'")
  }
  return { o, table }
}

/**
 * What every entry point of a database lease does first (shardid/postgres's, shardid/mysql's
 * and shardid/sqlite's `lease()`): checks `options` (INVALID_ARGUMENT before any connection, on `argument` for a
 * target that is not the dialect's: another database's URL names the module that takes it),
 * then takes a lease of class `Lease` on a new connection to the target (a `client` of the
 * caller's where the dialect takes one). Async, so that every refusal is a rejection, as the
 * entry points' callers `await` (or `.catch`) it, never a throw from the call itself.
 */
async function leaseOn(Lease, options, dialect, argument) {
  const { o, table } = checkOptions(options, argument)
  let target = dialect.name === 'postgres' ? o.client : undefined
  if (target === undefined || target === null) {
    target = o[argument]
    // PostgreSQL's may be left out: pg's environment variables.
    if (typeof target !== 'string' && !(target === undefined && dialect.name === 'postgres')) {
      const expected = { mysql: 'a mysql:// or mariadb:// URL', sqlite: 'a sqlite:/// URL' }[dialect.name] ?? 'a PostgreSQL connection string'
      throw invalidArgument(argument, `must be ${expected}`)
    }
    const named = dialectOf(target, argument)
    if (named.lease === null) {
      throw makeError('UNSUPPORTED', { reason: `shard leases on ${named.name}: not in the Node package yet (lock-file leases need no database)` })
    }
    if (named !== dialect) {
      const other = { mysql: 'a MySQL or MariaDB server', postgres: 'a PostgreSQL server', sqlite: 'a SQLite file' }[named.name]
      throw invalidArgument(argument, `names ${other}: lease from ${named.lease.module}`)
    }
  }
  return take(Lease, o, table, new Link(dialect, dialect.opener(target, dialect.lease.module)))
}

// Takes a lease of class `Lease` (a DatabaseLease) on `connection`, which it then owns.
async function take(Lease, o, table, connection) {
  const held = new Lease(SECRET, o, o.layout, table, connection)
  // Checks the kind, time to live and table name (INVALID_ARGUMENT) before connecting.
  held._protocol()
  try {
    await held._take()
  } catch (err) {
    await connection.end()
    throw err
  }
  return held
}

module.exports = { DatabaseLease, Tenure, SECRET, DEFAULT_TTL_MS, checkOptions, leaseOn, take, layoutIndex, invalidArgument }
