'use strict'
// MySQL 8 and MariaDB, over `mysql2` (an optional peer dependency): the dialect the drivers of
// dialects/index.js run on. `?` placeholders; the statements and the order of their steps are
// the core's (shardid::sql::mysql), on a mysql2 connection; the reading of the URL is the core's.

const native = require('../native.generated.js')
const { makeError, unreachableError, withCause } = require('../errors.js')
const { SQLSTATES } = require('../core.generated.js')
const { exact } = require('./index.js')

/**
 * The mysql2 options that keep BIGINTs exact: `mysql.createConnection({ ...exactBigints, ... })`,
 * then `BigInt(row.id)`. By default mysql2 returns BIGINT as a JavaScript number, which rounds
 * every ID above 2^53 without a word; with these it returns them as decimal strings.
 */
const exactBigints = Object.freeze({ supportBigNumbers: true, bigNumberStrings: true })

// How long the TCP connection and the server's greeting may take before the server is taken
// for down, or for something else than MySQL.
const CONNECT_TIMEOUT_MS = 2000

// -- values in statements ----------------------------------------------------------------------
//
// The statements are sent as text with their values written in as literals (mysql2's `query`,
// the text protocol), never with mysql2's own escaping: it writes a quote as \' and a
// backslash as \\, which mean that only while the session's SQL mode lacks
// NO_BACKSLASH_ESCAPES. Under that mode \' ends the literal and the rest of the value is SQL
// (issue 60: a lookup of "') OR SLEEP(2) -- " slept). Here a string is written as hexadecimal
// digits with its character set, _utf8mb4 X'...', which every SQL mode reads the same
// (ANSI_QUOTES too), whatever the connection's character set, and which holds no quote or
// backslash to escape; a number, a bigint and NULL as themselves.
//
// Not server-side prepared statements (mysql2's `execute`): it sends a JavaScript number as a
// DOUBLE, so `LAST_INSERT_ID(next + ?)` would be computed in floating point past 2^53, where
// IDs must be exact; it prepares each distinct text once per connection and keeps it (the
// dictionary's statements differ by their count of values, up to 64 kept by shape and more
// made once), against the server's max_prepared_stmt_count shared by every connection; and
// the text protocol is what the statements were written and tested for. A statement without
// values (the DDL, a script's statements) is sent as it is.

/** `value` as a literal that means the same under every SQL mode. */
function literal(value) {
  if (value === null || value === undefined) return 'NULL'
  switch (typeof value) {
    case 'string':
      return `_utf8mb4 X'${Buffer.from(value, 'utf8').toString('hex')}'`
    case 'bigint':
      return value.toString()
    case 'number':
      if (Number.isFinite(value)) return String(value)
      break
    case 'boolean':
      return value ? 'TRUE' : 'FALSE'
    default:
      if (Buffer.isBuffer(value)) return `X'${value.toString('hex')}'`
  }
  throw makeError('INVALID_ARGUMENT', { argument: 'value', reason: `is not a value a statement takes (${typeof value})` }, TypeError)
}

/** Where the `?` placeholders of `sql` are: outside quoted strings and names and comments (the
 *  core's statements hold no backslash, so a quote ends a string unless doubled). */
function placeholders(sql) {
  const at = []
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]
    if (c === "'" || c === '"' || c === '`') {
      for (i++; i < sql.length; i++) {
        if (sql[i] !== c) continue
        if (sql[i + 1] === c) i++
        else break
      }
    } else if ((c === '-' && sql[i + 1] === '-') || c === '#') {
      const end = sql.indexOf('\n', i)
      i = end < 0 ? sql.length : end
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2)
      i = end < 0 ? sql.length : end + 1
    } else if (c === '?') {
      at.push(i)
    }
  }
  return at
}

/** `sql` with its placeholders replaced by the literals of `values`, in order (`sql` as it is
 *  without values). */
function bind(sql, values) {
  if (values === undefined || values === null) return sql
  const at = placeholders(sql)
  if (at.length !== values.length) {
    throw new Error(`shardid: a statement with ${at.length} placeholders was given ${values.length} values`)
  }
  let out = ''
  let from = 0
  at.forEach((i, n) => {
    out += sql.slice(from, i) + literal(values[n])
    from = i + 1
  })
  return out + sql.slice(from)
}

/** `connection.query` of `sql` with `values` bound as above; `rowsAsArray` as mysql2's. */
function send(connection, sql, values, rowsAsArray = false) {
  // BIGINTs as decimal strings whatever the connection's settings (a connection of the
  // caller's may lack them); read by the one rule of dialects/index.js (`exact`) all the same.
  return connection.query({ sql: bind(sql, values), rowsAsArray, ...exactBigints })
}

function isUrl(text) {
  return typeof text === 'string' && native.databaseOfUrl(text, 'url') !== 'postgres'
}

/** The parts of a URL as the core reads it (INVALID_ARGUMENT on `url`). */
function parseUrl(url) {
  return native.mysqlUrl(url)
}

function mysql2() {
  try {
    return require('mysql2/promise')
  } catch {
    throw makeError('UNSUPPORTED', { reason: 'a mysql:// URL needs the mysql2 package: npm install mysql2' })
  }
}

/** A mysql2 (promise) connection to the server `url` names, with exact bigints.
 *  `DATABASE_UNREACHABLE` (mysql2's error as its cause) when it cannot be opened, `NOT_MYSQL`
 *  when what answers is not MySQL. */
async function connect(url) {
  const u = parseUrl(url)
  const server = `${u.host}:${u.port}`
  let greeted = false
  let connection
  try {
    connection = await mysql2().createConnection({
      host: u.host,
      port: u.port,
      user: u.user,
      password: u.password ?? undefined,
      database: u.database ?? undefined,
      charset: 'utf8mb4',
      connectTimeout: CONNECT_TIMEOUT_MS,
      ...exactBigints,
    })
    greeted = true
  } catch (err) {
    require('./index.js').redact(err, url) // mysql2 may quote what it was given
    // Connected, then no greeting in time, or one of another protocol (a PostgreSQL port
    // waits for its client to speak first).
    const code = String(err.code ?? '')
    if (!greeted && (code === 'ETIMEDOUT' || code.startsWith('PROTOCOL_') || code === 'HANDSHAKE_NO_SSL_SUPPORT' || err.fatal === undefined && !code)) {
      if (code !== 'ETIMEDOUT' || await tcpAnswers(u.host, u.port)) {
        throw withCause(makeError('NOT_MYSQL', { server, reason: err.message }), err)
      }
    }
    if (err.code === 'UNSUPPORTED') throw err // no mysql2
    throw unreachableError(err)
  }
  connection.on('error', () => {}) // a lost connection: the next call opens another
  connection.shardidDialect = await detect(connection)
  return connection
}

// The dialect of the server a connection reaches (one round trip): 'mariadb' when it knows
// MariaDB's variables, 'mysql' when it refuses them (the core's statement and rule:
// shardid::sql::mysql::DETECT_DIALECT, Dialect::detected). The statements name the server in
// the rows they write, differently on each.
async function detect(connection) {
  try {
    await connection.query(native.mysqlDetectSql())
  } catch (err) {
    const dialect = typeof err.errno === 'number' ? native.mysqlDetected(err.errno) : null
    if (dialect === null) throw err
    return dialect
  }
  return native.mysqlDetected(null)
}

// Whether a TCP connection to host:port opens (a server is there, whatever it speaks).
function tcpAnswers(host, port) {
  const net = require('node:net')
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: CONNECT_TIMEOUT_MS })
    const done = (ok) => { socket.destroy(); resolve(ok) }
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
    socket.once('timeout', () => done(false))
  })
}

/** Whether `err` means the connection is gone (open another). */
function lost(err) {
  return Boolean(err && (err.fatal || ['PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT'].includes(err.code)))
}

// -- segments ---------------------------------------------------------------------------------

/** The dialect of the server of `connection` (its greeting said), for the protocol. */
const ready = (connection) => connection.shardidDialect ?? 'mysql'

/** The dense-ID segments of one database on connections of `connect()`: the core's protocol
 *  (shardid::segment::protocol) run on a connection given, one per server index (each keeps
 *  what it learnt of its server: the tag's stride), and the statement that creates a tag. */
class Segments {
  constructor(schema) {
    this.schema = schema
    this._sql = { mysql: native.mysqlSegmentSql(schema, 'mysql'), mariadb: native.mysqlSegmentSql(schema, 'mariadb') }
    this._protocols = new Map()
  }

  _run(connection, server, start) {
    let protocol = this._protocols.get(server)
    if (protocol === undefined) this._protocols.set(server, (protocol = new native.SegmentProtocol('mysql', this.schema, 1)))
    const { execute } = require('./index.js')
    const link = { dialect: module.exports, use: (fn) => fn(connection), run: (text, values) => module.exports.row(connection, text, values) }
    return execute(protocol, start, [link], ready)
  }

  /** One segment of `tag`: `[first, count, stride]` as decimal strings. */
  async take(connection, server, tag, size) {
    const done = await this._run(connection, server, (p) => p.take(tag, String(size)))
    if (done.step.step === 'segment') return done.step.segment
    throw done.step.driver ? done.error : serverError(done.step.sqlstate, `no segment of tag ${tag}: ${done.step.reason}`)
  }

  /** Gives `first..end` of `tag` back; whether it was taken back. */
  async giveBack(connection, tag, first, end) {
    return (await this._run(connection, -1, (p) => p.giveBack(tag, String(first), String(end)))).step.returned === true
  }

  /** Creates `tag` (from 1) if it is not there: the database's create_tag. */
  async createTag(connection, tag) {
    const sql = this._sql[connection.shardidDialect ?? 'mysql']
    await send(connection, sql.createTag, [tag], true)
  }
}

function serverError(sqlstate, message) {
  const err = new Error(`${message}: ${sqlstate}`)
  err.code = sqlstate // as pg reports a SQLSTATE: the drivers' checks hold for both databases
  return err
}

// -- serials ----------------------------------------------------------------------------------

/** The statements of serials' registrations (shardid::sql::mysql::MysqlSerials), written
 *  and read; a period's segment is the core's protocol's (its own tag, `orders@2026-11-25`, made
 *  at the period's first take). */
function serials(schema) {
  const sql = native.mysqlSerialSql(schema)
  const unknown = (tag) => serverError(SQLSTATES.unknownTag, `no serial tag ${tag}`)
  const info = async (connection, tag) => {
    const [found] = await send(connection, sql.info, [tag], true)
    if (found.length === 0) throw unknown(tag)
    const [canonical, zone, maxGap] = found[0].map(cell)
    return [canonical, zone, Number(maxGap)]
  }
  return {
    info,
    /** Registers `values` (tag, format, zone, canonical, shape, pieces, width, reset, maxGap)
     *  unless the tag or its shape is registered, then compares with what is there
     *  (SERIAL_MISMATCH), as shardid::serial::mysql does. */
    async create(connection, values, format) {
      const [tag, text, zone, canonical, shape, pieces, width, reset, maxGap] = values
      const [result] = await send(connection, sql.register, [tag, text, zone, canonical, shape, Array.from(pieces).join('\n'), width, reset, maxGap])
      if (result.affectedRows === 1) return
      const [there] = await send(connection, sql.registered, [tag, shape], true)
      for (const row of there) {
        const [other, canonicalThere, zoneThere] = row.map(cell)
        if (other !== tag) {
          throw makeError('SERIAL_MISMATCH', { tag, reason: `has the format of tag ${other}, which prints the same serials` })
        }
        const reason = format ? native.serialMismatch(format._index, canonicalThere, zoneThere) : null
        if (reason !== null) throw makeError('SERIAL_MISMATCH', { tag, reason })
      }
      const [, , maxGapThere] = await info(connection, tag)
      if (maxGapThere !== Number(maxGap)) throw makeError('SERIAL_MISMATCH', { tag, reason: `registered with maxGap ${maxGapThere}, not ${maxGap}` })
    },
  }
}

// -- the dictionary -----------------------------------------------------------------------------

const decode = (value) => (value === null ? null : Buffer.isBuffer(value) ? value.toString('utf8') : String(value))

/** The dictionary's protocol on one connection (see shardid::sql::mysql's dictionary): lookups
 *  without a lock, then for strings still missing one transaction that locks the topic row,
 *  looks again with a locking read, numbers the rest from the topic's next ID, inserts them and
 *  moves `next` on: the core's MysqlAssign, which `_assign` only executes. Answers are decimal
 *  strings. */
class Dictionary {
  constructor(schema, topic) {
    this.schema = schema
    this.topic = topic
    native.mysqlDictionarySql(schema, 'lock', 0) // INVALID_ARGUMENT for a bad name, now
    this._statements = new Map()
  }

  // The statement `which` (for `n` items where it takes a list), for the connection's server.
  _sql(connection, which, n = 0) {
    const dialect = connection.shardidDialect ?? 'mysql'
    const key = `${dialect}/${which}/${n}`
    let sql = this._statements.get(key)
    if (sql === undefined) {
      sql = native.mysqlDictionarySql(this.schema, which, n, dialect)
      if (n <= 64) this._statements.set(key, sql)
    }
    return sql
  }

  _unknown() { return serverError(SQLSTATES.unknownTopic, `no topic ${this.topic}`) }
  _dropped() { return serverError(SQLSTATES.topicDropped, `topic ${this.topic} was dropped`) }

  async _found(connection, values) {
    const [rows] = await send(connection, this._sql(connection, 'find', values.length), [...values, this.topic], true)
    if (rows.length === 0) throw this._unknown()
    const found = new Map()
    for (const [, value, id] of rows) if (value !== null) found.set(decode(value), exact(id))
    return found
  }

  async lookup(connection, values) {
    const found = await this._found(connection, values)
    return values.map((v) => found.get(v) ?? null)
  }

  async ids(connection, values) {
    const found = await this._found(connection, values)
    const answers = values.map((v) => found.get(v) ?? null)
    if (!answers.includes(null)) return answers
    return await this._assign(connection, values, answers)
  }

  /** New IDs for the strings still missing: the core's transaction (native.MysqlAssign), each
   *  step sent as it says and its rows or mysql2's errno fed back. */
  async _assign(connection, values, answers) {
    const missing = values.filter((_, i) => answers[i] === null)
    const tx = new native.MysqlAssign(connection.shardidDialect ?? 'mysql', this.schema, this.topic, missing)
    let error = null
    for (;;) {
      const step = tx.next()
      if (step.step === 'assigned') {
        const byValue = new Map(missing.map((v, i) => [v, step.ids[i]]))
        return values.map((v, i) => answers[i] ?? byValue.get(v))
      }
      if (step.step === 'failed') {
        if (step.why === 'unknownTopic') throw this._unknown()
        if (step.why === 'topicDropped') throw this._dropped()
        if (error !== null) throw error
        throw serverError('XX000', `the server's answer for topic ${this.topic} is not one shardid's DDL makes`)
      }
      let rows = []
      try {
        if (step.step === 'begin') await connection.beginTransaction()
        else if (step.step === 'commit') await connection.commit()
        else if (step.step === 'rollback') await connection.rollback()
        else {
          const [result] = await send(connection, step.sql, step.values, true)
          if (Array.isArray(result)) rows = result
        }
      } catch (err) {
        error = err
        tx.failed(typeof err.errno === 'number' ? err.errno : null)
        continue
      }
      tx.answer(rows.map((row) => row.map(decode)))
    }
  }

  async values(connection, ids) {
    const [rows] = await send(connection, this._sql(connection, 'findValues', ids.length), [...ids.map(String), this.topic], true)
    if (rows.length === 0) throw this._unknown()
    const found = new Map()
    for (const [, id, value] of rows) if (id !== null) found.set(exact(id), decode(value))
    return ids.map((id) => found.get(String(id)) ?? null)
  }

  async create(connection) {
    await send(connection, this._sql(connection, 'createTopic'), [this.topic])
    const [rows] = await send(connection, this._sql(connection, 'state'), [this.topic], true)
    if (rows.length === 0) throw this._unknown()
    if (Number(rows[0][0])) throw this._dropped()
  }

  async drop(connection) {
    await send(connection, this._sql(connection, 'dropTopic'), [this.topic])
    const [rows] = await send(connection, this._sql(connection, 'state'), [this.topic], true)
    if (rows.length === 0) throw this._unknown()
  }
}


// A value of a row as the core reads it: binary strings as UTF-8 text, numbers as text.
const cell = (v) => (v === null || v === undefined ? null : Buffer.isBuffer(v) ? v.toString('utf8') : typeof v === 'boolean' ? v : String(v))

/** Rows as arrays (a statement without rows: mysql2's result header). */
async function rows(connection, text, values) {
  return (await send(connection, text, values, true))[0]
}

module.exports = {
  name: 'mysql',
  // The lease's SQL is MariaDB's first; the core renders MySQL's once a server refuses
  // MariaDB's variables.
  lease: { sql: 'mariadb', module: 'shardid/mysql' },
  check: parseUrl,
  detect,
  /** The schema: the one given, or the entry point's default. */
  schema: (given, fallback) => given ?? fallback,
  driver: mysql2,
  // Each connection opened the same way (one server, a URL); mysql2 is needed from the start.
  opener(url) {
    mysql2()
    return () => connect(url)
  },
  watch(connection, onLost) {
    connection.on('error', onLost)
    connection.connection?.once?.('end', onLost)
  },
  destroy(connection) {
    connection.destroy()
  },
  end(connection) {
    return connection.end().catch(() => {})
  },
  lost,
  /** The database or its functions are not there (unknown database, function or table): the DDL was not run. */
  missing: (err) => [1049, 1305, 1146].includes(err?.errno),
  unreachable: lost, // a connection that cannot be opened is DATABASE_UNREACHABLE already (connect)
  code: (err) => (Number.isInteger(err.errno) ? String(err.errno) : null),
  // Rows as arrays; a statement without rows (an UPDATE: `shardid restored` marking rows) none.
  rows: async (connection, text, values) => {
    const result = await rows(connection, text, values)
    return Array.isArray(result) ? result : []
  },
  // The first row, or null; a statement without rows answers [affectedRows, insertId], the core
  // reading the last insert ID.
  async row(connection, text, values) {
    const result = await rows(connection, text, values)
    if (!Array.isArray(result)) return [String(result.affectedRows), exact(result.insertId ?? 0)]
    return result.length > 0 ? result[0].map(cell) : null
  },
  adopt: (conn) => (typeof conn.promise === 'function' ? conn.promise() : conn),
  segments(schema) {
    const segments = new Segments(schema)
    return { ready, createTag: (connection, tag) => segments.createTag(connection, tag) }
  },
  dictionary: (schema, topic) => new Dictionary(schema, topic),
  serials,
  // What shardid/mysql exports besides its entry points.
  exactBigints,
  parseUrl,
  connect,
  isUrl,
  Segments,
  Dictionary,
}
