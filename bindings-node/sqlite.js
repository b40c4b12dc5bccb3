'use strict'
// shardid/sqlite: shard leases through a SQLite file, for the processes of one host that share
// it (no server). Needs better-sqlite3 (an optional peer dependency) or Node's built-in
// node:sqlite. shardid/segments and shardid/dictionary take the same `sqlite:///` URLs.
//
// The lease is shardid/postgres's expiring lease, run by the driver every database lease shares
// (database-lease.js) on the core's SQLite statements (shardid::sql::sqlite::SqliteLease): a
// row per shard in a table (`shardid_leases`, created on first use) holds the lease's random
// token, its ceiling and its expiry by SQLite's clock; a claim is one statement under the
// file's write lock. A timer renews it every third of its time to live; a holder that could not
// renew for four fifths of it stops on its own (`LEASE_LOST`). Only the expiring kind: SQLite
// has no advisory locks (`kind: 'session'` rejects with `UNSUPPORTED`).

const { DatabaseLease, DEFAULT_TTL_MS, leaseOn } = require('./database-lease.js')
const { byName } = require('./dialects/index.js')
const { makeError } = require('./errors.js')

const dialect = byName('sqlite')

/** A generator on a shard leased through a SQLite file. */
class SqliteLease extends DatabaseLease {}

/**
 * `await lease({ layout, url, shards: [first, end], ttlMs?, retake?, table?,
 * backwardsToleranceMs?, maxBorrowUnits? })`: leases the first free shard of `first..end` (end
 * excluded) through the SQLite file `url` names (`sqlite:///relative/path.db`,
 * `sqlite:////absolute/path.db`). Rejects with `NO_FREE_SHARD` when every shard is held,
 * `DATABASE_UNREACHABLE` when the file cannot be used (a missing directory, not a SQLite
 * database), `UNSUPPORTED` for `kind: 'session'` or without a SQLite driver.
 */
function lease(options) {
  return leaseOn(SqliteLease, options, dialect, 'url')
}

// The SQL functions of the UUIDv7 bridge uuidFunctions() registers: the MySQL family's names
// (core/src/sql/mysql/next_id.rs), as Python's shardid.sqlite.uuid_functions and Rust's
// shardid::sql::sqlite::uuid_functions register them.
const UUID_FUNCTIONS = ['shardid_to_uuid', 'shardid_to_uuid_text', 'shardid_from_uuid']

/**
 * `uuidFunctions(db, layout)`: registers the UUIDv7 bridge of `layout` on `db`, a
 * better-sqlite3 `Database` or a `node:sqlite` `DatabaseSync` (SQLite has no stored functions:
 * a connection's application-defined functions are its way), with the MySQL family's names:
 * `shardid_to_uuid(id)` the UUID's 16 bytes (a BLOB, which SQLite compares byte by byte, so a
 * column of them sorts as the IDs do), `shardid_to_uuid_text(id)` its text (lower case: sorts
 * as the IDs too), `shardid_from_uuid(u)` the ID back from either. Each is the layout's
 * `toUuidBytes` / `toUuid` / `fromUuid` (the core's bridge); NULL gives NULL; IDs reach them as
 * bigints. A refusal (a UUID the bridge did not make, of another version or layout) throws the
 * `ShardIdError` (`INVALID_ARGUMENT`) out of the statement, never a wrong ID.
 */
function uuidFunctions(db, layout) {
  const { Layout } = require('./index.js')
  if (!(layout instanceof Layout)) {
    throw makeError('INVALID_ARGUMENT', { argument: 'layout', reason: 'must be a shardid Layout (e.g. Layout.INSTAGRAM)' }, TypeError)
  }
  // IDs as bigints, never a number rounded past 2^53: better-sqlite3's safeIntegers,
  // node:sqlite's useBigIntArguments.
  const options = typeof db?.pragma === 'function'
    ? { deterministic: true, safeIntegers: true }
    : { deterministic: true, useBigIntArguments: true }
  const functions = [
    (id) => (id === null ? null : layout.toUuidBytes(id)),
    (id) => (id === null ? null : layout.toUuid(id)),
    (u) => (u === null ? null : layout.fromUuid(u)),
  ]
  UUID_FUNCTIONS.forEach((name, i) => db.function(name, options, functions[i]))
}

module.exports = { lease, SqliteLease, DEFAULT_TTL_MS, UUID_FUNCTIONS, uuidFunctions }
