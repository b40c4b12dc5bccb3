// shardid/mysql: MySQL 8 and MariaDB (needs the `mysql2` package for segments and the
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
}

/**
 * The MySQL DDL of `<database>.next_id()` (a BEFORE INSERT trigger makes it a column's
 * default) and the decoding functions, for the `mysql`/`mariadb` command line (`DELIMITER`).
 */
export declare function ddl(options: MysqlDdlOptions): string
/** The MySQL DDL of dense IDs from segments in database `schema` (default `seg`). */
export declare function segmentsDdl(schema?: string, options?: { servers?: number; index?: number }): string
/** The MySQL DDL of the dictionary in database `schema` (default `dict`). */
export declare function dictionaryDdl(schema?: string): string
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
