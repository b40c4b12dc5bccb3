// shardid/sqlite: shard leases through a SQLite file (needs better-sqlite3, or Node's built-in
// node:sqlite).
import { DatabaseLease, type DatabaseLeaseOptions } from './database-lease.js'

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
