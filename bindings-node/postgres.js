'use strict'
// shardid/postgres: shard leases through PostgreSQL, for processes on different hosts. Needs
// the `pg` package (an optional peer dependency).
//
// The default lease expires (`kind: 'expiring'`): a row per shard in a table (`shardid_leases`)
// holds the lease's random token and its expiry by the database's clock, and nothing else, so
// it holds behind a transaction pooler (PgBouncer, Supavisor, Neon, RDS Proxy). A timer renews
// it every third of its time to live (`ttlMs`, 10 s by default); a holder that could not renew
// for four fifths of it stops on its own, and its calls reject with `LEASE_LOST` (with
// `retake: true`, the next call takes a new lease). Each row also records the shard's ceiling,
// written before any ID above it is handed out and only while the row holds the lease's token,
// so the next holder starts above every ID the last one issued. `kind: 'session'` holds a
// session advisory lock per shard instead (direct connections only; a crashed holder's shard is
// free at once). `pg` is asynchronous, so the generating methods are too: they await a ceiling
// write every 100 ms or so, and return at once otherwise. The steps, statements and parameters
// are the core's (shardid::sql::LeaseProtocol); this only executes them.
//
// The lease's timer and socket do not keep the process alive on their own (they are unref'd
// while no statement is in flight): a script that is done exits, and its lease expires.

const native = require('./native.generated.js')
const { Layout } = require('./index.js')
const { makeError, unreachable, unreachableError, closedError, withCause } = require('./errors.js')

const SECRET = Symbol('shardid.postgres')
const DEFAULT_TTL_MS = 10_000

const invalidArgument = (argument, reason) => makeError('INVALID_ARGUMENT', { argument, reason }, TypeError)

// The addon's index of a layout, from its public fields (an equal layout gets one index).
const layoutIndex = (l) => native.layoutNew(l.epochMs, l.unitMs, l.timeBits, l.shardBits, l.sequenceBits, l.order, l.signed)

// A connection the lease owns, which holds the event loop only while a statement is in flight.
class Connection {
  constructor(make) {
    this._make = make
    this._client = null
    this._connecting = null
    this._busy = 0
  }

  async _get() {
    if (this._client && !this._client._shardidBroken) return this._client
    if (!this._connecting) {
      this._connecting = (async () => {
        const client = this._make()
        // A session the server ends (or a dropped connection) is an 'error' event on the
        // client, which would end the process if nobody listened.
        client.on('error', () => { client._shardidBroken = true })
        client.on('end', () => { client._shardidBroken = true })
        try {
          await client.connect()
        } catch (err) {
          client.end().catch(() => {})
          throw err
        }
        this._client = client
        this._ref(false)
        return client
      })().finally(() => { this._connecting = null })
    }
    return this._connecting
  }

  _ref(on) {
    const stream = this._client?.connection?.stream
    if (stream && typeof stream.ref === 'function') on ? stream.ref() : stream.unref()
  }

  get fresh() {
    return !this._client || this._client._shardidBroken
  }

  // Runs one statement; its first row (an array), or null.
  async run(text, values) {
    const client = await this._get()
    if (this._busy++ === 0) this._ref(true)
    try {
      const { rows } = await client.query({ text, values, rowMode: 'array' })
      return rows.length > 0 ? rows[0] : null
    } catch (err) {
      if (!/^[0-9A-Z]{5}$/.test(err.code ?? '') || /^(08|57P)/.test(err.code)) this.drop()
      throw err
    } finally {
      if (--this._busy === 0) this._ref(false)
    }
  }

  drop() {
    const client = this._client
    this._client = null
    if (client) {
      client._shardidBroken = true
      client.end().catch(() => {})
    }
  }

  async end() {
    await this._connecting?.catch(() => {})
    const client = this._client
    if (client && !client._shardidBroken) {
      this._ref(true) // hold the loop until the goodbye is sent
      await client.end().catch(() => {})
    }
    this._client = null
  }
}

// One lease taken by the protocol: its shard, generator and heartbeat. A PostgresLease holds one
// at a time (another after a loss, with `retake`).
class Tenure {
  constructor(lease, protocol, step, sentAt, o) {
    this.lease = lease
    this.protocol = protocol
    this.shard = step.shard
    this.expiring = protocol.kind === 'expiring'
    this.claim = step.backend != null ? native.claimBackend(step.backend) : null
    this.index = native.ceilingNew(lease._layoutIndex, step.shard, BigInt(step.recorded ?? 0),
      o.backwardsToleranceMs, o.maxBorrowUnits, this.expiring ? lease.ttlMs : null, this.expiring ? sentAt : null)
    this.ended = false
    this.timer = null
    this.recording = Promise.resolve()
    if (this.expiring) this._schedule()
  }

  lost(why = 'is no longer held') {
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
    if (row === null) {
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
      if (row === null) {
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
    native.ceilingRevoke(this.index)
    try {
      const { text, values } = this.protocol.release(this.shard)
      await this.lease._run(text, values, this)
    } catch {
      // An expiring lease that cannot be released expires on its own.
    }
    if (this.claim !== null) native.releaseBackend(this.claim)
  }
}

class PostgresLease {
  constructor(secret, o, layout, table, connection) {
    if (secret !== SECRET) throw invalidArgument('PostgresLease', 'is made by lease() from shardid/postgres')
    this.layout = layout
    this.table = table
    this.kind = o.kind ?? 'expiring'
    this.ttlMs = o.ttlMs ?? DEFAULT_TTL_MS
    this.retake = Boolean(o.retake)
    this._options = o
    this._layoutIndex = layoutIndex(layout)
    this._connection = connection
    this._closed = false
    this._tenure = null
    this._taking = null
  }

  _protocol() {
    const holder = `${require('node:os').hostname()} pid ${process.pid}`
    const [first, end] = this._options.shards.map(Number)
    return new native.LeaseProtocol(this.kind, this.ttlMs, this._layoutIndex, this.table, first, end, holder)
  }

  // Runs a statement of `tenure`'s: reconnects first for an expiring lease, and sends it again
  // once on a fresh connection when an old one fails (the database was restarted: every
  // statement of the lease can be repeated); a session lease's lock ended with its session.
  async _run(text, values, tenure) {
    for (let attempt = 1; ; attempt++) {
      const fresh = this._connection.fresh
      if (fresh && !tenure.expiring) throw tenure.lost('lost its database session')
      try {
        return await this._connection.run(text, values)
      } catch (err) {
        if (!this._connection.fresh) throw err // the database's own error: the connection is fine
        if (!tenure.expiring) throw withCause(tenure.lost('lost its database session'), err)
        if (fresh || attempt === 2) throw unreachable(err) ? unreachableError(err) : err
      }
    }
  }

  async _take() {
    const protocol = this._protocol()
    let sent = native.leaseNow()
    for (;;) {
      const step = protocol.next()
      if (step.action === 'taken') {
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
        protocol.fail(typeof err.code === 'string' ? err.code : null)
        if (protocol.next().action === 'raise') throw unreachable(err) ? unreachableError(err) : err
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

// `await using lease = await require('shardid/postgres').lease(...)` where the runtime has it.
if (Symbol.asyncDispose) PostgresLease.prototype[Symbol.asyncDispose] = PostgresLease.prototype.close

/**
 * `await lease({ layout, connectionString, shards: [first, end], kind?, ttlMs?, retake?, table?,
 * backwardsToleranceMs?, maxBorrowUnits? })`: leases the first free shard of `first..end` (end
 * excluded) through the PostgreSQL server. `client` may replace `connectionString`: an
 * unconnected `pg.Client` the lease then owns (it makes another with the same settings to
 * reconnect). Rejects with code `NO_FREE_SHARD` when every shard is held, and
 * `DATABASE_UNREACHABLE` (pg's error as its `cause`) when the database cannot be reached; the
 * database's own errors (a missing privilege) are `pg`'s.
 */
async function lease(options) {
  const o = { ...(options ?? {}) }
  const table = o.table ?? 'shardid_leases'
  if (!(o.layout instanceof Layout) || !Array.isArray(o.shards) || o.shards.length !== 2 ||
      typeof table !== 'string') {
    throw invalidArgument('lease', 'takes { layout: Layout, connectionString, shards: [first, end], kind?, ttlMs?, retake?, table? }')
  }
  const [first, end] = o.shards.map(Number)
  if (!(Number.isSafeInteger(first) && Number.isSafeInteger(end) && first >= 0 && end <= 2 ** 31)) {
    throw makeError('INVALID_ARGUMENT', { argument: 'shards', reason: 'must be [first, end] within 0..2^31' })
  }
  if (o.kind !== undefined && typeof o.kind !== 'string') {
    throw invalidArgument('kind', "must be 'expiring' (the default) or 'session'")
  }
  let make
  if (o.client) {
    let first = o.client
    make = () => {
      const client = first ?? new o.client.constructor(o.client.connectionParameters)
      first = null
      return client
    }
  } else {
    let pg
    try {
      pg = require('pg')
    } catch {
      throw makeError('UNSUPPORTED', { reason: 'shardid/postgres needs the pg package: npm install pg' })
    }
    make = () => new pg.Client({ connectionString: o.connectionString })
  }
  const connection = new Connection(make)
  const held = new PostgresLease(SECRET, o, o.layout, table, connection)
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

/**
 * Makes `pg` return `int8` (`bigint`) columns, and arrays of them, as JavaScript bigints:
 * `int8AsBigInt(require('pg').types)`. By default `pg` returns them as strings (and a
 * `parseInt` of those silently rounds every ID above 2^53). The setting is `pg`'s and global:
 * it applies to every pool and client of that `pg`. Returns `types`.
 */
function int8AsBigInt(types) {
  if (!types || typeof types.setTypeParser !== 'function' || typeof types.getTypeParser !== 'function') {
    throw invalidArgument('types', "must be pg's types: int8AsBigInt(require('pg').types)")
  }
  const INT8 = 20
  const INT8_ARRAY = 1016
  const textArray = types.getTypeParser(INT8_ARRAY)
  types.setTypeParser(INT8, (text) => BigInt(text))
  types.setTypeParser(INT8_ARRAY, (text) => textArray(text).map((v) => (v === null ? null : BigInt(v))))
  return types
}

/**
 * The PostgreSQL DDL of `<schema>.next_id()` (a column default that makes IDs of `layout` for
 * `shard` inside the database, unique however many sessions call it) and the decoding
 * functions: `ddl({ layout: Layout.INSTAGRAM, shard: 5, schema: 'insta5' })`, to run once
 * (`psql -1 -f`, or a migration). The same text as Python's `shardid.sql.postgres` and
 * `npx shardid sql`. Give the database a shard no application process uses.
 */
function ddl(options) {
  const o = options ?? {}
  if (!(o.layout instanceof Layout) || typeof o.schema !== 'string') {
    throw invalidArgument('ddl', 'takes { layout: Layout, shard, schema: string, backwardsToleranceMs?, maxBorrowUnits? }')
  }
  return native.postgresDdl(layoutIndex(o.layout), o.shard, o.schema, o.backwardsToleranceMs, o.maxBorrowUnits)
}

/**
 * The PostgreSQL DDL of public IDs: `<schema>.shardid_public_encode(id, keys, prefix,
 * encoding)` and `<schema>.shardid_public_decode(text, keys, prefix, encoding)` for IDs of
 * `layout` (default Instagram's), the same text as `PublicIds` for the same keys:
 * `publicIdsDdl({ schema: 'app' })`. The same text as Python's
 * `shardid.sql.public_ids_sql` and `npx shardid sql --public-ids`.
 */
function publicIdsDdl(options) {
  const o = options ?? {}
  const layout = o.layout ?? Layout.INSTAGRAM
  if (!(layout instanceof Layout) || typeof o.schema !== 'string') {
    throw invalidArgument('publicIdsDdl', 'takes { schema: string, layout?: Layout }')
  }
  return native.publicIdsDdl(layoutIndex(layout), o.schema)
}

module.exports = { lease, PostgresLease, int8AsBigInt, ddl, publicIdsDdl, DEFAULT_TTL_MS }
