// shardid/redis: shard leases through a Redis 7 or Valkey server (needs the `ioredis` package,
// an optional peer dependency). Dense IDs on Redis are shardid/segments' (a `redis://` URL).
import type { Layout, U64Input } from './index.js'
import { DatabaseLease } from './database-lease.js'

/** The default time to live of a lease on Redis: 10,000 ms. */
export declare const DEFAULT_TTL_MS: number

/** What `lease(...)` of `shardid/redis` takes. */
export interface RedisLeaseOptions {
  layout: Layout
  /** `redis://[user:password@]host[:port][/db]`, `rediss://...`, `unix:///path/to/socket` or
   *  `redis+sentinel://host:26379[,host:26380...]/mymaster[/db]`. */
  url: string
  /** `[first, end]`, end excluded. */
  shards: [number, number]
  /** The time to live, 1,000 to 86,400,000 ms (default 10,000), by the server's clock: how long
   *  a crashed holder's shard stays taken; it is renewed every third of it. */
  ttlMs?: number
  /** After the lease is lost, the next call takes a new one (possibly another shard) instead of
   *  rejecting with `LEASE_LOST`. */
  retake?: boolean
  /** The prefix of the keys (default `shardid`: the lease hash `shardid:lease:{...}`). */
  schema?: string
  /** Only `'expiring'`: a lease on Redis expires. */
  kind?: 'expiring'
  backwardsToleranceMs?: U64Input
  maxBorrowUnits?: U64Input
}

/** A generator on a shard leased through a Redis server: a `DatabaseLease` (the SQL leases'
 *  driver runs it: `shard`, `held`, `nextId()`, `nextIds(n)`, `stats()`, `close()`, ...) whose
 *  `table` is the lease hash's key. */
export declare class RedisLease extends DatabaseLease {
  private constructor()
  /** The prefix of the keys. */
  readonly schema: string
  /** The lease hash's key (one per layout under the prefix). */
  readonly key: string
  /** `'expiring'`. */
  readonly kind: 'expiring'
  /** The fencing token of the current claim: larger than every earlier claim's of the shard. */
  readonly fencingToken: bigint
}

/** Leases the first free shard of `shards` through the Redis server at `url`; rejects with code
 *  `NO_FREE_SHARD` when every one is held, `INVALID_ARGUMENT` for a URL that is not Redis's, a bad
 *  prefix, time to live or range, `DATABASE_UNREACHABLE` when the server cannot be reached, and
 *  `UNSUPPORTED` without the `ioredis` package. */
export declare function lease(options: RedisLeaseOptions): Promise<RedisLease>
