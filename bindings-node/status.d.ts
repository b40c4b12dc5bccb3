import type { Layout } from './index'

/** The rows of one table, or `present` false when the table does not exist (not installed) or
 *  was not read (`notRead` says why). */
export interface Section<T> {
  /** The table, `schema.table` once its schema is known. */
  table: string
  present: boolean
  rows: T[]
  /** Why a table that exists was not read: on PostgreSQL, a lease table found through
   *  `search_path` that none of the current user's roles owns (a lease refuses it too). */
  notRead: string | null
}

/** A row of the lease table. */
export interface LeaseStatus {
  /** The layout's name: a preset's (`instagram`), `custom`, or `unknown`. */
  layout: string
  /** The layout's numbers as the row records them. */
  signature: string
  shard: number
  /** Who holds the shard (host and process), or held it last. */
  holder: string | null
  /** When it was taken. */
  since: Date | null
  /** The ceiling, in the layout's time units: no holder issued an ID above it. */
  ceiling: number
  /** The ceiling as a time (`null` for an unknown layout). */
  ceilingTime: Date | null
  /** When the lease expires (`null`: released, or a session lease). */
  expires: Date | null
  /** A session lease: held while its holder's session holds a lock. */
  session: boolean
  /** `held`, `expired`, `free` (released) or `session`. */
  state: 'held' | 'expired' | 'free' | 'session'
}

/** A tag of dense IDs from segments. */
export interface TagStatus {
  tag: string
  /** The next number it hands out. */
  next: bigint
  /** The size of its last segment (0: none taken yet). */
  segment: number
  /** Ticket servers' stride (1 on PostgreSQL, whose rows do not record it). */
  stride: number
  lastTake: Date
  /** Numbers a second, estimated from one reading: the last segment per the clients' target
   *  lifetime of a segment (60 s), or per the time since the last take when that is longer. */
  perSecond: number
  /** Years before 2^63 at that rate (`null`: never). */
  yearsLeft: number | null
  /** Years left as a person reads them (the text report's column): `never`, one decimal, or
   *  `> 1,000` above a thousand years. */
  yearsLeftText: string
  /** When (`null`: never, or after the year 9999). */
  runsOut: Date | null
}

/** A topic of the string <-> ID dictionary. */
export interface TopicStatus {
  topic: string
  /** How many strings it holds. */
  strings: number
  /** The last ID it assigned (`null`: none yet). */
  lastId: bigint | null
  dropped: boolean
}

/** A layout and when it runs out. */
export interface LayoutStatus {
  /** A preset's name or `custom`. */
  name: string
  signature: string
  /** `option` (the `layout` option, or the default) or `leases` (a lease row's). */
  source: 'option' | 'leases'
  runsOut: Date
  /** Years from the database's clock to the run-out date (negative once past). */
  yearsLeft: number
  /** It runs out within 5 years (or ran out). */
  warning: boolean
}

/** What `read()` found: the fields of `npx shardid status --json` (schema version 1). */
export interface StatusReport {
  /** `postgres`, `mysql` (MySQL and MariaDB) or `sqlite`. */
  database: 'postgres' | 'mysql' | 'sqlite'
  /** The database server's clock when the status was read. */
  now: Date
  leases: Section<LeaseStatus>
  tags: Section<TagStatus>
  topics: Section<TopicStatus>
  layouts: LayoutStatus[]
  /** One sentence per warning; empty when there is none. */
  warnings: string[]
  /** The report as `npx shardid status` prints it. */
  text: string
  /** The report as `npx shardid status --json` prints it. */
  json: string
}

/** Options of `read()`. */
export interface StatusOptions {
  /** Sets both `segmentsSchema` and `dictionarySchema`. */
  schema?: string
  /** Where the tags are (default `seg`; on SQLite `main`, an attached database otherwise). */
  segmentsSchema?: string
  /** Where the topics are (default `dict`; on SQLite `main`). */
  dictionarySchema?: string
  /** The lease table (default `shardid_leases`). */
  table?: string
  /** The lease table's schema, the lease's `schema` option (PostgreSQL's schema, the MySQL
   *  family's database, SQLite's attached database). Default: found as the lease finds it
   *  (on PostgreSQL where `search_path` finds it, then not read when none of the current
   *  user's roles owns it; the connection's database; SQLite `main`). */
  leaseSchema?: string
  /** The layout to report besides those the lease rows record (default Instagram's). */
  layout?: Layout
}

/**
 * The status of `database`: a URL (`postgresql://...`, `mysql://...`, `sqlite:///file.db`, the
 * file opened read-only with better-sqlite3), or an open pg Client or Pool, mysql2 connection
 * or SQLite database (better-sqlite3, `node:sqlite`), left open. `DATABASE_UNREACHABLE` when
 * the server cannot be reached (or the SQLite file does not exist); a statement's failure is
 * the driver's error.
 */
export function read(database: string | object, options?: StatusOptions): Promise<StatusReport>

/** `npx shardid status ...` (`args` with `status` first): what it prints and its exit status. */
export function main(args: string[]): Promise<{ stdout: string; stderr: string; code: number }>
