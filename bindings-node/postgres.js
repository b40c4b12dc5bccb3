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

const native = require('./index.js')
const { Layout } = require('./shardid.js')
const { makeError } = require('./errors.js')

const LAYOUT = Symbol.for('shardid.layout')
const SECRET = Symbol('shardid.postgres')

const invalidArgument = (argument, reason) => makeError('INVALID_ARGUMENT', { argument, reason }, TypeError)

class PostgresLease {
  constructor(secret, { client, layout, table, sql, shard, index }) {
    if (secret !== SECRET) throw invalidArgument('PostgresLease', 'is made by lease() from shardid/postgres')
    Object.assign(this, { layout, table, shard })
    this._client = client
    this._sql = sql
    this._index = index
    this._recording = Promise.resolve()
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
  /** Releases the shard (ends the lease's connection). */
  close() {
    return this._client.end()
  }

  async _retry(make) {
    for (;;) {
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
      const { signature, key, record } = this._sql
      const { rowCount } = await this._client.query(record, [String(units), signature, this.shard, key, this.shard])
      if (rowCount !== 1) throw makeError('LEASE_LOST', { shard: BigInt(this.shard) })
      native.ceilingConfirm(this._index, units)
    })
    return this._recording
  }
}

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
  // The statements, the lock's key and the layout's signature: the protocol is the core's
  // (shardid::sql::PostgresLease). Throws INVALID_ARGUMENT for a bad table name.
  const sql = native.postgresLeaseSql(o.layout[LAYOUT], table)
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
    try {
      await client.query(sql.createTable)
    } catch (err) {
      if (!sql.lostCreateRace.includes(err.code)) throw err // created by another session at once
    }
    let shard = -1
    for (let s = first; s < end && shard < 0; s++) {
      const { rows } = await client.query({ text: sql.tryLock, values: [sql.key, s], rowMode: 'array' })
      if (rows[0][0]) shard = s
    }
    if (shard < 0) throw makeError('NO_FREE_SHARD', { first: BigInt(first), end: BigInt(end), heldIn: `table ${table}` })
    await client.query(sql.insert, [sql.signature, shard])
    const { rows } = await client.query(sql.claim, [`${require('node:os').hostname()} pid ${process.pid}`, sql.signature, shard])
    const index = native.ceilingNew(o.layout[LAYOUT], shard, BigInt(rows[0].ceiling), o.backwardsToleranceMs, o.maxBorrowUnits)
    return new PostgresLease(SECRET, { client, layout: o.layout, table, sql, shard, index })
  } catch (err) {
    await client.end().catch(() => {})
    throw err
  }
}

module.exports = { lease, PostgresLease }
