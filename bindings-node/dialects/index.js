'use strict'
// The databases shardid's Node drivers run on, each one dialect object (postgres.js over pg,
// mysql.js over mysql2, sqlite.js over better-sqlite3 or node:sqlite), and what every driver shares over them: the choice of dialect, made
// once from the core's one rule for URLs (shardid::sql::Dialect::of_url), and `Link`, one
// connection a driver owns. The segments, serials, dictionary, lease and status drivers are
// written once over a dialect; what tells the databases apart is in the dialect files alone.
//
// A dialect has: `name` ('postgres', 'mysql' or 'sqlite', the core's family), `lease` ({ sql,
// module }: the lease protocol's first SQL dialect and the entry point that takes it; null: no
// shard leases on it), `schema(given, fallback)` (the schema an entry point uses), `check(url, argument)`
// (INVALID_ARGUMENT now for a URL its driver would refuse), `opener(target, module, options)`
// (an async function that opens a new connection: DATABASE_UNREACHABLE, NOT_MYSQL or
// UNSUPPORTED when it cannot), `watch(conn, onLost)`, `destroy(conn)`, `end(conn)`,
// `lost(err)` (the connection is gone: open another), `unreachable(err)` (the error says the
// server cannot be reached), `missing(err)` (the schema's DDL was not run), `code(err)` (the error's code as the lease protocol reads it),
// `rows(conn, text, values)` and `row(...)` (rows as arrays; the first or null), `adopt(conn)`
// (a connection of the caller's, ready for `rows`), and the protocols the core renders:
// `segments(schema)`, `dictionary(schema, topic)`, `serials(schema)`.

const native = require('../native.generated.js')
const { makeError, unreachableError } = require('../errors.js')
const { holdWhileBusy, idle } = require('../idle.js')

const nothing = () => {}

// The core's dialect names (Dialect::name, family_name) and the file of each.
const DIALECTS = {
  postgres: () => require('./postgres.js'),
  mysql: () => require('./mysql.js'),
  mariadb: () => require('./mysql.js'),
  sqlite: () => require('./sqlite.js'),
}

/** The dialect of the core's name `name` ('postgres', 'mysql', 'mariadb' or 'sqlite'). */
function byName(name) {
  const dialect = DIALECTS[name]
  if (dialect === undefined) throw new Error(`shardid: no Node dialect for the core's ${JSON.stringify(name)}`)
  return dialect()
}

/**
 * The dialect of `target`: a URL or connection string by the core's rule (INVALID_ARGUMENT on
 * `argument` at once for one no driver takes, then for one its driver would refuse), and
 * PostgreSQL for anything else (a `pg.Client`, or nothing: pg's environment variables).
 */
function dialectOf(target, argument) {
  if (typeof target !== 'string') return byName('postgres')
  const dialect = byName(native.databaseOfUrl(target, argument))
  dialect.check(target, argument)
  return dialect
}

/**
 * `err` (a driver's error opening a connection to `url`) and what it holds (its stack, its
 * string fields, its causes, an AggregateError's errors) without the password of `url`, in
 * place, by the core's rule (native.redacted): a driver may quote the connection string or
 * its password, and its error is the cause every message, log and `util.inspect` of ours
 * shows. Every dialect's opener calls it; returns `err`.
 */
function redact(err, url, depth = 0) {
  if (typeof url !== 'string' || err === null || typeof err !== 'object' || depth > 8) return err
  for (const name of Object.getOwnPropertyNames(err)) {
    const value = err[name]
    try {
      if (typeof value === 'string') err[name] = native.redacted(value, url)
    } catch {} // a read-only field
  }
  if (Array.isArray(err.errors)) for (const e of err.errors) redact(e, url, depth + 1)
  if (err.cause !== err) redact(err.cause, url, depth + 1)
  return err
}

/** The one dialect of every target of a list (of ticket servers): INVALID_ARGUMENT when they
 *  name different databases, or more than one SQLite file (one file has no ticket servers:
 *  two would hand out the same numbers). */
function dialectOfAll(targets, argument) {
  const dialects = targets.map((target) => dialectOf(target, argument))
  if (dialects.some((d) => d !== dialects[0])) {
    throw makeError('INVALID_ARGUMENT', { argument, reason: 'must all be mysql:// URLs, all sqlite:/// URLs or all PostgreSQL connection strings' }, TypeError)
  }
  if (dialects[0].name === 'sqlite' && targets.length > 1) {
    throw makeError('INVALID_ARGUMENT', { argument, reason: 'names one sqlite:/// file: SQLite has no ticket servers' }, TypeError)
  }
  return dialects[0]
}

/**
 * The error of a statement that failed on `dialect` in `schema`, as every entry point that
 * creates something reports it: DATABASE naming the DDL to run when the schema lacks it,
 * DATABASE_UNREACHABLE when the server cannot be reached, else the driver's own.
 */
function creationError(dialect, err, schema, ddl) {
  if (dialect.missing(err)) {
    const command = `npx shardid sql --schema ${schema} ${ddl}${dialect.name === 'postgres' ? '' : ` --dialect ${dialect.name}`}`
    const e = makeError('DATABASE', { reason: `${schema} has no shardid ${ddl.slice(2)} tables: run their DDL once first (${command}) (${err.message})` })
    e.cause = err
    return e
  }
  return dialect.unreachable(err) ? unreachableError(err) : err
}

/**
 * The one rule for an integer a driver answered, before it reaches the addon: its decimal text.
 * What a driver answers for a `bigint` column depends on settings that are the application's,
 * global to its copy of the driver: pg's type parsers (a string by default; a bigint after
 * `int8AsBigInt(pg.types)`; a number after a parser of the application's own), mysql2's
 * `supportBigNumbers` / `bigNumberStrings` (a number, or a string past 2^53, or always a
 * string). The dialects ask for text where the driver lets a statement choose (pg's per-query
 * `types`, mysql2's per-query options), and every integer is read through this rule anyway, so
 * a setting no statement can override (a pool of the caller's, a driver that ignores the
 * option) is read the same. A number past 2^53 is refused as DATABASE rather than used: the
 * driver may have rounded it, and a rounded ID is another ID. `null` (SQL NULL) stays null.
 */
function exact(value) {
  if (value === null || value === undefined) return null
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'string' && /^-?[0-9]+$/.test(value)) return value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  const what = typeof value === 'number' ? `the number ${value}, past 2^53 where a JavaScript number may have been rounded` : `${typeof value} ${JSON.stringify(String(value)).slice(0, 40)}`
  throw makeError('DATABASE', { reason: `the driver answered ${what} where an integer was expected: read bigint columns as strings or bigints (pg's default or int8AsBigInt; mysql2's supportBigNumbers and bigNumberStrings)` })
}

/** `exact` of each value of a driver's array (a `bigint[]` answer). */
function exactAll(values) {
  if (!Array.isArray(values)) throw makeError('DATABASE', { reason: `the driver answered ${typeof values} where an array of integers was expected` })
  return values.map(exact)
}

/** The dialect of a connection of the caller's (a pg Client or Pool, a mysql2 connection or pool). */
function dialectOfConnection(conn) {
  // A SQLite handle (better-sqlite3's Database, node:sqlite's DatabaseSync: `prepare`, no
  // `query`): the report's statements are PostgreSQL's and the MySQL family's.
  if (typeof conn.prepare === 'function' && typeof conn.query !== 'function') {
    throw makeError('UNSUPPORTED', { reason: 'a SQLite connection: not in the Node package yet' })
  }
  const mysql2 = typeof conn.execute === 'function' || conn.config?.connectionConfig || conn.connection?.config
  return byName(mysql2 ? 'mysql' : 'postgres')
}

/**
 * One connection of a driver: opened at its first use and again after the server ended it,
 * one use at a time, holding the event loop only while a statement is in flight (idle.js).
 * `given` (a client or pool of the caller's) is used as it is: never reopened, dropped or ended.
 */
class Link {
  constructor(dialect, open, given = null) {
    this.dialect = dialect
    this._open = open
    this._conn = given
    this._owned = given === null
    this._broken = false
    this._connecting = null
    this._queue = Promise.resolve()
    this._queued = false
  }

  /** Whether the next use opens a new connection. */
  get fresh() {
    return this._owned && (this._conn === null || this._broken)
  }

  /** The connection, opened if need be. */
  connection() {
    if (!this.fresh) return Promise.resolve(this._conn)
    this._connecting ??= (async () => {
      this.drop()
      const conn = await this._open()
      // A session the server ends (or a dropped connection) is an event on the connection,
      // which would end the process if nobody listened.
      this.dialect.watch(conn, () => { if (this._conn === conn) this._broken = true })
      idle(conn)
      this._conn = conn
      this._broken = false
      return conn
    })().finally(() => { this._connecting = null })
    return this._connecting
  }

  /** `fn(conn)` after the uses before it (a use may be a transaction); a connection it finds
   *  lost is dropped, the next use opens another. A pool of the caller's is not queued. */
  use(fn) {
    const run = () => this._use(fn)
    if (!this._owned) return run()
    // Queued only behind a use still under way (the common case, none, costs no turn).
    const result = this._queued ? this._queue.then(run, run) : run()
    const settled = result.then(nothing, nothing)
    this._queue = settled
    this._queued = true
    settled.then(() => { if (this._queue === settled) this._queued = false })
    return result
  }

  _use(fn) {
    if (this.fresh) return this.connection().then((conn) => this._on(conn, fn))
    return this._on(this._conn, fn)
  }

  _on(conn, fn) {
    return holdWhileBusy(conn, () => fn(conn)).catch((err) => {
      if (this.dialect.lost(err)) this.drop()
      throw err
    })
  }

  /** One statement: its first row (an array), or null. */
  run(text, values) {
    return this.use((conn) => this.dialect.row(conn, text, values))
  }

  /** Forgets the connection (its server ended it, or it broke): the next use opens another. */
  drop() {
    const conn = this._conn
    if (!this._owned || conn === null) return
    this._conn = null
    this._broken = false
    this.dialect.destroy(conn)
  }

  /** When the uses begun so far have settled. */
  drained() {
    return this._queue
  }

  /** Ends the connection (one of the caller's is left alone), a statement in flight or not. */
  async end() {
    await this._connecting?.catch(() => {})
    if (!this._owned) return
    const conn = this._conn
    this._conn = null
    // The loop is held until the goodbye is sent.
    if (conn === null) return
    if (this._broken) return this.dialect.destroy(conn)
    await holdWhileBusy(conn, () => this.dialect.end(conn))
  }
}

// -- the executor of the core's segment protocol ------------------------------------------------

/** A row's cells as the protocol reads them: strings, booleans, null. */
const cells = (row) => (row == null ? null : row.map((c) => (c == null ? null : typeof c === 'boolean' ? c : String(c))))

// The operations begun on each protocol, one after the other: a serials' allocator may fetch
// two periods at once, and a protocol holds one operation.
const operations = new WeakMap()

/** Starts an operation on `protocol` (`start(protocol)`: a take or a give-back) once the one
 *  before it is over, and runs it on `links` (one per server, a dialect's `ready(conn)` naming
 *  its server's dialect); its last step, and the last error the driver raised. */
function execute(protocol, start, links, ready) {
  const run = async () => {
    start(protocol)
    let error = null
    for (;;) {
      const step = protocol.next()
      if (step.step !== 'connect' && step.step !== 'run') return { step, error }
      const link = links[step.server]
      try {
        if (step.step === 'connect') protocol.connected(await link.use(ready))
        else protocol.answer(cells(await link.run(step.sql, step.values)))
      } catch (err) {
        error = err
        protocol.failed(step.step === 'run' ? link.dialect.code(err) : null)
      }
    }
  }
  const before = operations.get(protocol)
  const done = before ? before.then(run, run) : run()
  operations.set(protocol, done)
  return done
}

module.exports = { byName, dialectOf, dialectOfAll, dialectOfConnection, creationError, exact, exactAll, execute, Link, redact }
