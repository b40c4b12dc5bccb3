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

module.exports = { lease, SqliteLease, DEFAULT_TTL_MS }
