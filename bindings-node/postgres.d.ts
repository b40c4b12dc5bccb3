// shardid/postgres: shard leases through PostgreSQL (needs the `pg` package).
import type { Layout, LeaseStats, TimeInput, U64Input } from './index.js'

/** The default time to live of an expiring lease: 10,000 ms. */
export declare const DEFAULT_TTL_MS: number

/** What `lease(...)` of `shardid/postgres` takes. */
export interface PostgresLeaseOptions {
  layout: Layout
  /** A libpq connection string or URL for a connection the lease owns... */
  connectionString?: string
  /** ...or an unconnected `pg.Client` it then owns (it makes another with the same settings
   *  to reconnect). */
  client?: unknown
  /** `[first, end]`, end excluded. */
  shards: [number, number]
  /** `'expiring'` (the default: works behind transaction poolers) or `'session'` (advisory
   *  locks: direct connections only; a crashed holder's shard is free at once). */
  kind?: 'expiring' | 'session'
  /** An expiring lease's time to live, 300 to 3,600,000 ms (default 10,000): how long a crashed
   *  holder's shard stays taken; it is renewed every third of it. */
  ttlMs?: number
  /** After the lease is lost, the next call takes a new one (possibly another shard) instead of
   *  rejecting with `LEASE_LOST`. */
  retake?: boolean
  /** The table of leases (default `shardid_leases`). */
  table?: string
  backwardsToleranceMs?: U64Input
  maxBorrowUnits?: U64Input
}

/** A generator on a shard leased through PostgreSQL. */
export declare class PostgresLease {
  private constructor()
  /** The layout of the IDs it makes. */
  readonly layout: Layout
  /** The table of leases. */
  readonly table: string
  /** `'expiring'` (the default) or `'session'`. */
  readonly kind: 'expiring' | 'session'
  /** An expiring lease's time to live, ms. */
  readonly ttlMs: number
  /** Whether a lost lease is replaced at the next call. */
  readonly retake: boolean
  /** The shard held (after `close()`, the one it held; another after a retake). */
  readonly shard: number
  /** Whether the lease is held now (an expiring lease: renewed in time and not taken over). */
  readonly held: boolean
  /** What this lease did, over every shard it took (the core's counters; exporters see them too). */
  stats(): LeaseStats
  /** A new ID of the leased shard (renewing or retaking the lease first when due). */
  nextId(): Promise<bigint>
  /** A new ID as a decimal string, for JSON. */
  nextIdString(): Promise<string>
  /** One ID as if the clock read `now`; never waits for the clock. */
  nextIdAt(now: TimeInput): Promise<bigint>
  /** `n` IDs of the leased shard, increasing. */
  nextIds(n: U64Input): Promise<BigUint64Array>
  /** Releases the shard at once; later calls reject with `CLOSED`. */
  close(): Promise<void>
  /** `await using held = await lease(...)`: `close()` at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>
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
