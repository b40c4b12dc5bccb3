'use strict'
// shardid/dictionary: a string <-> ID dictionary on PostgreSQL, with `pg` (an optional peer
// dependency), on MySQL and MariaDB (a `mysql://` URL), with `mysql2`, or in a SQLite file (a
// `sqlite:///` URL), with `better-sqlite3` or `node:sqlite`: one driver over the URL's dialect
// (dialects/). A string and a topic in, that string's ID out (a bigint), the same
// one forever; IDs of a topic are dense, from 0. The cache, the batch logic, the checks, the
// statements and the choice of server are the core's (shardid::dictionary, through the addon),
// so this file only sends statements.

const native = require('./native.generated.js')
const { makeError, closedError } = require('./errors.js')
const { holdingLoop } = require('./idle.js')
const { byName, dialectOf, creationError, exactAll, Link } = require('./dialects/index.js')
const { SQLSTATES, STATS } = require('./core.generated.js')

// The core's default capacity of a cache, each way.
const DEFAULT_CACHE = new native.DictCache().capacity

class Dictionary {
  /**
   * `new Dictionary(url, topic, { schema = 'dict', cacheSize = 100000 })` (or one object,
   * `new Dictionary({ connectionString, topic, schema, cacheSize })`): the dictionary of
   * `topic` on the server at `url` (a PostgreSQL connection string or a `mysql://` URL; a
   * list: topics spread over the servers by `serverFor`). `pool` may replace
   * `connectionString`: a `pg.Pool` (or anything with `query()`) of yours, not ended by
   * `close()`.
   */
  constructor(url, topic, options) {
    const o = typeof url === 'string' || Array.isArray(url) ? { ...options, connectionString: url, topic } : url ?? {}
    native.dictionaryCheckTopic(o.topic)
    this.topic = o.topic
    /** The two-way cache (the core's): `cache.size`, `cache.capacity`, `cache.clear()`. */
    this.cache = new native.DictCache(o.cacheSize)
    this._closed = false
    this._connectTo(o)
    // Reported to exporters (`shardid_dictionary_*{schema,topic}`) until `close()`.
    this.cache.register(this.schema, this.topic)
  }

  // Where the topic's statements go: `pool`, or its server of `connectionString`, on one
  // connection opened at the first call and again after the server ends it (dialects/).
  _connectTo(o) {
    if (o.pool) {
      this.server = 0
      this._link = new Link(byName('postgres'), null, o.pool)
      this.schema = o.schema ?? 'dict'
    } else {
      const servers = Array.isArray(o.connectionString) ? o.connectionString : [o.connectionString]
      if (servers.length === 0 || !servers.every((s) => typeof s === 'string')) {
        throw makeError('INVALID_ARGUMENT', { argument: 'connectionString', reason: 'must be a connection string or a non-empty list of them' }, TypeError)
      }
      /** The index in the list of the server that holds this topic. */
      this.server = native.dictionaryServerFor(this.topic, servers.length)
      // INVALID_ARGUMENT now for a URL no driver takes (the core's rule).
      const dialect = servers.map((url) => dialectOf(url, 'connectionString'))[this.server]
      /** The schema: `dict` by default (`main` on SQLite: the file itself). */
      this.schema = dialect.schema(o.schema, 'dict')
      this._link = new Link(dialect, dialect.opener(servers[this.server], 'shardid/dictionary'))
    }
    this._protocol = this._link.dialect.dictionary(this.schema, this.topic)
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

  // One step of the dialect's protocol (a statement, or a transaction), after the calls before
  // it; sent once more on a new connection if the session was lost (every step is safe to
  // repeat: a transaction the server lost rolled back whole). A database that cannot be
  // reached, or whose connection broke twice, is DATABASE_UNREACHABLE (the driver's error as
  // its cause).
  async _step(step, ...args) {
    const dialect = this._link.dialect
    for (let attempt = 1; ; attempt++) {
      this.cache.sent(attempt > 1)
      try {
        return await this._link.use((conn) => this._protocol[step](conn, ...args))
      } catch (err) {
        if (err.code === SQLSTATES.unknownTopic) throw makeError('UNKNOWN_TOPIC', { topic: this.topic, create: 'Dictionary.create' })
        if (err.code === SQLSTATES.topicDropped) throw makeError('TOPIC_DROPPED', { topic: this.topic })
        if (attempt < 2 && dialect.lost(err)) continue
        throw creationError(dialect, err, this.schema, '--dictionary')
      }
    }
  }

  /** Creates the topic (IDs from 0) if it does not exist (again: nothing); a dropped name
   *  throws `TOPIC_DROPPED`, a schema without the DDL `DATABASE` naming the DDL to run. */
  async create() {
    this._open()
    await this._step('create')
  }

  /** Drops the topic: its strings stay readable, nothing new is assigned, its name is never reused. */
  async drop() {
    this._open()
    await this._step('drop')
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
    return this._strings(values, 'ids')
  }

  /** The IDs of `values`, `null` for a string never assigned: never assigns. */
  async lookup(values) {
    return this._strings(values, 'lookup')
  }

  async _strings(values, step) {
    this._open()
    if (!Array.isArray(values)) values = Array.from(checkIterable(values, 'values'))
    const plan = this.cache.planIds(values)
    if (plan.misses.length === 0) return plan.ids
    // The one rule for what a driver answered (dialects/index.js): decimal text to the addon.
    const answers = exactAll(await this._step(step, plan.misses))
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
    const answers = await this._step('values', plan.misses)
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
      await this._link.drained() // the calls under way end first
      await this._link.end()
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

module.exports = { Dictionary, ddl, serverFor, DEFAULT_CACHE }
