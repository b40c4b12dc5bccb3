// shardid/segments: dense IDs from PostgreSQL segments (needs the `pg` package), MySQL and
// MariaDB ones given `mysql://` URLs (needs `mysql2`), or a SQLite file's given `sqlite:///`
// URLs (needs `better-sqlite3`, or Node's own `node:sqlite`).
import type { U64Input } from './index.js'

/** What `denseIds(...)` takes: a connection and a tag. */
export interface DenseIdsOptions {
  /** A libpq connection string or URL for a connection the allocator owns, or a
   *  `mysql://user:password@host:port/database` (or `mariadb://`) URL (a list: ticket servers,
   *  each with the DDL of its index, used in turn and whichever answers), or a
   *  `sqlite:///relative.db` / `sqlite:////absolute.db` URL (one file; its tables created on
   *  first use)... */
  connectionString?: string | string[]
  /** ...or an unconnected `pg.Client` it then owns. */
  client?: unknown
  /** The tag (1 to 200 bytes), created beforehand with `<schema>.create_tag()`. */
  tag: string
  /** The schema holding the segments' DDL (default `seg`; on SQLite the file itself, `main`). */
  schema?: string
  /** Segment sizes, adapted to last about `targetMs` (defaults 1,000, 1,000,000 and 60,000). */
  minSize?: U64Input
  maxSize?: U64Input
  targetMs?: U64Input
  /** How long the async methods wait for a segment before `SEGMENT_UNAVAILABLE` (default 5,000). */
  waitMs?: number
}

/** A segment allocator's counters (`stats()` in every binding), named by the core's table. */
export interface SegmentStats {
  /** Segments fetched. */
  fetches: bigint
  /** Fetches that failed (the database down or slow, an unknown tag). */
  failedFetches: bigint
  /** How long the last fetch took, in milliseconds. */
  fetchLatencyLastMs: bigint
  /** How long the slowest fetch took, in milliseconds. */
  fetchLatencyMaxMs: bigint
  /** Fetches (failed ones too) that took at most 1 ms. */
  fetchLatencyLe1ms: bigint
  /** Fetches that took at most 5 ms. */
  fetchLatencyLe5ms: bigint
  /** Fetches that took at most 10 ms. */
  fetchLatencyLe10ms: bigint
  /** Fetches that took at most 50 ms. */
  fetchLatencyLe50ms: bigint
  /** Fetches that took at most 100 ms. */
  fetchLatencyLe100ms: bigint
  /** Fetches that took at most 500 ms. */
  fetchLatencyLe500ms: bigint
  /** Fetches that took at most 1 s. */
  fetchLatencyLe1000ms: bigint
  /** Fetches that took at most 5 s. */
  fetchLatencyLe5000ms: bigint
  /** Fetches timed (successful and failed). */
  fetchLatencyLeInf: bigint
  /** How long every fetch took together, in milliseconds. */
  fetchLatencySumMs: bigint
  /** Calls that found both segments used up and waited for a fetch. */
  emptyWaits: bigint
  /** Numbers taken from the database and neither handed out nor given back on close. */
  skipped: bigint
  /** IDs left in the current segment. */
  remaining: bigint
}

/** Dense IDs of one tag: synchronous from memory, segments fetched in the background. */
export declare class DenseIds {
  private constructor()
  /** The tag whose numbers it hands out. */
  readonly tag: string
  /** How long the async methods wait for a segment, ms (settable). */
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
  /** What this allocator did (the core's counters, named by its table); `shardid/prometheus`
   *  and `shardid/opentelemetry` report them too (`{schema, tag}`) until `close()`. */
  stats(): SegmentStats
  /** Gives the unused rest back and ends the connection; later calls throw `CLOSED`. */
  close(): Promise<void>
  /** `await using orders = await denseIds(...)`: `close()` at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>
}

/** Resolves once the first segment is in memory; rejects with `UNKNOWN_TAG` for a tag never created. */
export declare function denseIds(options: DenseIdsOptions): Promise<DenseIds>

/**
 * Creates the tag of dense IDs `tag` (from 1) on the server at `url` — a PostgreSQL connection
 * URL or a `mysql://`/`mariadb://` URL; a list: on each ticket server; or a `sqlite:///` URL,
 * its tables created on first use — if it is not there (a tag already there is left as it is).
 * Rejects with `INVALID_ARGUMENT` for a bad tag, URL or schema, `DATABASE` naming the DDL to
 * run when the schema (default `seg`) has none, `DATABASE_UNREACHABLE` when a server cannot be
 * reached (on SQLite: a missing directory, a read-only file, a file that is not a SQLite
 * database; a write lock held past the busy timeout is the driver's own error: better-sqlite3's
 * `code` `SQLITE_BUSY`, node:sqlite's `errcode` 5).
 */
export declare function createTag(url: string | string[], tag: string, options?: { schema?: string }): Promise<void>
/**
 * Creates the tag of dense IDs `tag` from `first` on the Redis server at `url` (`redis://`,
 * `rediss://` or `unix://`; `schema` is the keys' prefix, `shardid` by default), also on a
 * server that holds no shardid data (`createTag` refuses one: it is new, or it restarted empty
 * and lost what was handed out): 1 on a new server, past the last number handed out after a
 * loss. A tag already there is left as it is. Resolves to where its numbers continue.
 */
export declare function createTagFrom(url: string, tag: string, first: bigint | number, options?: { schema?: string }): Promise<bigint>

/**
 * The PostgreSQL DDL of dense IDs from segments in `schema` (default `seg`), to run once: the
 * same text as `python -m shardid.sql --segments`. `{ servers, index }`: ticket server `index`
 * of `servers`.
 */
export declare function ddl(schema?: string, options?: { servers?: number; index?: number }): string
/** A serial parsed back: its number, its period and the fields it shows (`null`: not shown). */
export interface ParsedSerial {
  number: bigint
  /** `'2026-11-25'`, `'2026-11'`, `'2026'`, or `''` for a format that never resets. */
  period: string
  year: number | null
  month: number | null
  day: number | null
  hour: number | null
  week: number | null
}

/** A serial format in an IANA time zone, parsed and checked once. */
export declare class SerialFormat {
  /** Throws `INVALID_SERIAL_FORMAT` (with the problem's `position`) or `UNKNOWN_TIME_ZONE`. */
  constructor(format: string, zone: string)
  /** The format as given. */
  readonly format: string
  /** The format with its reset written out (`{seq:6:day}`). */
  readonly canonical: string
  /** The zone's canonical name. */
  readonly zone: string
  /** The period after which numbers start again at 1. */
  readonly reset: 'never' | 'year' | 'month' | 'day'
  /** The number's digits (`{seq:N}`). */
  readonly width: number
  /** The largest number a period can issue (`10^width - 1`). */
  readonly maxNumber: bigint
  /** Every serial's length in characters. */
  readonly length: number
  /** The serial of `number` issued at `unixMs`. */
  render(number: U64Input, unixMs: U64Input): string
  /** Throws `INVALID_SERIAL` for text this format cannot have made. */
  parse(serial: string): ParsedSerial
  /** The period `unixMs` falls in. */
  periodAt(unixMs: U64Input): string
}

/** What `serials(...)` takes: a connection, the tag and its format and zone. */
export interface SerialsOptions {
  /** A PostgreSQL connection string, a `mysql://`/`mariadb://` URL (needs `mysql2`) or a `sqlite:///` URL. */
  connectionString?: string
  /** An unconnected `pg.Client` it then owns. */
  client?: unknown
  /** The serial tag, registered with `createSerial`. */
  tag: string
  /** E.g. `'ORD-{yyyy}{MM}{dd}-{seq:6}'`. */
  format: string
  /** An IANA time zone, e.g. `'Asia/Shanghai'`. */
  zone: string
  schema?: string
  minSize?: U64Input
  maxSize?: U64Input
  targetMs?: U64Input
  waitMs?: number
}

/** The serial numbers of one tag, from segments of PostgreSQL, MySQL, MariaDB or SQLite. */
export declare class Serials {
  private constructor()
  /** The serial tag (each period is a tag of its own: `orders@2026-11-25`). */
  readonly tag: string
  /** The format its serials have. */
  readonly format: SerialFormat
  /** How long the async methods wait for a segment, ms (settable). */
  waitMs: number
  /** Numbers taken and neither issued nor given back. */
  readonly skipped: bigint
  /** Segments fetched. */
  readonly fetches: number
  /** The next serial now; throws `SEGMENT_UNAVAILABLE` while the period's segment is being fetched. */
  nextSerial(): string
  /** The next serial issued at `unixMs` (a number of ms). */
  nextSerialAt(unixMs: number): string
  /** The next serial, waiting at most `waitMs` for the period's segment. */
  nextSerialAsync(unixMs?: number): Promise<string>
  /** The next serial issued at `unixMs`, waiting at most `waitMs` for the period's segment. */
  nextSerialAtAsync(unixMs: number): Promise<string>
  /** As `SerialFormat.parse` with this tag's format. */
  parse(serial: string): ParsedSerial
  /** As `SerialFormat.render` with this tag's format. */
  render(number: U64Input, unixMs: U64Input): string
  /** What it did over every period, as `DenseIds#stats()` names it: fetches and their latency,
   *  `emptyWaits`, `skipped` (the holes it made), `remaining` (of the current period's segment). */
  stats(): SegmentStats
  /** Gives every period's rest back and ends the connection; later calls throw `CLOSED`. */
  close(): Promise<void>
  /** `await using orders = await serials(...)`: `close()` at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>
}

/** Rejects with `UNKNOWN_TAG` for a tag never registered, `SERIAL_MISMATCH` for one registered otherwise. */
export declare function serials(options: SerialsOptions): Promise<Serials>

/** What `createSerial(...)` takes: a connection, the tag, its format and zone. */
export interface CreateSerialOptions {
  /** A PostgreSQL connection string, a `mysql://`/`mariadb://` URL (needs `mysql2`) or a `sqlite:///` URL. */
  connectionString?: string
  /** A connected `pg.Client`, used as it is. */
  client?: unknown
  tag: string
  format: string
  zone: string
  schema?: string
  /** Volume hiding: each number a random 1 to `maxGap` above the previous one (default 1). */
  maxGap?: number
}

/** What `createSerial(url, tag, format, options)` takes after the format: its zone and more. */
export interface CreateSerialMore {
  /** The IANA time zone the format's dates are read in (`UTC`, `Asia/Shanghai`). */
  zone: string
  /** The schema holding the segments' DDL (default `seg`). */
  schema?: string
  /** Volume hiding: each number a random 1 to `maxGap` above the previous one (default 1). */
  maxGap?: number
}

/**
 * Registers the serial tag `tag` with `format` on the server at `url` (PostgreSQL, a
 * `mysql://`/`mariadb://` URL, or a `sqlite:///` URL) once (again alike: nothing). Rejects with
 * `SERIAL_MISMATCH` for a tag registered otherwise, `INVALID_ARGUMENT` for a bad tag or URL,
 * `DATABASE` naming the DDL to run when the schema has none (on MySQL and MariaDB the segments'
 * and then the registrations', `serialsDdl` of `shardid/mysql`), `DATABASE_UNREACHABLE` when
 * the server cannot be reached.
 */
export declare function createSerial(url: string, tag: string, format: string, options: CreateSerialMore): Promise<void>
/** The same, all in one object (`client`: a connected `pg.Client` of yours, used as it is). */
export declare function createSerial(options: CreateSerialOptions): Promise<void>
