'use strict'
// shardid/postgres: shard leases through PostgreSQL, for processes on different hosts. Needs
// the `pg` package (an optional peer dependency).
//
// Each lease holds a session advisory lock for its shard on a `pg.Client` of its own, so two
// processes never hold one shard and a process that dies (or loses its connection) frees it.
// A table (`shardid_leases` by default) records each shard's ceiling, written before any ID
// above it is handed out, so the next holder starts above every ID the last one issued. `pg`
// is asynchronous, so the generating methods are too: they await a ceiling write every
// 100 ms or so, and return at once otherwise.

const native = require('./native.generated.js')
const { Layout } = require('./index.js')
const { makeError, sessionLost } = require('./errors.js')

const SECRET = Symbol('shardid.postgres')

const invalidArgument = (argument, reason) => makeError('INVALID_ARGUMENT', { argument, reason }, TypeError)

// The addon's index of a layout, from its public fields (an equal layout gets one index).
const layoutIndex = (l) => native.layoutNew(l.epochMs, l.unitMs, l.timeBits, l.shardBits, l.sequenceBits, l.order, l.signed)

class PostgresLease {
  constructor(secret, { client, layout, table, protocol, shard, index }) {
    if (secret !== SECRET) throw invalidArgument('PostgresLease', 'is made by lease() from shardid/postgres')
    Object.assign(this, { layout, table, shard })
    this._client = client
    this._protocol = protocol
    this._index = index
    this._closed = false
    this._recording = Promise.resolve()
    // A session the server ends (or a dropped connection) is an 'error' event on the client,
    // which would end the process if nobody listened: the lease is lost, and says so at the
    // next ceiling it cannot record.
    client.on('error', () => {})
  }

  /** One ID now (a bigint). */
  nextId() {
    return this._retry(() => native.ceilingNextId(this._index))
  }
  async nextIdString() {
    return String(await this.nextId())
  }
  /** One ID as if the clock read `now` (ms, bigint or Date); never waits for the clock. */
  nextIdAt(now) {
    return this._retry(() => native.ceilingNextIdAt(this._index, now instanceof Date ? now.getTime() : now))
  }
  /** `n` IDs now, as a BigUint64Array. */
  nextIds(n) {
    return this._retry(() => native.ceilingNextIds(this._index, n))
  }
  /** Releases the shard at once (ends the lease's connection, and with it the lock); the lease
   *  makes no more IDs. Closing twice is fine. */
  async close() {
    if (this._closed) return
    this._closed = true
    await this._client.end()
  }
  async _retry(make) {
    for (;;) {
      if (this._closed) throw makeError('LEASE_LOST', { shard: BigInt(this.shard) })
      try {
        return make()
      } catch (err) {
        if (err.code !== 'CEILING_PENDING') throw err
        await this._record(native.ceilingWanted(this._index))
      }
    }
  }

  // Records a ceiling, one write at a time, and only while this session holds the lock: a
  // lost connection stops the generator at its ceiling instead of extending it.
  _record(units) {
    this._recording = this._recording.catch(() => {}).then(async () => {
      const { text, values } = this._protocol.record(this.shard, units)
      let rowCount
      try {
        ({ rowCount } = await this._client.query(text, values))
      } catch (err) {
        // The session is gone, and the lock with it.
        if (sessionLost(err)) {
          throw Object.assign(makeError('LEASE_LOST', { shard: BigInt(this.shard) }), { cause: err })
        }
        throw err
      }
      if (rowCount !== 1) throw makeError('LEASE_LOST', { shard: BigInt(this.shard) })
      native.ceilingConfirm(this._index, units)
    })
    return this._recording
  }
}

// `await using lease = await require('shardid/postgres').lease(...)` where the runtime has it.
if (Symbol.asyncDispose) PostgresLease.prototype[Symbol.asyncDispose] = PostgresLease.prototype.close

/**
 * `await lease({ layout, connectionString, shards: [first, end], table?, backwardsToleranceMs?,
 * maxBorrowUnits? })`: leases the first free shard of `first..end` (end excluded) through the
 * PostgreSQL server. `client` may replace `connectionString`: an unconnected `pg.Client` the
 * lease then owns. Rejects with code `NO_FREE_SHARD` when every shard is held.
 */
async function lease(options) {
  const o = options ?? {}
  const table = o.table ?? 'shardid_leases'
  if (!(o.layout instanceof Layout) || !Array.isArray(o.shards) || o.shards.length !== 2 ||
      typeof table !== 'string') {
    throw invalidArgument('lease', 'takes { layout: Layout, connectionString, shards: [first, end], table? }')
  }
  const [first, end] = o.shards.map(Number)
  if (!(Number.isSafeInteger(first) && Number.isSafeInteger(end) && first >= 0 && end <= 2 ** 31)) {
    throw makeError('INVALID_ARGUMENT', { argument: 'shards', reason: 'must be [first, end] within 0..2^31' })
  }
  // The steps, statements and parameters are the core's (shardid::sql::Acquire); this only
  // executes them and feeds back the first column of each answer. Throws INVALID_ARGUMENT for
  // a bad table name before connecting.
  const holder = `${require('node:os').hostname()} pid ${process.pid}`
  const layout = layoutIndex(o.layout)
  const protocol = new native.PostgresLeaseProtocol(layout, table, first, end, holder)
  let client = o.client
  if (!client) {
    let pg
    try {
      pg = require('pg')
    } catch {
      throw makeError('UNSUPPORTED', { reason: 'shardid/postgres needs the pg package: npm install pg' })
    }
    client = new pg.Client({ connectionString: o.connectionString })
  }
  await client.connect()
  try {
    for (let step; (step = protocol.next()) !== null;) {
      let rows = []
      try {
        ({ rows } = await client.query({ text: step.text, values: step.values, rowMode: 'array' }))
      } catch (err) {
        if (!step.tolerate.includes(err.code)) throw err
      }
      protocol.feed(rows.length > 0 ? rows[0][0] : null)
    }
    const { shard, recorded } = protocol.taken
    const index = native.ceilingNew(layout, shard, BigInt(recorded ?? 0), o.backwardsToleranceMs, o.maxBorrowUnits)
    return new PostgresLease(SECRET, { client, layout: o.layout, table, protocol, shard, index })
  } catch (err) {
    await client.end().catch(() => {})
    throw err
  }
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

module.exports = { lease, PostgresLease, int8AsBigInt, ddl, publicIdsDdl }
