'use strict'
// PostgreSQL, over `pg` (an optional peer dependency): the dialect the drivers of
// dialects/index.js run on. `$n` placeholders; a session is lost on a connection error (no
// SQLSTATE), a connection exception (class 08) or the server ending it (57P).

const native = require('../native.generated.js')
const { ShardIdError, makeError, sessionLost, unreachable, unreachableError } = require('../errors.js')
const { exactAll } = require('./index.js')

/** `pg`, or UNSUPPORTED naming the entry point that needs it. */
function driver(module) {
  try {
    return require('pg')
  } catch {
    throw makeError('UNSUPPORTED', { reason: `${module} needs the pg package: npm install pg` })
  }
}

/**
 * How to open connections to `target`: a connection string (or nothing: pg's environment
 * variables), or an unconnected `pg.Client` of the caller's, opened first and then copied
 * (its class, its settings) to reconnect. `timeoutMs` bounds the connection's opening.
 */
function opener(target, module, { timeoutMs } = {}) {
  let first = typeof target === 'object' && target !== null ? target : null
  const Client = first ? first.constructor : driver(module).Client
  const settings = first ? first.connectionParameters : { connectionString: target, connectionTimeoutMillis: timeoutMs }
  return async () => {
    const client = first ?? new Client(settings)
    first = null
    client.on('error', () => {}) // see watch()
    try {
      await client.connect()
    } catch (err) {
      client.end().catch(() => {})
      require('./index.js').redact(err, target) // the driver may quote the connection string
      throw unreachable(err) ? unreachableError(err) : err
    }
    return client
  }
}

// pg's parsers for the answers of shardid's statements: `int8` and `int8[]` as decimal text
// (pg's own default), whatever the application set for them, globally on pg's `types`
// (`int8AsBigInt`, a parser to Number that rounds past 2^53) or on its clients; every other
// type as the client would parse it. pg takes them per query, so a pool of the caller's keeps
// its settings for its own queries. What comes back is read by the one rule of
// dialects/index.js (`exact`) all the same.
const INT8 = 20
const INT8_ARRAY = 1016
const int8Text = (text) => text
// An int8[]'s text, `{1,-2,NULL}`: no quotes, no nesting in what the statements answer.
const int8Array = (text) => (text === '{}' ? [] : text.slice(1, -1).split(',').map((v) => (v === 'NULL' ? null : v)))
function typesOf(client) {
  return {
    getTypeParser(oid, format) {
      if (oid === INT8) return int8Text
      if (oid === INT8_ARRAY) return int8Array
      if (typeof client.getTypeParser === 'function') return client.getTypeParser(oid, format)
      return driver('shardid').types.getTypeParser(oid, format)
    },
  }
}

/** A statement's rows, as arrays, with the parsers above. */
const query = (client, text, values) => client.query({ text, values, rowMode: 'array', types: typesOf(client) })

// The first row of a statement's answer.
const first = (client, text, values) => query(client, text, values).then((r) => r.rows[0])
/** What a segment executor needs besides the core's protocol (shardid::segment::protocol):
 *  the server's dialect at each connection, and the statement that creates a tag. */
function segments(schema) {
  const sql = native.segmentSql(schema)
  return {
    ready: () => 'postgres',
    // PostgreSQL's create_tag returns nothing: a tag already there is left as it is.
    createTag: async (client, tag) => { await first(client, sql.createTag, [tag, '1']) },
  }
}

/** The statements of serials' registrations, read and written (a period's segment is the
 *  core's protocol's). */
function serials(schema) {
  const sql = native.serialSql(schema)
  return {
    info: (client, tag) => first(client, sql.info, [tag]),
    create: (client, values) => first(client, sql.create, values),
  }
}

/** The dictionary's steps: each one statement, its one value. */
function dictionary(schema, topic) {
  const sql = native.dictionarySql(schema)
  const one = async (client, text, values) => (await first(client, text, values))[0]
  return {
    create: (client) => one(client, sql.createTopic, [topic]),
    drop: (client) => one(client, sql.dropTopic, [topic]),
    ids: async (client, values) => exactAll(await one(client, sql.ids, [topic, values])),
    lookup: async (client, values) => exactAll(await one(client, sql.lookup, [topic, values])),
    values: (client, ids) => one(client, sql.values, [topic, ids]),
  }
}

/** Rows as arrays. */
function rows(client, text, values) {
  return query(client, text, values).then((result) => result.rows)
}

module.exports = {
  name: 'postgres',
  lease: { sql: 'postgres', module: 'shardid/postgres' },
  /** INVALID_ARGUMENT on `argument` for a libpq `key=value` string (the core's rule takes it
   *  as PostgreSQL's, for Python's psycopg): pg reads URLs only. */
  check(url, argument = 'connectionString') {
    if (!url.includes('://')) {
      throw makeError('INVALID_ARGUMENT', { argument, reason: 'is not a postgresql:// URL (pg reads no libpq key=value string)' }, TypeError)
    }
  },
  /** The schema: the one given, or the entry point's default. */
  schema: (given, fallback) => given ?? fallback,
  driver,
  opener,
  watch(client, onLost) {
    client.on('error', onLost)
    client.on('end', onLost)
  },
  destroy(client) {
    client.end().catch(() => {})
  },
  end(client) {
    return client.end().catch(() => {})
  },
  lost: (err) => !(err instanceof ShardIdError) && sessionLost(err),
  unreachable,
  /** The schema or its functions are not there (undefined schema, function or table): the DDL was not run. */
  missing: (err) => ['3F000', '42883', '42P01'].includes(err?.code),
  code: (err) => (typeof err.code === 'string' ? err.code : null),
  rows,
  row: (client, text, values) => first(client, text, values).then((row) => row ?? null),
  adopt: (conn) => conn,
  segments,
  dictionary,
  serials,
}
