// What shardid/postgres's, shardid/mysql's and shardid/sqlite's leases share (database-lease.js): one class of
// lease over either database.
import type { Layout, LeaseStats, TimeInput, U64Input } from './index.js'

/** What the leases of `shardid/postgres` and `shardid/mysql` both take. */
export interface DatabaseLeaseOptions {
  layout: Layout
  /** `[first, end]`, end excluded. */
  shards: [number, number]
  /** An expiring lease's time to live, 300 to 3,600,000 ms (default 10,000): how long a crashed
   *  holder's shard stays taken; it is renewed every third of it. */
  ttlMs?: number
  /** After the lease is lost, the next call takes a new one (possibly another shard) instead of
   *  rejecting with `LEASE_LOST`. */
  retake?: boolean
  /** The table of leases (default `shardid_leases`). */
  table?: string
  /** The table's schema: PostgreSQL's (default: where the search path finds the table when the
   *  lease starts, else its first schema; the table must be owned by the user or one of its
   *  roles, else `INVALID_ARGUMENT` naming the owner), the MySQL family's database (default the
   *  URL's), SQLite's `main` (the default) or an attached database. Every statement names
   *  `schema.table`. */
  schema?: string
  backwardsToleranceMs?: U64Input
  maxBorrowUnits?: U64Input
}

/** A generator on a shard leased through a database (`PostgresLease`, `MysqlLease`, `SqliteLease`). */
export declare abstract class DatabaseLease {
  protected constructor()
  /** The layout of the IDs it makes. */
  readonly layout: Layout
  /** The table of leases. */
  readonly table: string
  /** The table's schema as given (`null`: the database's default, see `schema` of the options). */
  readonly schema: string | null
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
