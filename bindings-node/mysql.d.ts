// shardid/mysql: MySQL 8 and MariaDB (needs the `mysql2` package for leases, segments and the
// dictionary; the DDL needs nothing).
import type { Layout, U64Input } from './index.js'
import { DatabaseLease, type DatabaseLeaseOptions } from './database-lease.js'

/** The default time to live of an expiring lease: 10,000 ms. */
export declare const DEFAULT_TTL_MS: number

/** What `lease(...)` of `shardid/mysql` takes. */
export interface MysqlLeaseOptions extends DatabaseLeaseOptions {
  /** `mysql://user:password@host:port/database` (or `mariadb://`): the table of leases is in
   *  that database. */
  url: string
  /** `'expiring'` (the default: the only kind that holds on Galera) or `'session'` (`GET_LOCK`:
   *  one server reached directly; `UNSUPPORTED` on a Galera node). */
  kind?: 'expiring' | 'session'
}

/** A generator on a shard leased through MySQL or MariaDB. */
export declare class MysqlLease extends DatabaseLease {
  private constructor()
}

/** Leases the first free shard of `shards` through the MySQL or MariaDB server at `url`;
 *  rejects with code `NO_FREE_SHARD` when every one is held, `INVALID_ARGUMENT` for a URL that
 *  is not `mysql://` or `mariadb://`, and `UNSUPPORTED` without the `mysql2` package. */
export declare function lease(options: MysqlLeaseOptions): Promise<MysqlLease>

/** The options of `ddl`. */
export interface MysqlDdlOptions {
  layout: Layout
  /** The database's own shard: one no application process uses. */
  shard: U64Input
  /** The database the functions go in, e.g. `insta5`. */
  schema: string
  backwardsToleranceMs?: U64Input
  maxBorrowUnits?: U64Input
  /** `'mariadb'` for MariaDB's SQL (a Galera cluster as one server); MySQL 8's by default. */
  dialect?: MysqlDialect
}

/** Which server's SQL: MySQL 8's or MariaDB's. */
export type MysqlDialect = 'mysql' | 'mariadb'

/**
 * The MySQL DDL of `<database>.next_id()` (a BEFORE INSERT trigger makes it a column's
 * default) and the decoding functions, for the `mysql`/`mariadb` command line (`DELIMITER`).
 */
export declare function ddl(options: MysqlDdlOptions): string
/** The MySQL DDL of dense IDs from segments in database `schema` (default `seg`). */
export declare function segmentsDdl(schema?: string, options?: { servers?: number; index?: number; dialect?: MysqlDialect }): string
/** The MySQL DDL of serial numbers' registrations in database `schema` (default `seg`), run
 *  after `segmentsDdl` (`createSerial` and `serials` of `shardid/segments` on a `mysql://` URL). */
export declare function serialsDdl(schema?: string): string
/** The MySQL DDL of the dictionary in database `schema` (default `dict`); `{ dialect: 'mariadb' }`
 *  names a Galera cluster as one server. */
export declare function dictionaryDdl(schema?: string, options?: { dialect?: MysqlDialect }): string
/** The statements of a MySQL script, for a driver to send one at a time. */
export declare function statements(script: string): string[]
/**
 * mysql2's options that keep BIGINTs exact (`{ supportBigNumbers: true, bigNumberStrings: true }`):
 * `mysql.createConnection({ ...exactBigints, ... })`, then `BigInt(row.id)`. mysql2's default
 * returns a number, which rounds IDs above 2^53.
 */
export declare const exactBigints: Readonly<{ supportBigNumbers: true; bigNumberStrings: true }>
/** A `mysql://` or `mariadb://` URL's parts, as every shardid client reads it (percent-decoded). */
export declare function parseUrl(url: string): { user: string; password: string | null; host: string; port: number; database: string | null }

/** Whether `text` names a MySQL or MariaDB server by the core's one rule for URLs (`mysql://`,
 *  `mariadb://`); `INVALID_ARGUMENT` for a URL no driver takes. */
export declare function isUrl(text: unknown): boolean

/** A mysql2 connection (promise API) with the shardid client's settings. */
export interface MysqlConnection {
  query(options: unknown, values?: unknown): Promise<[unknown, unknown]>
  beginTransaction(): Promise<void>
  commit(): Promise<void>
  rollback(): Promise<void>
  end(): Promise<void>
  destroy(): void
  /** The server's SQL, learnt at connection (one round trip). */
  shardidDialect: MysqlDialect
}

/**
 * A mysql2 connection to the server `url` names, as shardid's own clients open it: exact
 * bigints (`exactBigints`), `utf8mb4`, a 2 s connect timeout, and the server's SQL learnt.
 * Rejects with `DATABASE_UNREACHABLE` (mysql2's error as its `cause`) when it cannot be
 * opened, `NOT_MYSQL` when what answers is not MySQL, `UNSUPPORTED` without mysql2.
 */
export declare function connect(url: string): Promise<MysqlConnection>

/** Whether a mysql2 error means the connection is gone (open another). */
export declare function lost(err: unknown): boolean

/** The dense-ID segment statements of `shardid/segments` on MySQL, as the core renders them
 *  and in its order (`shardid::sql::mysql`), on a connection of `connect()`; numbers are
 *  decimal strings. */
export declare class Segments {
  constructor(schema: string)
  /** One segment of `tag` from server `server` (its stride is learnt at its first take):
   *  `[first, count, stride]`. */
  take(connection: MysqlConnection, server: number, tag: string, size: U64Input): Promise<[string, string, string]>
  /** Gives `first..end` back to `tag`; whether it was taken back. */
  giveBack(connection: MysqlConnection, tag: string, first: string, end: string): Promise<boolean>
  /** Creates `tag` (from 1) if it is not there (`createTag` of shardid/segments sends it). */
  createTag(connection: MysqlConnection, tag: string): Promise<void>
}

/** The dictionary's steps of `shardid/dictionary` on MySQL for one topic, on a connection of
 *  `connect()`; IDs are decimal strings, `null` for none. */
export declare class Dictionary {
  constructor(schema: string, topic: string)
  /** The database holding the dictionary's DDL. */
  readonly schema: string
  /** The topic whose strings it numbers. */
  readonly topic: string
  /** The IDs of `values`, `null` for a string never assigned; never assigns. */
  lookup(connection: MysqlConnection, values: string[]): Promise<(string | null)[]>
  /** The IDs of `values`, assigned (one transaction) if new. */
  ids(connection: MysqlConnection, values: string[]): Promise<string[]>
  /** The strings of `ids`, `null` for an ID never assigned. */
  values(connection: MysqlConnection, ids: U64Input[]): Promise<(string | null)[]>
  /** Creates the topic (an existing one is left as it is; a dropped one is refused). */
  create(connection: MysqlConnection): Promise<void>
  /** Drops the topic: its strings stay readable, nothing new is assigned. */
  drop(connection: MysqlConnection): Promise<void>
}
