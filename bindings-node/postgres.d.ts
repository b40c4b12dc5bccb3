// shardid/postgres: shard leases through PostgreSQL (needs the `pg` package).
import type { Layout, U64Input } from './index.js'
import { DatabaseLease, type DatabaseLeaseOptions } from './database-lease.js'

/** The default time to live of an expiring lease: 10,000 ms. */
export declare const DEFAULT_TTL_MS: number

/** What `lease(...)` of `shardid/postgres` takes. */
export interface PostgresLeaseOptions extends DatabaseLeaseOptions {
  /** A libpq connection string or URL for a connection the lease owns... */
  connectionString?: string
  /** ...or an unconnected `pg.Client` it then owns (it makes another with the same settings
   *  to reconnect). */
  client?: unknown
  /** `'expiring'` (the default: works behind transaction poolers) or `'session'` (advisory
   *  locks: direct connections only; a crashed holder's shard is free at once). */
  kind?: 'expiring' | 'session'
}

/** A generator on a shard leased through PostgreSQL. */
export declare class PostgresLease extends DatabaseLease {
  private constructor()
}

/** Leases the first free shard; rejects with code `NO_FREE_SHARD` when every one is held, and
 *  `DATABASE_UNREACHABLE` (pg's error as its `cause`) when the database cannot be reached. */
export declare function lease(options: PostgresLeaseOptions): Promise<PostgresLease>

/** The part of `pg`'s `types` that `int8AsBigInt` sets. */
export interface PgTypes {
  setTypeParser(oid: number, parse: (text: string) => unknown): void
  getTypeParser(oid: number): (text: string) => any
}

/**
 * Makes `pg` return `int8` columns (and arrays of them) as bigints instead of strings:
 * `int8AsBigInt(require('pg').types)`. Global to that `pg`. Returns `types`.
 */
export declare function int8AsBigInt<T extends PgTypes>(types: T): T

/** The options of `ddl`. */
export interface PostgresDdlOptions {
  layout: Layout
  /** The database's own shard: one no application process uses. */
  shard: U64Input
  /** The schema of the functions, e.g. `'insta5'` (a-z, 0-9 and _). */
  schema: string
  backwardsToleranceMs?: U64Input
  maxBorrowUnits?: U64Input
}

/**
 * The PostgreSQL DDL of `<schema>.next_id()` and the decoding functions, to run once: the same
 * text as Python's `shardid.sql.postgres` and `npx shardid sql`.
 */
export declare function ddl(options: PostgresDdlOptions): string

/** The options of `publicIdsDdl`. */
export interface PublicIdsDdlOptions {
  /** The schema of the functions (created if missing). */
  schema: string
  /** The layout whose IDs the functions take (default Instagram's: every ID of a signed
   *  64-bit column). */
  layout?: Layout
}
/** The PostgreSQL DDL of public IDs: `<schema>.shardid_public_encode` and `_decode`. */
export declare function publicIdsDdl(options: PublicIdsDdlOptions): string
