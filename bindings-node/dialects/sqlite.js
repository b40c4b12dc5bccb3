'use strict'
// SQLite, over `better-sqlite3` (an optional peer dependency), or Node's own `node:sqlite`
// (Node 22.13 and later; 22.5 with --experimental-sqlite) when better-sqlite3 is not installed
// (tests/js/run.sh runs the SQLite tests on each): the dialect the drivers of
// dialects/index.js run on for a `sqlite:///relative.db` or `sqlite:////absolute.db` URL. The
// file, the statements, what each connection runs first and the order of the steps are the
// core's (shardid::sql::sqlite, through the addon); this file only executes them.
//
// - One file, no server: a "connection" is the file opened, with the core's CONNECTION_SETUP
//   (busy timeout, WAL, synchronous = FULL); the tables are created on first use (the core's
//   DDL, all IF NOT EXISTS), once per connection. The schema is the file itself (`main`).
// - Every statement runs in autocommit except the dictionary writer's, which the core begins
//   with BEGIN IMMEDIATE (the write lock first, so its re-check sees every committed string).
// - Both drivers are synchronous. The API stays the other dialects' (promises); each statement
//   runs in a turn of the event loop of its own (setImmediate), so a driver never holds the
//   loop longer than one statement; the dictionary writer's transaction (a handful of short
//   statements under the write lock) runs in one turn: yielding inside it would hold every
//   other process's writes for as long as this process's other work takes.
// - Errors, as Python's and Rust's SQLite drivers report them: a file that cannot be used (a
//   missing directory, no permission, a read-only file, a file that is not a SQLite database)
//   is DATABASE_UNREACHABLE, as a server that cannot be reached or is not the database named,
//   with the driver's error as the `cause`; a write lock still held by another connection past
//   the busy timeout is the driver's own error (SQLITE_BUSY: better-sqlite3's `code`,
//   node:sqlite's `errcode` 5 under its code ERR_SQLITE_ERROR), as a server's lock timeout is.

const fs = require('node:fs')
const path = require('node:path')
const native = require('../native.generated.js')
const { makeError, withCause } = require('../errors.js')
const { SQLSTATES } = require('../core.generated.js')
const { exact } = require('./index.js')

// The SQLite result codes the errors are told apart by (the primary code: the low byte).
const PRIMARY = { 5: 'SQLITE_BUSY', 6: 'SQLITE_LOCKED', 8: 'SQLITE_READONLY', 11: 'SQLITE_CORRUPT', 14: 'SQLITE_CANTOPEN', 19: 'SQLITE_CONSTRAINT', 26: 'SQLITE_NOTADB' }

/** The primary result code of a driver's error ('SQLITE_BUSY'), or null. */
function resultCode(err) {
  if (typeof err?.code === 'string' && err.code.startsWith('SQLITE_')) return err.code.split('_', 2).join('_') // better-sqlite3
  if (Number.isInteger(err?.errcode)) return PRIMARY[err.errcode & 0xff] ?? `SQLITE_${err.errcode & 0xff}` // node:sqlite
  return null
}

let loaded = null

/**
 * The driver: better-sqlite3, else `node:sqlite` where Node has it, else UNSUPPORTED naming
 * the package to install (and the entry point that needs it).
 */
function driver(module = 'a sqlite:/// URL') {
  if (loaded) return loaded
  let why = null
  try {
    loaded = betterSqlite3(require('better-sqlite3'))
    return loaded
  } catch (err) {
    why = err
  }
  try {
    loaded = nodeSqlite(require('node:sqlite'))
    return loaded
  } catch {
    // Node before 22.5 (or without --experimental-sqlite before 22.13): no built-in SQLite.
  }
  const err = makeError('UNSUPPORTED', { reason: `${module} needs the better-sqlite3 package for SQLite: npm install better-sqlite3` })
  throw withCause(err, why)
}

// Each driver's `open(file, timeoutMs, { readonly, mustExist })`: `file` opened, read-only or
// not, with a busy timeout of `timeoutMs`; created when missing unless `mustExist` (better-sqlite3
// only: node:sqlite has no such option, and status.js, the one caller, has looked first).

// better-sqlite3: rows as arrays, integers as bigints (IDs pass 2^53).
function betterSqlite3(Database) {
  return {
    name: 'better-sqlite3',
    open: (file, timeoutMs, { readonly = false, mustExist = false } = {}) => new Database(file, { timeout: timeoutMs, readonly, fileMustExist: mustExist }),
    prepare(db, text) {
      const statement = db.prepare(text)
      statement.safeIntegers(true)
      if (statement.reader) statement.raw(true)
      return statement
    },
    all: (statement, values) => (statement.reader ? statement.all(values) : (statement.run(values), [])),
    exec: (db, script) => db.exec(script),
    close: (db) => db.close(),
  }
}

// node:sqlite's DatabaseSync: rows as arrays (setReturnArrays, where Node has it: 22.23 does,
// 22.13 does not; else objects whose values are taken in order: the columns of every statement
// of the core's have distinct names; both ways pass tests/js's SQLite tests), integers as
// bigints (setReadBigInts: IDs pass 2^53). Its errors are ERR_SQLITE_ERROR with SQLite's result
// code in `errcode`. The busy timeout is set with a PRAGMA: DatabaseSync's `timeout` option
// came after 22.5, and an older Node ignores it.
function nodeSqlite({ DatabaseSync }) {
  if (typeof DatabaseSync !== 'function') throw new Error('node:sqlite has no DatabaseSync')
  return {
    name: 'node:sqlite',
    open(file, timeoutMs, { readonly = false } = {}) {
      const db = new DatabaseSync(file, { readOnly: readonly })
      try {
        db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.trunc(Number(timeoutMs) || 0))}`)
      } catch (err) {
        db.close()
        throw err
      }
      return db
    },
    prepare(db, text) {
      const statement = db.prepare(text)
      statement.setReadBigInts(true)
      if (typeof statement.setReturnArrays === 'function') statement.setReturnArrays(true)
      return statement
    },
    all: (statement, values) => statement.all(...values).map((row) => (Array.isArray(row) ? row : Object.values(row))),
    exec: (db, script) => db.exec(script),
    close: (db) => db.close(),
  }
}

/** The error of the driver's `err` on `file`, as the other databases' errors of the same kind. */
function translate(err, file) {
  const code = resultCode(err)
  let e = null
  if (code === 'SQLITE_CANTOPEN') {
    e = makeError('DATABASE_UNREACHABLE', { reason: `cannot open ${file} (${err.message})` })
  } else if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    e = makeError('DATABASE_UNREACHABLE', { reason: `${file} is not a SQLite database, or is damaged (${err.message})` })
  } else if (code === 'SQLITE_READONLY') {
    e = makeError('DATABASE_UNREACHABLE', { reason: `${file} cannot be written (read-only: shardid writes to it) (${err.message})` })
  }
  return e ? withCause(e, err) : err
}

// The turn of the event loop a statement runs in.
const turn = () => new Promise((resolve) => setImmediate(resolve))

// Statements prepared once per connection; a list's statements (one per length) only while few.
const PREPARED = 256

/** One file opened: the driver's handle, its prepared statements, the DDL it ran. */
class Connection {
  constructor(api, db, file) {
    this.api = api
    this.db = db
    this.file = file
    this._prepared = new Map()
    this._created = new Set()
  }

  _statement(text) {
    let statement = this._prepared.get(text)
    if (statement === undefined) {
      statement = this.api.prepare(this.db, text)
      if (this._prepared.size < PREPARED) this._prepared.set(text, statement)
    }
    return statement
  }

  /** Runs one statement now (synchronously): its rows as arrays, integers as bigints. */
  runNow(text, values = []) {
    try {
      return this.api.all(this._statement(text), values)
    } catch (err) {
      throw translate(err, this.file)
    }
  }

  /** Runs `script` (the DDL) once on this connection. */
  createOnce(script) {
    if (this._created.has(script)) return
    try {
      this.api.exec(this.db, script)
    } catch (err) {
      throw translate(err, this.file)
    }
    this._created.add(script)
  }

  /** One statement in a turn of its own. */
  async run(text, values) {
    await turn()
    return this.runNow(text, values)
  }

  close() {
    this._prepared.clear()
    try {
      this.api.close(this.db)
    } catch {
      // Closed already.
    }
  }
}

/** Opens `file` with the core's connection setup: DATABASE_UNREACHABLE when it cannot be
 *  opened (a missing directory), DATABASE when it is not a SQLite database or is read-only. */
function open(file, module, busyTimeoutMs) {
  const api = driver(module)
  // better-sqlite3 refuses a missing directory with a TypeError of its own: said as SQLite's
  // "cannot open" for both drivers.
  if (!fs.existsSync(path.dirname(path.resolve(file)))) {
    throw makeError('DATABASE_UNREACHABLE', { reason: `cannot open ${file}: its directory ${path.dirname(path.resolve(file))} does not exist` })
  }
  let db
  try {
    db = api.open(file, 0) // the busy timeout is the core's setup's, just below
  } catch (err) {
    throw translate(err, file)
  }
  const conn = new Connection(api, db, file)
  try {
    setUp(api, db, busyTimeoutMs)
  } catch (err) {
    conn.close()
    throw translate(err, file)
  }
  return conn
}

/**
 * The core's connection setup on `db`. On a new file that other connections are switching to
 * WAL mode at the same moment, the switch can fail at once with SQLITE_BUSY: SQLite runs no busy
 * handler for a journal-mode change it could deadlock on. So a busy setup is tried again every
 * 10 ms until the busy timeout is over, as the handler would have waited (as the Python and Rust
 * drivers do). The drivers are synchronous: the wait blocks, as the busy handler's would.
 */
function setUp(api, db, busyTimeoutMs) {
  const script = native.sqliteConnectionSetup(busyTimeoutMs)
  const deadline = Date.now() + (busyTimeoutMs ?? 5000)
  for (;;) {
    try {
      api.exec(db, script)
      return
    } catch (err) {
      if (resultCode(err) !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
    }
  }
}

// The value of an integer parameter: SQLite compares a text with an integer as unequal, so
// numbers go as integers (bigints: they pass 2^53).
const int = (value) => BigInt(value)

function serverError(sqlstate, message) {
  const err = new Error(`${message}: ${sqlstate}`)
  err.code = sqlstate // as pg reports a SQLSTATE: the drivers' checks hold for every database
  return err
}

// -- segments and serials ---------------------------------------------------------------------

/** What a segment executor needs besides the core's protocol (shardid::segment::protocol): the
 *  file's tables, made on first use when a connection is first used (as the core's connection
 *  setup), and the statement that creates a tag. */
function segments(schema) {
  const sql = native.sqliteSegmentSql(schema)
  return {
    ready: (conn) => {
      conn.createOnce(sql.ddl)
      return 'sqlite'
    },
    // A tag already there is left as it is (its row answers none).
    createTag: async (conn, tag) => {
      conn.createOnce(sql.ddl)
      await conn.run(sql.createTag, [tag, 1n])
    },
  }
}

/** The statements of serials' registrations: written and read, and compared by the client
 *  (SQLite has no functions); a period's segment is the core's protocol's. */
function serials(schema) {
  const sql = native.sqliteSegmentSql(schema)
  const info = async (conn, tag) => {
    conn.createOnce(sql.ddl)
    const rows = await conn.run(sql.info, [tag])
    if (rows.length === 0) throw serverError(SQLSTATES.unknownTag, `no serial tag ${tag}`)
    const [canonical, zone, maxGap, reset] = rows[0]
    return [canonical, zone, Number(maxGap), reset]
  }
  return {
    info,
    /** Registers `values` (tag, format, zone, canonical, shape, pieces, width, reset, maxGap),
     *  or compares them with the registration already there (SERIAL_MISMATCH). */
    async create(conn, values, format) {
      const [tag, text, zone, canonical, shape, pieces, width, reset, maxGap] = values
      const list = Array.from(pieces)
      conn.createOnce(sql.ddl)
      let rows
      try {
        rows = await conn.run(native.sqliteSerialCreateSql(schema, list.length), [tag, text, zone, canonical, shape, ...list, width, reset, maxGap])
      } catch (err) {
        // Another tag prints this format (the `shape` is unique): as PostgreSQL's create_serial.
        if (resultCode(err.cause ?? err) === 'SQLITE_CONSTRAINT' && /shardid_serials\.shape/.test(err.message)) {
          throw makeError('SERIAL_MISMATCH', { tag, reason: 'another serial tag already prints this format' })
        }
        if (resultCode(err) === 'SQLITE_CONSTRAINT') throw withCause(makeError('INVALID_ARGUMENT', { argument: 'tag', reason: `is refused by the database (${err.message})` }), err)
        throw err
      }
      if (rows.length > 0) return
      const [canonicalThere, zoneThere, maxGapThere] = await info(conn, tag)
      const reason = format ? native.serialMismatch(format._index, canonicalThere, zoneThere) : (canonicalThere !== canonical || zoneThere !== zone ? `registered as ${canonicalThere} in ${zoneThere}` : null)
      if (reason !== null) throw makeError('SERIAL_MISMATCH', { tag, reason })
      if (maxGapThere !== Number(maxGap)) throw makeError('SERIAL_MISMATCH', { tag, reason: `registered with maxGap ${maxGapThere}, not ${maxGap}` })
    },
  }
}

// -- the dictionary -----------------------------------------------------------------------------

/** The dictionary's protocol (see shardid::sql::sqlite's dictionary): lookups in autocommit,
 *  then for strings still missing one BEGIN IMMEDIATE transaction, the core's SqliteAssign, that
 *  reads the topic row, looks again, numbers the rest from the topic's next ID, inserts them and
 *  moves `next` on. Answers are decimal strings. */
class Dictionary {
  constructor(schema, topic) {
    this.schema = schema
    this.topic = topic
    this._ddl = native.sqliteDictionaryDdl(schema) // INVALID_ARGUMENT for a bad name, now
    this._max = native.sqliteMaxList()
    this._statements = new Map()
  }

  _sql(which, n = 0) {
    const key = `${which}/${n}`
    let sql = this._statements.get(key)
    if (sql === undefined) {
      sql = native.sqliteDictionarySql(this.schema, which, n)
      if (n <= 64) this._statements.set(key, sql)
    }
    return sql
  }

  // `list` in pieces one statement takes.
  *_pieces(list) {
    for (let i = 0; i < list.length; i += this._max) yield list.slice(i, i + this._max)
  }

  _unknown() { return serverError(SQLSTATES.unknownTopic, `no topic ${this.topic}`) }
  _dropped() { return serverError(SQLSTATES.topicDropped, `topic ${this.topic} was dropped`) }

  async _found(conn, values) {
    conn.createOnce(this._ddl)
    const found = new Map()
    for (const piece of this._pieces(values)) {
      const rows = await conn.run(this._sql('find', piece.length), [this.topic, ...piece])
      if (rows.length === 0) throw this._unknown()
      for (const [, , value, id] of rows) if (value !== null) found.set(value, exact(id))
    }
    return found
  }

  async lookup(conn, values) {
    const found = await this._found(conn, values)
    return values.map((v) => found.get(v) ?? null)
  }

  async ids(conn, values) {
    const found = await this._found(conn, values)
    const answers = values.map((v) => found.get(v) ?? null)
    if (!answers.includes(null)) return answers
    await turn()
    return this._assign(conn, values, answers)
  }

  // The core's writer (SqliteAssign: BEGIN IMMEDIATE, the re-check under the write lock, the
  // numbering, the inserts, the guarded advance, the commit; the rollback after a failed step),
  // each step sent as it says, in one turn (see the top of this file).
  _assign(conn, values, answers) {
    const missing = [...new Set(values.filter((_, i) => answers[i] === null))]
    const tx = new native.SqliteAssign(this.schema, this.topic, missing)
    let error = null
    for (let step = tx.next(); ;) {
      if (step.step === 'assigned') {
        const byValue = new Map(missing.map((v, i) => [v, step.ids[i]]))
        return values.map((v, i) => answers[i] ?? byValue.get(v))
      }
      if (step.step === 'failed') {
        if (step.why === 'unknownTopic') throw this._unknown()
        if (step.why === 'topicDropped') throw this._dropped()
        throw error ?? makeError('DATABASE', { reason: `the next ID of topic ${this.topic} moved under the write lock` })
      }
      let rows
      try {
        rows = conn.runNow(step.sql, step.values)
      } catch (err) {
        error ??= err // the first: a rollback's own error (none left to roll back) would hide it
        step = tx.failed()
        continue
      }
      step = tx.answer(rows.map((row) => row.map((c) => (c === null ? null : String(c)))))
    }
  }

  async values(conn, ids) {
    conn.createOnce(this._ddl)
    const found = new Map()
    for (const piece of this._pieces(ids)) {
      const rows = await conn.run(this._sql('findValues', piece.length), [this.topic, ...piece.map(int)])
      if (rows.length === 0) throw this._unknown()
      for (const [, id, value] of rows) if (id !== null) found.set(exact(id), value)
    }
    return ids.map((id) => found.get(String(id)) ?? null)
  }

  async _state(conn) {
    const rows = await conn.run(this._sql('state'), [this.topic])
    if (rows.length === 0) throw this._unknown()
    return Boolean(Number(rows[0][0]))
  }

  async create(conn) {
    conn.createOnce(this._ddl)
    await conn.run(this._sql('createTopic'), [this.topic])
    if (await this._state(conn)) throw this._dropped()
  }

  async drop(conn) {
    conn.createOnce(this._ddl)
    await conn.run(this._sql('dropTopic'), [this.topic])
    await this._state(conn)
  }
}

/** The file of a `sqlite:///` URL (INVALID_ARGUMENT on `argument`). */
function fileOf(url, argument = 'url') {
  return native.sqlitePath(url, argument)
}

module.exports = {
  name: 'sqlite',
  // The core renders SQLite's expiring leases (shardid::sql::sqlite::SqliteLease); a session
  // lease is refused by the protocol itself (UNSUPPORTED: SQLite has no advisory locks).
  lease: { sql: 'sqlite', module: 'shardid/sqlite' },
  check: (url, argument = 'url') => { fileOf(url, argument) },
  /** The schema: the file itself, `main`; any other name is refused (no database is attached). */
  schema(given) {
    if (given === undefined || given === null || given === 'main') return 'main'
    throw makeError('INVALID_ARGUMENT', { argument: 'schema', reason: "on SQLite is the file itself: 'main' (the default)" }, TypeError)
  },
  driver,
  /** Opens the file of `url`; `timeoutMs` is the busy timeout (the core's 5 s by default). */
  opener(url, module, { timeoutMs } = {}) {
    const file = fileOf(url)
    driver(module) // UNSUPPORTED at once, as pg and mysql2 are required at once
    return async () => open(file, module, timeoutMs)
  },
  watch() {}, // a file is not lost as a session is
  destroy: (conn) => conn.close(),
  end: async (conn) => conn.close(),
  lost: () => false,
  unreachable: () => false, // said DATABASE_UNREACHABLE already (translate)
  missing: () => false, // the tables are created on first use
  code: (err) => resultCode(err),
  rows: (conn, text, values = []) => conn.run(text, values),
  row: async (conn, text, values = []) => (await conn.run(text, values))[0] ?? null,
  adopt: (conn) => conn,
  segments,
  dictionary: (schema, topic) => new Dictionary(schema, topic),
  serials,
  translate,
}
