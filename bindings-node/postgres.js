'use strict'
// shardid/postgres: shard leases through PostgreSQL, for processes on different hosts. Needs
// the `pg` package (an optional peer dependency).
//
// The default lease expires (`kind: 'expiring'`): a row per shard in a table (`shardid_leases`)
// holds the lease's random token and its expiry by the database's clock, and nothing else, so
// it holds behind a transaction pooler (PgBouncer, Supavisor, Neon, RDS Proxy). A timer renews
// it every third of its time to live (`ttlMs`, 10 s by default); a holder that could not renew
// for four fifths of it stops on its own, and its calls reject with `LEASE_LOST` (with
// `retake: true`, the next call takes a new lease). Each row also records the shard's ceiling,
// written before any ID above it is handed out and only while the row holds the lease's token,
// so the next holder starts above every ID the last one issued. `kind: 'session'` holds a
// session advisory lock per shard instead (direct connections only; a crashed holder's shard is
// free at once). `pg` is asynchronous, so the generating methods are too: they await a ceiling
// write every 100 ms or so, and return at once otherwise. The steps, statements and parameters
// are the core's (shardid::sql::LeaseProtocol); this only executes them.
//
// The lease's timer and socket do not keep the process alive on their own (they are unref'd
// while no statement is in flight): a script that is done exits, and its lease expires.

const native = require('./native.generated.js')
const { Layout } = require('./index.js')
const { DatabaseLease, DEFAULT_TTL_MS, leaseOn, layoutIndex, invalidArgument } = require('./database-lease.js')
const { byName } = require('./dialects/index.js')

const dialect = byName('postgres')

/** A generator on a shard leased through PostgreSQL. */
class PostgresLease extends DatabaseLease {}

/**
 * `await lease({ layout, connectionString, shards: [first, end], kind?, ttlMs?, retake?, table?,
 * backwardsToleranceMs?, maxBorrowUnits? })`: leases the first free shard of `first..end` (end
 * excluded) through the PostgreSQL server. `client` may replace `connectionString`: an
 * unconnected `pg.Client` the lease then owns (it makes another with the same settings to
 * reconnect). Rejects with code `NO_FREE_SHARD` when every shard is held, and
 * `DATABASE_UNREACHABLE` (pg's error as its `cause`) when the database cannot be reached; the
 * database's own errors (a missing privilege) are `pg`'s.
 */
function lease(options) {
  return leaseOn(PostgresLease, options, dialect, 'connectionString')
}

/**
 * Makes `pg` return `int8` (`bigint`) columns, and arrays of them, as JavaScript bigints:
 * `int8AsBigInt(require('pg').types)`. By default `pg` returns them as strings (and a
 * `parseInt` of those silently rounds every ID above 2^53). The setting is `pg`'s and global:
 * it applies to every pool and client of that `pg`. Returns `types`.
 */
function int8AsBigInt(types) {
  if (!types || typeof types.setTypeParser !== 'function' || typeof types.getTypeParser !== 'function') {
    throw invalidArgument('types', "must be pg's types: int8AsBigInt(require('pg').types)")
  }
  const INT8 = 20
  const INT8_ARRAY = 1016
  const textArray = types.getTypeParser(INT8_ARRAY)
  types.setTypeParser(INT8, (text) => BigInt(text))
  types.setTypeParser(INT8_ARRAY, (text) => textArray(text).map((v) => (v === null ? null : BigInt(v))))
  return types
}

/**
 * The PostgreSQL DDL of `<schema>.next_id()` (a column default that makes IDs of `layout` for
 * `shard` inside the database, unique however many sessions call it) and the decoding
 * functions: `ddl({ layout: Layout.INSTAGRAM, shard: 5, schema: 'insta5' })`, to run once
 * (`psql -1 -f`, or a migration). The same text as Python's `shardid.sql.postgres` and
 * `npx shardid sql`. Give the database a shard no application process uses.
 */
function ddl(options) {
  const o = options ?? {}
  if (!(o.layout instanceof Layout) || typeof o.schema !== 'string') {
    throw invalidArgument('ddl', 'takes { layout: Layout, shard, schema: string, backwardsToleranceMs?, maxBorrowUnits? }')
  }
  return native.postgresDdl(layoutIndex(o.layout), o.shard, o.schema, o.backwardsToleranceMs, o.maxBorrowUnits)
}

/**
 * The PostgreSQL DDL of public IDs: `<schema>.shardid_public_encode(id, keys, prefix,
 * encoding)` and `<schema>.shardid_public_decode(text, keys, prefix, encoding)` for IDs of
 * `layout` (default Instagram's), the same text as `PublicIds` for the same keys:
 * `publicIdsDdl({ schema: 'app' })`. The same text as Python's
 * `shardid.sql.public_ids_sql` and `npx shardid sql --public-ids`.
 */
function publicIdsDdl(options) {
  const o = options ?? {}
  const layout = o.layout ?? Layout.INSTAGRAM
  if (!(layout instanceof Layout) || typeof o.schema !== 'string') {
    throw invalidArgument('publicIdsDdl', 'takes { schema: string, layout?: Layout }')
  }
  return native.publicIdsDdl(layoutIndex(layout), o.schema)
}

module.exports = { lease, PostgresLease, int8AsBigInt, ddl, publicIdsDdl, DEFAULT_TTL_MS }
