'use strict'
// shardid/mysql: MySQL 8 and MariaDB, with mysql2 (an optional peer dependency). Shard leases
// (lease(): the core's lease protocol run by the driver shardid/postgres shares,
// database-lease.js, over the MySQL dialect, dialects/mysql.js), and the DDL of next_id(), of
// segments and of the dictionary as the core renders it. shardid/segments and
// shardid/dictionary take `mysql://` (or `mariadb://`) URLs through the same dialect.

const native = require('./native.generated.js')
const { makeError } = require('./errors.js')
const { Layout } = require('./index.js')
const { byName } = require('./dialects/index.js')
const { DatabaseLease, DEFAULT_TTL_MS, leaseOn, layoutIndex } = require('./database-lease.js')

const dialect = byName('mysql')

/** A generator on a shard leased through MySQL or MariaDB. */
class MysqlLease extends DatabaseLease {}

/**
 * `await lease({ layout, url, shards: [first, end], kind?, ttlMs?, retake?, table?,
 * backwardsToleranceMs?, maxBorrowUnits? })`: leases the first free shard of `first..end` (end
 * excluded) through the MySQL or MariaDB server at `url` (`mysql://user:password@host:port/db`,
 * the table in that database), with the same leases as shardid/postgres: expiring by default
 * (the only kind that holds on Galera), or `kind: 'session'` (`GET_LOCK`, one server reached
 * directly; refused on a Galera node with `UNSUPPORTED`). Rejects with `NO_FREE_SHARD` when
 * every shard is held; errors of the server are mysql2's own.
 */
function lease(options) {
  return leaseOn(MysqlLease, options, dialect, 'url')
}

// -- the DDL ----------------------------------------------------------------------------------

/**
 * The MySQL DDL of `<database>.next_id()` (IDs of `layout` for `shard` made inside MySQL 8 or
 * MariaDB; a BEFORE INSERT trigger makes it a column's default) and the decoding functions:
 * `ddl({ layout: Layout.INSTAGRAM, shard: 5, schema: 'insta5' })`, `schema` naming the
 * database. The same text as Python's `shardid.sql.mysql` and `npx shardid sql --dialect mysql`.
 */
function ddl(options) {
  const o = options ?? {}
  if (!(o.layout instanceof Layout) || typeof o.schema !== 'string') {
    throw makeError('INVALID_ARGUMENT', { argument: 'ddl', reason: 'takes { layout: Layout, shard, schema: string, backwardsToleranceMs?, maxBorrowUnits?, dialect? }' }, TypeError)
  }
  return native.mysqlDdl(layoutIndex(o.layout), o.shard, o.schema, o.backwardsToleranceMs, o.maxBorrowUnits, o.dialect)
}

/** The MySQL DDL of dense IDs from segments in database `schema` (default `seg`); `dialect:
 *  'mariadb'` names a Galera cluster as one server. */
function segmentsDdl(schema = 'seg', { servers = 1, index = 0, dialect } = {}) {
  return native.mysqlSegmentsDdl(schema, servers, index, dialect)
}

/** The MySQL DDL of serial numbers' registrations in database `schema` (default `seg`), run
 *  after `segmentsDdl` (`createSerial` and `serials` of shardid/segments on a `mysql://` URL). */
function serialsDdl(schema = 'seg') {
  return native.mysqlSerialsDdl(schema)
}

/** The MySQL DDL of the dictionary in database `schema` (default `dict`); `{ dialect:
 *  'mariadb' }` names a Galera cluster as one server. */
function dictionaryDdl(schema = 'dict', { dialect } = {}) {
  return native.mysqlDictionaryDdl(schema, dialect)
}

/** The statements of a MySQL script (the DDL above), for a driver to send one at a time. */
function statements(script) {
  return native.mysqlStatements(script)
}

const { exactBigints, isUrl, parseUrl, connect, lost, Segments, Dictionary } = dialect
module.exports = { lease, MysqlLease, DEFAULT_TTL_MS, ddl, segmentsDdl, serialsDdl, dictionaryDdl, statements, exactBigints, isUrl, parseUrl, connect, lost, Segments, Dictionary }
