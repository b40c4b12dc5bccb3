'use strict'
// shardid/segments: dense IDs from PostgreSQL segments (号段), with `pg` (an optional peer
// dependency), or from MySQL and MariaDB ones with `mysql2` (a `mysql://` URL: shardid/mysql). The allocator is the core's (shardid::segment, through the addon): the hot path
// is synchronous and never touches the database; fetches are asynchronous, one at a time, on a
// `pg.Client` of the allocator's own. The statements are the core's too.

const native = require('./native.generated.js')
const { makeError, sessionLost, unreachable, unreachableError, closedError, withCause, describe } = require('./errors.js')
const { holdWhileBusy, holdingLoop, idle } = require('./idle.js')
const { SQLSTATES } = require('./core.generated.js')

const SECRET = Symbol('shardid.segments')
// The addon writes the size of a fetch that became due here (-1: none): see src/segment.rs.
const signal = new Float64Array(3).fill(-1)
native.setSegmentSignal(signal)

const unavailable = (tag, reason) => makeError('SEGMENT_UNAVAILABLE', { tag, reason })

class DenseIds {
  constructor(secret, { clients, tag, sql, index, waitMs, mysql = null, urls = null }) {
    if (secret !== SECRET) {
      throw makeError('INVALID_ARGUMENT', { argument: 'DenseIds', reason: 'is made by denseIds() from shardid/segments' }, TypeError)
    }
    this.tag = tag
    this.waitMs = waitMs
    /** Numbers taken from the database and neither handed out nor given back by `close()`. */
    this.skipped = 0n
    /** Segments fetched. */
    this.fetches = 0
    // One pg.Client per ticket server; segments are taken from them in turn.
    this._clients = clients
    this._broken = clients.map(() => false)
    this._turn = 0
    this._lastServer = 0
    this._sql = sql
    this._index = index
    this._closed = false
    this._error = null
    this._inFlight = null
    // MySQL and MariaDB: the core's statements for them (shardid/mysql), on mysql2.
    this._mysql = mysql
    this._urls = urls
    // A session the server ends is an 'error' event on the client: the next fetch reconnects.
    clients.forEach((client, i) => this._listen(client, i))
  }

  _listen(client, i) {
    if (client) client.on('error', (err) => { this._error = err; this._broken[i] = true })
  }

  // One segment from `client`: [first, count, stride]. The client holds the event loop only
  // while the statement is in flight (idle.js).
  _take(client, server, size) {
    return holdWhileBusy(client, async () => {
      if (this._mysql) return this._mysql.take(client, server, this.tag, size)
      const { rows } = await client.query({ text: this._sql.take, values: [this.tag, String(size)], rowMode: 'array' })
      return rows[0]
    })
  }

  // Gives the unused rest back; whether it was.
  _giveBack(client, first, end) {
    return holdWhileBusy(client, async () => {
      if (this._mysql) return this._mysql.giveBack(client, this.tag, first, end)
      const { rows } = await client.query({ text: this._sql.giveBack, values: [this.tag, first, end], rowMode: 'array' })
      return rows[0][0] === true
    })
  }

  // Whether `err` lost the session (reconnect at the next fetch).
  _lost(err) {
    if (this._mysql) return err.code !== SQLSTATES.unknownTag
    return sessionLost(err)
  }

  // Starts the fetch the addon signalled, if any: one at a time (the core makes sure).
  _due() {
    const size = signal[0]
    if (size < 0) return
    signal[0] = -1
    this._inFlight = this._fetch(size).finally(() => { this._inFlight = null })
  }

  // Takes one segment from the first server that answers, starting after the last one used.
  async _fetch(size) {
    let error = null
    for (let attempt = 0; attempt < this._clients.length; attempt++) {
      const server = (this._turn + attempt) % this._clients.length
      try {
        const client = await this._client(server)
        const [first, count, stride] = await this._take(client, server, size)
        native.segmentFill(this._index, String(first), String(count), String(stride))
        this._lastServer = server
        this._turn = (server + 1) % this._clients.length
        this.fetches += 1
        this._error = null
        return
      } catch (err) {
        // A server that cannot be reached is DATABASE_UNREACHABLE (the driver's error as its
        // cause); the database's own errors are kept as they are.
        error = unreachable(err) ? unreachableError(err) : err
        if (this._lost(err)) this._broken[server] = true // reconnect next time
        if (err.code === SQLSTATES.unknownTag) break
      }
    }
    native.segmentFetchFailed(this._index)
    this._error = error
  }

  // The connected client of `server`, replaced by a new one when its session was lost.
  async _client(server) {
    if (!this._broken[server]) return this._clients[server]
    const old = this._clients[server]
    if (this._mysql) {
      if (old) old.end().catch(() => {})
      this._clients[server] = null
      const connection = await this._mysqlModule.connect(this._urls[server])
      idle(connection) // held only while a statement is in flight (idle.js)
      this._listen(connection, server)
      this._clients[server] = connection
      this._broken[server] = false
      return connection
    }
    old.end().catch(() => {})
    const pg = require('pg')
    const client = new pg.Client(old.connectionParameters)
    this._listen(client, server)
    await client.connect()
    idle(client)
    this._clients[server] = client
    this._broken[server] = false
    return client
  }

  _check() {
    if (this._closed) throw closedError(`DenseIds of tag ${this.tag}`)
  }

  // Why no segment is there: what the last fetch met (a database that cannot be reached, or
  // its error), or a fetch still under way after `waitMs`.
  _failure(waited = true) {
    const error = this._error
    if (this._closed) return closedError(`DenseIds of tag ${this.tag}`)
    if (error && error.code === SQLSTATES.unknownTag) return makeError('UNKNOWN_TAG', { tag: this.tag })
    if (error && ['NOT_MYSQL', 'UNSUPPORTED'].includes(error.code)) return error // not a server to wait for
    let reason
    if ((this._inFlight || !error) && !waited) reason = 'both segments are used up and the next one is still being fetched (the Async methods wait for it)'
    else if (this._inFlight || !error) reason = `no segment arrived within ${this.waitMs} ms`
    else if (error.code === 'DATABASE_UNREACHABLE') reason = error.message
    else reason = `the last fetch failed: ${describe(error)}`
    const err = unavailable(this.tag, reason)
    return error ? withCause(err, error) : err
  }

  /**
   * The next ID (a bigint), synchronously, from memory. Throws `SEGMENT_UNAVAILABLE` (retry,
   * or use `nextIdAsync`) when both segments are used up and the fetch has not arrived.
   */
  nextId() {
    this._check()
    const id = native.segmentNextId(this._index)
    this._due()
    if (id == null) throw this._failure(false)
    return id
  }

  /** The next ID, waiting (at most `waitMs`) for a segment when both are used up. */
  async nextIdAsync() {
    this._check()
    const deadline = Date.now() + this.waitMs
    for (;;) {
      const id = native.segmentNextId(this._index)
      this._due()
      if (id != null) return id
      if (this._fatal() || Date.now() >= deadline) throw this._failure()
      await (this._inFlight ?? new Promise((resolve) => setTimeout(resolve, 20)))
      this._check()
    }
  }

  // Why `denseIds()` got no first segment: a database that cannot be reached is said as such
  // (no allocator was made, so nothing is "unavailable"); otherwise as `_failure()`.
  _startFailure() {
    if (this._error?.code === 'DATABASE_UNREACHABLE') return this._error
    return this._failure()
  }

  // An error that waiting cannot mend.
  _fatal() {
    return Boolean(this._error && [SQLSTATES.unknownTag, 'NOT_MYSQL', 'UNSUPPORTED'].includes(this._error.code))
  }

  /** `n` IDs (a BigUint64Array), synchronously; throws `SEGMENT_UNAVAILABLE` as `nextId` does. */
  nextIds(n) {
    this._check()
    const ids = native.segmentNextIds(this._index, n)
    this._due()
    if (ids.length < Number(n)) throw this._failure(false) // the IDs taken are lost: a hole, never a duplicate
    return ids
  }

  /** `n` IDs, waiting for segments as `nextIdAsync` does. */
  async nextIdsAsync(n) {
    this._check()
    const want = Number(n)
    const out = new BigUint64Array(want)
    let have = 0
    let deadline = Date.now() + this.waitMs
    while (have < want) {
      const ids = native.segmentNextIds(this._index, want - have)
      this._due()
      out.set(ids, have)
      have += ids.length
      if (ids.length > 0) { deadline = Date.now() + this.waitMs; continue }
      if (this._fatal() || Date.now() >= deadline) throw this._failure()
      await (this._inFlight ?? new Promise((resolve) => setTimeout(resolve, 20)))
      this._check()
    }
    return out
  }

  /** Gives the unused rest back (a restart then continues at the next number) and ends the
   *  connection; later calls throw `CLOSED`. Closing twice is fine. */
  close() {
    if (this._closed) return Promise.resolve()
    this._closed = true
    return holdingLoop(() => this._close())
  }

  async _close() {
    if (this._inFlight) await this._inFlight
    const unused = native.segmentUnused(this._index)
    try {
      if (unused !== null) {
        this.skipped += BigInt(unused.lost)
        let returned = false
        try {
          const client = await this._client(this._lastServer)
          returned = await this._giveBack(client, unused.first, unused.end)
        } catch {
          // A server that is down keeps the rest: a hole, counted in `skipped`.
        } finally {
          if (!returned) this.skipped += BigInt(unused.count)
        }
      }
    } finally {
      await Promise.all(this._clients.map((client) => client && client.end().catch(() => {})))
    }
  }
}
if (Symbol.asyncDispose) DenseIds.prototype[Symbol.asyncDispose] = DenseIds.prototype.close

/**
 * `await denseIds({ connectionString, tag, schema = 'seg', minSize = 1000, maxSize = 1000000,
 * targetMs = 60000, waitMs = 5000 })`: dense IDs of `tag`, from segments of the PostgreSQL
 * server (`client` may replace `connectionString`: an unconnected `pg.Client` it then owns).
 * `connectionString` may be a list of ticket servers (each with the DDL of its index): segments
 * are then taken from whichever answers, in turn (IDs interleave across servers).
 * Resolves once the first segment is in memory; rejects with `UNKNOWN_TAG` for a tag never
 * created.
 */
async function denseIds(options) {
  const o = options ?? {}
  if (typeof o.tag !== 'string' || o.tag.length === 0 || Buffer.byteLength(o.tag) > 200) {
    throw makeError('INVALID_ARGUMENT', { argument: 'tag', reason: 'must be 1 to 200 bytes of text' }, TypeError)
  }
  // The core's statements; INVALID_ARGUMENT for a schema name that is not a plain identifier.
  const sql = native.segmentSql(o.schema ?? 'seg')
  const servers = Array.isArray(o.connectionString) ? o.connectionString : [o.connectionString]
  if (!o.client && servers.some(isMysqlUrl)) return mysqlDenseIds(o, servers)
  const index = native.segmentNew(o.minSize ?? 1000, o.maxSize ?? 1000000, o.targetMs ?? 60000)
  let clients = o.client ? [o.client] : null
  if (!clients) {
    let pg
    try {
      pg = require('pg')
    } catch {
      throw makeError('UNSUPPORTED', { reason: 'shardid/segments needs the pg package: npm install pg' })
    }
    clients = servers.map((connectionString) => new pg.Client({ connectionString }))
  }
  // A server that is down at start-up is only its share: it is retried at its turn.
  const connected = await Promise.allSettled(clients.map((client) => client.connect()))
  const ids = new DenseIds(SECRET, { clients, tag: o.tag, sql, index, waitMs: o.waitMs ?? 5000 })
  connected.forEach((result, i) => {
    if (result.status === 'rejected') ids._broken[i] = true
    else idle(clients[i]) // held only while a statement is in flight (idle.js)
  })
  // The first segment, so that the first synchronous nextId() has one.
  native.segmentPrime(index)
  ids._due()
  await ids._inFlight
  if (ids.fetches === 0) {
    await holdingLoop(() => Promise.all(clients.map((client) => client.end().catch(() => {}))))
    throw ids._startFailure()
  }
  return ids
}

const isMysqlUrl = (text) => typeof text === 'string' && (text.startsWith('mysql://') || text.startsWith('mariadb://'))

// denseIds() for MySQL and MariaDB URLs: mysql2 connections, the core's MySQL statements.
async function mysqlDenseIds(o, urls) {
  if (!urls.every(isMysqlUrl)) {
    throw makeError('INVALID_ARGUMENT', { argument: 'connectionString', reason: 'must all be mysql:// URLs or all PostgreSQL connection strings' }, TypeError)
  }
  const mysql = require('./mysql.js')
  urls.forEach(mysql.parseUrl) // INVALID_ARGUMENT on url, now
  const segments = new mysql.Segments(o.schema ?? 'seg')
  const index = native.segmentNew(o.minSize ?? 1000, o.maxSize ?? 1000000, o.targetMs ?? 60000)
  // Connected at the first fetch (a server that is down is only its share, as with pg).
  const clients = urls.map(() => null)
  const ids = new DenseIds(SECRET, { clients, tag: o.tag, sql: null, index, waitMs: o.waitMs ?? 5000, mysql: segments, urls })
  ids._mysqlModule = mysql
  ids._broken.fill(true)
  native.segmentPrime(index)
  ids._due()
  await ids._inFlight
  if (ids.fetches === 0) {
    await holdingLoop(() => Promise.all(clients.map((client) => client && client.end().catch(() => {}))))
    throw ids._startFailure()
  }
  return ids
}

/**
 * The PostgreSQL DDL of dense IDs from segments in `schema` (default `seg`): the table of tags
 * and the functions, to run once (a migration, or `psql -1 -f -`). The same text as
 * `python -m shardid.sql --segments`; `{ servers, index }` renders ticket server `index` of
 * `servers`, which hands out only the numbers congruent to `index`.
 */
function ddl(schema = 'seg', { servers = 1, index = 0 } = {}) {
  return native.segmentsDdl(schema, servers, index)
}

module.exports = { denseIds, DenseIds, ddl }
