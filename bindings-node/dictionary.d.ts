// shardid/dictionary: a string <-> ID dictionary on PostgreSQL (needs the `pg` package), on
// MySQL and MariaDB given `mysql://` URLs (needs `mysql2`), or in a SQLite file given
// `sqlite:///` URLs (needs `better-sqlite3`, or Node's own `node:sqlite`).
import type { U64Input } from './index.js'

/** What `new Dictionary(...)` takes: a connection (string or pool) and a topic. */
export interface DictionaryOptions {
  /** A PostgreSQL URL (`postgresql://`; pg reads no libpq `key=value` string), or a `mysql://user:password@host:port/database` (or
   *  `mariadb://`) URL, or a `sqlite:///relative.db` / `sqlite:////absolute.db` URL (a list:
   *  topics spread over the servers by `serverFor`)... */
  connectionString?: string | string[]
  /** ...or a `pg.Pool` (anything with `query()`) of yours, not ended by `close()`. */
  pool?: unknown
  /** The topic (1 to 200 bytes), created with `create()` or `<schema>.create_topic()`. */
  topic: string
  /** The schema holding the dictionary's DDL (default `dict`; on SQLite the file itself, `main`). */
  schema?: string
  /** Entries cached each way (default 100,000; 0: no cache). */
  cacheSize?: U64Input
}

/** The two-way cache of one topic (the core's). */
export interface DictCache {
  readonly capacity: number
  readonly size: number
  clear(): void
}

/** A dictionary's counters (`stats()` in every binding), named by the core's table. */
export interface DictionaryStats {
  /** Strings whose ID the cache held. */
  idHits: bigint
  /** Strings whose ID the cache did not hold (asked of the database). */
  idMisses: bigint
  /** IDs whose string the cache held. */
  valueHits: bigint
  /** IDs whose string the cache did not hold (asked of the database). */
  valueMisses: bigint
  /** Statements sent to the database (retries included). */
  statements: bigint
  /** Statements sent again on a new connection after the old one broke. */
  retries: bigint
}

/** The dictionary of one topic. Strings are 1 to 2048 bytes of UTF-8 without NUL; IDs 0 to 2^63 - 1. */
export declare class Dictionary {
  /**
   * The dictionary of `topic` on the server at `url` (a PostgreSQL connection URL or a
   * `mysql://`/`mariadb://` URL, or a `sqlite:///` URL whose tables are created on first use;
   * a list: topics spread over the servers by `serverFor`).
   * Connects lazily: the first call opens the connection.
   */
  constructor(url: string | string[], topic: string, options?: Omit<DictionaryOptions, 'connectionString' | 'pool' | 'topic'>)
  /** The same, all in one object (`pool`: a `pg.Pool` of yours in place of a URL). */
  constructor(options: DictionaryOptions)
  /** The topic whose strings it numbers. */
  readonly topic: string
  /** The schema holding the dictionary's DDL. */
  readonly schema: string
  /** The index of the server that holds the topic. */
  readonly server: number
  /** The topic's cache (both ways), shared by every call of this object. */
  readonly cache: DictCache
  /** Creates the topic (an existing one is left as it is); `DATABASE` naming the DDL to run when the schema has none. */
  create(): Promise<void>
  /** Drops the topic: its strings and IDs stay readable, nothing new is assigned (`TOPIC_DROPPED`). */
  drop(): Promise<void>
  /** The ID of `value`, assigned if new. */
  id(value: string): Promise<bigint>
  /** The IDs of `values`, in order, assigned if new. */
  ids(values: Iterable<string>): Promise<bigint[]>
  /** The IDs of `values`, `null` for a string never assigned; never assigns. */
  lookup(values: Iterable<string>): Promise<(bigint | null)[]>
  /** The string of `id`, `null` if never assigned. */
  value(id: U64Input): Promise<string | null>
  /** The strings of `ids`, `null` for an ID never assigned. */
  values(ids: Iterable<U64Input>): Promise<(string | null)[]>
  /** What this dictionary did (the core's counters, named by its table); `shardid/prometheus`
   *  and `shardid/opentelemetry` report them too (`{schema, topic}`) until `close()`. */
  stats(): DictionaryStats
  /** Ends the connection (a pool of yours is left alone); later calls reject with `CLOSED`. */
  close(): Promise<void>
  /** `await using urls = new Dictionary(...)`: `close()` at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>
}

/** The PostgreSQL DDL of the dictionary in `schema` (default `dict`). */
export declare function ddl(schema?: string): string
/** Which of `servers` servers holds `topic` (FNV-1a 64, then jump consistent hash). */
export declare function serverFor(topic: string, servers: number): number
/** The default `cacheSize`: entries cached each way (100,000). */
export declare const DEFAULT_CACHE: number
