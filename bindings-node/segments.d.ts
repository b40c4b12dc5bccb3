// shardid/segments: dense IDs from PostgreSQL segments (needs the `pg` package), or MySQL and
// MariaDB ones given `mysql://` URLs (needs `mysql2`).
import type { U64Input } from './index.js'

export interface DenseIdsOptions {
  /** A libpq connection string or URL for a connection the allocator owns, or a
   *  `mysql://user:password@host:port/database` (or `mariadb://`) URL (a list: ticket servers,
   *  each with the DDL of its index, used in turn and whichever answers)... */
  connectionString?: string | string[]
  /** ...or an unconnected `pg.Client` it then owns. */
  client?: unknown
  /** The tag (1 to 200 bytes), created beforehand with `<schema>.create_tag()`. */
  tag: string
  /** The schema holding the segments' DDL (default `seg`). */
  schema?: string
  /** Segment sizes, adapted to last about `targetMs` (defaults 1,000, 1,000,000 and 60,000). */
  minSize?: U64Input
  maxSize?: U64Input
  targetMs?: U64Input
  /** How long the async methods wait for a segment before `SEGMENT_UNAVAILABLE` (default 5,000). */
  waitMs?: number
}

/** Dense IDs of one tag: synchronous from memory, segments fetched in the background. */
export declare class DenseIds {
  private constructor()
  readonly tag: string
  waitMs: number
  /** Numbers taken and neither handed out nor given back by `close()`. */
  readonly skipped: bigint
  /** Segments fetched. */
  readonly fetches: number
  /** The next ID; throws `SEGMENT_UNAVAILABLE` when both segments are used up (retry later). */
  nextId(): bigint
  /** The next ID, waiting at most `waitMs` for a segment. */
  nextIdAsync(): Promise<bigint>
  /** `n` IDs; throws `SEGMENT_UNAVAILABLE` when the segments cannot cover them now. */
  nextIds(n: U64Input): BigUint64Array
  /** `n` IDs, waiting for segments. */
  nextIdsAsync(n: U64Input): Promise<BigUint64Array>
  /** Gives the unused rest back and ends the connection; later calls throw `CLOSED`. */
  close(): Promise<void>
  /** `await using orders = await denseIds(...)`: `close()` at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>
}

/** Resolves once the first segment is in memory; rejects with `UNKNOWN_TAG` for a tag never created. */
export declare function denseIds(options: DenseIdsOptions): Promise<DenseIds>

/**
 * The PostgreSQL DDL of dense IDs from segments in `schema` (default `seg`), to run once: the
 * same text as `python -m shardid.sql --segments`. `{ servers, index }`: ticket server `index`
 * of `servers`.
 */
export declare function ddl(schema?: string, options?: { servers?: number; index?: number }): string
