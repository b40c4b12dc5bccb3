'use strict'
// shardid/dictionary: a string <-> ID dictionary on PostgreSQL, with `pg` (an optional peer
// dependency), or on MySQL and MariaDB with `mysql2` (a `mysql://` URL: shardid/mysql). A string and a topic in, that string's ID out (a bigint), the same one forever;
// IDs of a topic are dense, from 0. The cache, the batch logic, the checks, the statements and
// the choice of server are the core's (shardid::dictionary, through the addon), so this file
// only sends statements.

const native = require('./native.generated.js')
const { makeError, sessionLost, unreachable, unreachableError, closedError } = require('./errors.js')
const { holdWhileBusy, holdingLoop } = require('./idle.js')
const { SQLSTATES, STATS } = require('./core.generated.js')

// The core's default capacity of a cache, each way.
const DEFAULT_CACHE = new native.DictCache().capacity

class Dictionary {
  /**
   * `new Dictionary({ connectionString, topic, schema = 'dict', cacheSize = 100000 })`: the
   * dictionary of `topic` on the server at `connectionString` (a list: topics spread over the
   * servers by `serverFor`). `pool` may replace `connectionString`: a `pg.Pool` (or anything
   * with `query()`) of yours, not ended by `close()`.
   */
  constructor(options) {
    const o = options ?? {}
    native.dictionaryCheckTopic(o.topic)
    this.topic = o.topic
    this.schema = o.schema ?? 'dict'
    this._sql = native.dictionarySql(this.schema)
    /** The two-way cache (the core's): `cache.size`, `cache.capacity`, `cache.clear()`. */
    this.cache = new native.DictCache(o.cacheSize)
    this._closed = false
    this._connectTo(o)
    // Reported to exporters (`shardid_dictionary_*{schema,topic}`) until `close()`.
    this.cache.register(this.schema, this.topic)
  }

  // Where the topic's statements go: `pool`, or its server of `connectionString`.
  _connectTo(o) {
    if (o.pool) {
      this.server = 0
      this._pool = o.pool
      this._ownsPool = false
      return
    }
    const servers = Array.isArray(o.connectionString) ? o.connectionString : [o.connectionString]
    if (servers.length === 0 || !servers.every((s) => typeof s === 'string')) {
      throw makeError('INVALID_ARGUMENT', { argument: 'connectionString', reason: 'must be a connection string or a non-empty list of them' }, TypeError)
    }
    /** The index in the list of the server that holds this topic. */
    this.server = native.dictionaryServerFor(this.topic, servers.length)
    servers.forEach(isMysqlUrl) // INVALID_ARGUMENT now for a URL no driver takes (the core's rule)
    if (isMysqlUrl(servers[this.server])) {
      // MySQL and MariaDB: the core's statements and steps for them (shardid/mysql), on one
      // mysql2 connection, one call at a time (a call may be a transaction).
      const mysql = require('./mysql.js')
      mysql.parseUrl(servers[this.server]) // INVALID_ARGUMENT on url, now
      this._mysql = new mysql.Dictionary(this.schema, this.topic)
      this._mysqlModule = mysql
      this._url = servers[this.server]
      this._connection = null
      this._queue = Promise.resolve()
      return
    }
    let pg
    try {
      pg = require('pg')
    } catch {
      throw makeError('UNSUPPORTED', { reason: 'shardid/dictionary needs the pg package: npm install pg' })
    }
    // One connection, opened at the first call and again after the server ends it. Idle, it
    // does not keep the process alive (`allowExitOnIdle`): a script that is done exits.
    this._pool = new pg.Pool({ connectionString: servers[this.server], max: 1, allowExitOnIdle: true })
    this._pool.on('error', () => {}) // an idle connection lost: the pool opens another
    this._ownsPool = true
  }

  /** What this dictionary did: hits and misses of its cache both ways, statements sent and
   *  sent again (`idHits`, `idMisses`, `valueHits`, `valueMisses`, `statements`, `retries`), as
   *  bigints named by the core's table. */
  stats() {
    const values = this.cache.stats()
    const out = {}
    STATS.dictionary.forEach((name, i) => { out[name] = values[i] })
    return out
  }

  // CLOSED once `close()` was called: every call refuses, cached or not.
  _open() {
    if (this._closed) throw closedError(`the Dictionary of topic ${this.topic}`)
  }

  // One statement, its one value; sent once more on a new connection if the session was lost
  // (every statement here is safe to repeat). A database that cannot be reached, or whose
  // connection broke twice, is DATABASE_UNREACHABLE (pg's error as its cause).
  async _query(text, values) {
    for (let attempt = 1; ; attempt++) {
      this.cache.sent(attempt > 1)
      try {
        const { rows } = await this._pool.query({ text, values, rowMode: 'array' })
        return rows[0][0]
      } catch (err) {
        if (err.code === SQLSTATES.unknownTopic) throw makeError('UNKNOWN_TOPIC', { topic: this.topic })
        if (err.code === SQLSTATES.topicDropped) throw makeError('TOPIC_DROPPED', { topic: this.topic })
        if (attempt < 2 && sessionLost(err)) continue
        throw unreachable(err) ? unreachableError(err) : err
      }
    }
  }

  // One step of the MySQL protocol, after the calls before it; sent once more on a new
  // connection if the session was lost (a transaction the server lost rolled back whole).
  _runMysql(step, ...args) {
    const run = async () => {
      for (let attempt = 1; ; attempt++) {
        this.cache.sent(attempt > 1)
        try {
          if (!this._connection) this._connection = await this._mysqlModule.connect(this._url)
          return await holdWhileBusy(this._connection, () => this._mysql[step](this._connection, ...args))
        } catch (err) {
          if (err.code === SQLSTATES.unknownTopic) throw makeError('UNKNOWN_TOPIC', { topic: this.topic })
          if (err.code === SQLSTATES.topicDropped) throw makeError('TOPIC_DROPPED', { topic: this.topic })
          if (this._connection && this._mysqlModule.lost(err)) {
            this._connection.destroy()
            this._connection = null
            if (attempt < 2) continue
            throw unreachableError(err)
          }
          throw err
        }
      }
    }
    const result = this._queue.then(run, run)
    this._queue = result.catch(() => {})
    return result
  }

  /** Creates the topic (IDs from 0) if it does not exist; a dropped name throws `TOPIC_DROPPED`. */
  async create() {
    this._open()
    if (this._mysql) return void (await this._runMysql('create'))
    await this._query(this._sql.createTopic, [this.topic])
  }

  /** Drops the topic: its strings stay readable, nothing new is assigned, its name is never reused. */
  async drop() {
    this._open()
    if (this._mysql) return void (await this._runMysql('drop'))
    await this._query(this._sql.dropTopic, [this.topic])
  }

  /** The ID of `value` (a bigint), assigned (the topic's next) if it is new. */
  async id(value) {
    this._open()
    const cached = this.cache.id(value)
    if (cached !== null) return cached
    return (await this.ids([value]))[0]
  }

  /** The IDs of `values`, in order; new strings get the topic's next IDs in the order they first appear. */
  async ids(values) {
    return this._strings(values, this._sql?.ids, 'ids')
  }

  /** The IDs of `values`, `null` for a string never assigned: never assigns. */
  async lookup(values) {
    return this._strings(values, this._sql?.lookup, 'lookup')
  }

  async _strings(values, sql, step) {
    this._open()
    if (!Array.isArray(values)) values = Array.from(checkIterable(values, 'values'))
    const plan = this.cache.planIds(values)
    if (plan.misses.length === 0) return plan.ids
    const answers = this._mysql ? await this._runMysql(step, plan.misses) : await this._query(sql, [this.topic, plan.misses])
    return this.cache.completeIds(values, plan.ids, plan.misses, answers)
  }

  /** The string of `id`, `null` if the topic never assigned it. */
  async value(id) {
    this._open()
    const cached = this.cache.value(id)
    if (cached !== null) return cached
    return (await this.values([id]))[0]
  }

  /** The strings of `ids`, in order, `null` for an ID never assigned. */
  async values(ids) {
    this._open()
    if (!Array.isArray(ids)) ids = Array.from(checkIterable(ids, 'ids'))
    const plan = this.cache.planValues(ids)
    if (plan.misses.length === 0) return plan.values
    const answers = this._mysql
      ? await this._runMysql('values', plan.misses)
      : await this._query(this._sql.values, [this.topic, plan.misses])
    return this.cache.completeValues(plan.ids, plan.values, plan.misses, answers)
  }

  /** Ends the connection (a pool of yours is left alone). Later calls reject with `CLOSED`.
   *  Closing twice is fine. */
  async close() {
    if (this._closed) return
    this._closed = true
    this.cache.unregister() // exporters no longer report it (as a lease closed)
    // Held by a timer meanwhile: the idle connection no longer holds the event loop.
    await holdingLoop(async () => {
      if (this._mysql) {
        await this._queue
        if (this._connection) await this._connection.end().catch(() => {})
        this._connection = null
        return
      }
      if (this._ownsPool) await this._pool.end().catch(() => {})
    })
  }
}
if (Symbol.asyncDispose) Dictionary.prototype[Symbol.asyncDispose] = Dictionary.prototype.close

function checkIterable(value, argument) {
  if (typeof value === 'string' || value == null || typeof value[Symbol.iterator] !== 'function') {
    throw makeError('INVALID_ARGUMENT', { argument, reason: 'must be an array (or another iterable), not ' + (typeof value === 'string' ? 'one string' : String(value)) }, TypeError)
  }
  return value
}

/** The PostgreSQL DDL of the dictionary in `schema` (the same text as `python -m shardid.sql --dictionary`). */
function ddl(schema = 'dict') {
  return native.dictionaryDdl(schema)
}

/** Which of `servers` servers holds `topic`: FNV-1a 64, then jump consistent hash (the same in every shardid package). */
function serverFor(topic, servers) {
  return native.dictionaryServerFor(topic, servers)
}

// Whether a connection string names MySQL or MariaDB, by the core's one rule for every client
// (shardid::sql::Dialect::of_url): INVALID_ARGUMENT at once for a URL no driver takes.
const isMysqlUrl = (text) => typeof text === 'string' && native.databaseOfUrl(text, 'connectionString') !== 'postgres'

module.exports = { Dictionary, ddl, serverFor, DEFAULT_CACHE }
