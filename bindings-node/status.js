'use strict'
// `shardid/status`: what a database holds of shardid — the leases, the segments' tags (burn
// rate, years left before 2^63), the dictionary's topics, and when the layouts in use run out —
// for programs (`read()`) and `npx shardid status URL` (`main()`). The statements, the figures
// and both renderings are the core's (shardid::sql::status): this file runs the statements on
// pg, mysql2, or better-sqlite3 or node:sqlite (a sqlite:/// URL: the file opened read-only) and
// hands the rows back, so the output is Python's, byte for byte.
const fs = require('node:fs')
const native = require('./native.generated.js')
const { ShardIdError, makeError, describe, unreachableError } = require('./errors.js')
const { Layout } = require('./index.js')
const { byName, dialectOfConnection, Link } = require('./dialects/index.js')
const { layoutIndex } = require('./database-lease.js')
const sqliteDialect = require('./dialects/sqlite.js')

// The text of a cell as the core reads it (every statement casts its columns to text).
function cell(value) {
  if (value === null || value === undefined) return null
  if (typeof value === 'string') return value
  if (Buffer.isBuffer(value)) return value.toString('utf8')
  return String(value)
}

/** Runs the core's statements of `run` on `query(sql) -> rows as arrays`. */
async function drive(run, query) {
  for (let sql = run.next(); sql !== null && sql !== undefined; sql = run.next()) {
    const rows = await query(sql)
    run.feed(rows.map((row) => row.map(cell)))
  }
}

/**
 * The rows of `sql` on a SQLite connection, as arrays: better-sqlite3's raw rows, or the
 * values of `node:sqlite`'s objects (the core names every column of its SQLite statements
 * apart: c0, c1, ...).
 */
function sqliteRows(db, sql) {
  const statement = db.prepare(sql)
  // better-sqlite3 runs a statement that returns no data (`restored`'s marks) with run().
  if (statement.reader === false) {
    statement.run()
    return []
  }
  if (typeof statement.raw === 'function') return statement.raw(true).all()
  return statement.all().map((row) => Object.values(row))
}

/**
 * The SQLite file `path` opened read-only (a status creates no file and writes nothing), or for
 * writing without creating it (`write`: `shardid restored` marks rows), waiting up to 5 s for a
 * writer's lock; DATABASE_UNREACHABLE when there is no such file.
 */
function openSqlite(path, write = false) {
  if (!fs.statSync(path, { throwIfNoEntry: false })?.isFile()) {
    throw makeError('DATABASE_UNREACHABLE', { reason: `no SQLite file '${path}'` })
  }
  // The driver the other sqlite:/// clients use: better-sqlite3, else node:sqlite, else
  // UNSUPPORTED naming better-sqlite3.
  const api = sqliteDialect.driver('shardid status')
  let db
  try {
    db = api.open(path, 5000, { readonly: !write, mustExist: true })
  } catch (err) {
    throw unreachableError(err)
  }
  return { query: async (sql) => sqliteRows(db, sql), close: async () => db.close() }
}

/** A `query` function and a `close` for a new connection to `run`'s database (its family's driver). */
function open(run) {
  const family = run.family
  const url = run.url
  if (family === 'sqlite') return openSqlite(run.sqlitePath, run.marksRestored)
  if (family !== 'postgres' && family !== 'mysql') throw new Error(`a family no status driver runs: ${family}`)
  const dialect = byName(family)
  dialect.check(url, 'url') // INVALID_ARGUMENT for a URL the family's driver would refuse
  const link = new Link(dialect, dialect.opener(url, 'shardid status', { timeoutMs: 5000 }))
  return { query: (sql) => link.use((conn) => dialect.rows(conn, sql)), close: () => link.end() }
}

// A `query` function for a connection the caller has: a pg Client or Pool, a mysql2
// connection or pool (promise or callback API), or a SQLite database (better-sqlite3's, or
// node:sqlite's DatabaseSync: `prepare` and `exec`, and no `query` as pg and mysql2 have).
function queryOf(connection) {
  if (typeof connection?.prepare === 'function' && typeof connection.exec === 'function' && typeof connection.query !== 'function') {
    return ['sqlite', async (sql) => sqliteRows(connection, sql)]
  }
  const dialect = dialectOfConnection(connection)
  const conn = dialect.adopt(connection)
  return [dialect.name, (sql) => dialect.rows(conn, sql)]
}

function time(text) {
  return text === null ? null : new Date(text)
}

/** The report of `run`'s JSON as objects: times as `Date`, IDs as `bigint`. */
function report(run) {
  const json = run.reportJson()
  const doc = JSON.parse(json)
  const section = (part, make) => ({
    table: part.table, present: part.present, rows: part.rows.map(make), notRead: part.not_read ?? null,
  })
  return {
    database: doc.database,
    now: time(doc.now),
    leases: section(doc.leases, (r) => ({
      layout: r.layout, signature: r.signature, shard: r.shard, holder: r.holder, since: time(r.since),
      ceiling: r.ceiling, ceilingTime: time(r.ceiling_time), expires: time(r.expires), session: r.session, state: r.state,
    })),
    tags: section(doc.tags, (r) => ({
      tag: r.tag, next: BigInt(r.next), segment: r.segment, stride: r.stride, lastTake: time(r.last_take),
      perSecond: r.per_second, yearsLeft: r.years_left, yearsLeftText: r.years_left_text, runsOut: time(r.runs_out),
    })),
    topics: section(doc.topics, (r) => ({
      topic: r.topic, strings: r.strings, lastId: r.last_id === null ? null : BigInt(r.last_id), dropped: r.dropped,
    })),
    layouts: doc.layouts.map((r) => ({
      name: r.name, signature: r.signature, source: r.source, runsOut: time(r.runs_out), yearsLeft: r.years_left, warning: r.warning,
    })),
    warnings: doc.warnings,
    text: run.reportText(),
    json,
  }
}

/**
 * `await read(database, { schema, segmentsSchema, dictionarySchema, table = 'shardid_leases',
 * leaseSchema, layout = Layout.INSTAGRAM })`: the status of `database`, a URL (`postgresql://...`,
 * `mysql://...`, `sqlite:///file.db`) or an open pg Client/Pool, mysql2 connection or SQLite
 * database (left open). The schemas default to the core's: `seg` and `dict`, `main` on SQLite.
 */
async function read(database, options = {}) {
  const o = options ?? {}
  const segmentsSchema = o.schema ?? o.segmentsSchema ?? null
  const dictionarySchema = o.schema ?? o.dictionarySchema ?? null
  const table = o.table ?? 'shardid_leases'
  // The lease's `schema` option: null finds the table as the lease does (the core's rule).
  const leaseSchema = o.leaseSchema ?? null
  const layout = o.layout ?? Layout.INSTAGRAM
  if (!(layout instanceof Layout)) {
    throw makeError('INVALID_ARGUMENT', { argument: 'layout', reason: 'is not a shardid Layout' }, TypeError)
  }
  const index = layoutIndex(layout)
  if (typeof database === 'string') {
    const run = new native.StatusRun(null, database, table, leaseSchema, segmentsSchema, dictionarySchema, index)
    const db = open(run)
    try {
      await drive(run, db.query)
    } finally {
      await db.close()
    }
    return report(run)
  }
  const [family, query] = queryOf(database)
  const run = new native.StatusRun(family, '', table, leaseSchema, segmentsSchema, dictionarySchema, index)
  await drive(run, query)
  return report(run)
}

/** `npx shardid status ...` (`args` with `status` first): `{ stdout, stderr, code }`. */
async function main(args) {
  const usage = native.cliStatusUsage(args)
  if (usage) return usage
  const run = native.StatusRun.fromArgs(args)
  const why = (err) => run.failed(err instanceof ShardIdError ? err.message : describe(err))
  let db
  try {
    db = open(run)
  } catch (err) {
    return why(err)
  }
  try {
    await drive(run, db.query)
  } catch (err) {
    return why(err)
  } finally {
    await db.close()
  }
  return run.output()
}

module.exports = { read, main }
