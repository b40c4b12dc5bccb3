// shardid/sqlite: shard leases through a SQLite file (needs better-sqlite3, or Node's built-in
// node:sqlite).
import { DatabaseLease, type DatabaseLeaseOptions } from './database-lease.js'
import type { Layout } from './index.js'

/** The default time to live of an expiring lease: 10,000 ms. */
export declare const DEFAULT_TTL_MS: number

/** What `lease(...)` of `shardid/sqlite` takes. */
export interface SqliteLeaseOptions extends DatabaseLeaseOptions {
  /** `sqlite:///relative/path.db` or `sqlite:////absolute/path.db`: the file the table of
   *  leases is in (created on first use). */
  url: string
  /** `'expiring'`, the only kind on SQLite (no advisory locks: `'session'` rejects with
   *  `UNSUPPORTED`). */
  kind?: 'expiring'
}

/** A generator on a shard leased through a SQLite file. */
export declare class SqliteLease extends DatabaseLease {
  private constructor()
}

/** Leases the first free shard of `shards` through the SQLite file `url` names; rejects with
 *  code `NO_FREE_SHARD` when every one is held, `DATABASE_UNREACHABLE` when the file cannot be
 *  used, and `UNSUPPORTED` without a SQLite driver. */
export declare function lease(options: SqliteLeaseOptions): Promise<SqliteLease>

/** The SQL functions `uuidFunctions` registers: `shardid_to_uuid`, `shardid_to_uuid_text`,
 *  `shardid_from_uuid` (the MySQL family's names). */
export declare const UUID_FUNCTIONS: readonly ['shardid_to_uuid', 'shardid_to_uuid_text', 'shardid_from_uuid']

/** A SQLite connection functions can be registered on: better-sqlite3's `Database` or
 *  `node:sqlite`'s `DatabaseSync`. */
export interface SqliteFunctionHost {
  function(name: string, options: object, fn: (...args: any[]) => unknown): unknown
}

/** Registers the UUIDv7 bridge of `layout` on `db` (SQLite has no stored functions):
 *  `shardid_to_uuid(id)` the UUID's 16 bytes (a BLOB sorting as the IDs),
 *  `shardid_to_uuid_text(id)` its text, `shardid_from_uuid(u)` the ID back from either; NULL
 *  gives NULL. A UUID the bridge did not make for `layout` throws the `ShardIdError`
 *  (`INVALID_ARGUMENT`) out of the statement. */
export declare function uuidFunctions(db: SqliteFunctionHost, layout: Layout): void
