// Public types of the `shardid` package (the classes of api.js over the native addon, and the
// same over the WebAssembly module).

/** An ID as input: a `bigint`, a decimal string (as IDs travel in JSON), or a safe integer. */
export type IdInput = bigint | string | number
/** A time as input: a `Date`, or Unix milliseconds as a safe integer or `bigint`. */
export type TimeInput = Date | number | bigint
/** A 64-bit unsigned integer as input: a `bigint` or a safe integer. */
export type U64Input = bigint | number

import type { EncodingName, ErrorCode, ErrorFields, FieldOrderName, PresetName } from './core.generated.js'
export type { EncodingName, ErrorCode, ErrorFields, FieldOrderName, PresetName }

// `using` and `await using` (TypeScript 5.2+) need `Symbol.dispose`, `Symbol.asyncDispose` and
// the `Disposable` and `AsyncDisposable` interfaces, which TypeScript declares only in its
// `esnext.disposable` lib: declared here as @types/node declares them, so that a project whose
// `lib` lacks it compiles too. With that lib (or @types/node) the declarations merge.
declare global {
  interface SymbolConstructor {
    readonly dispose: unique symbol
    readonly asyncDispose: unique symbol
  }
  interface Disposable {
    [Symbol.dispose](): void
  }
  interface AsyncDisposable {
    [Symbol.asyncDispose](): PromiseLike<void>
  }
}

/**
 * An error shardid threw: `code` says which kind, and its fields are properties
 * (`err.retryAtMs`). Narrow on `code` to reach a kind's fields. An argument refused before the
 * core saw it (a negative shard, a fraction) carries `argument` and `reason` instead of the
 * kind's other fields (an ID keeps its value as given in `id`).
 */
export type ShardIdError = {
  [C in ErrorCode]: Error & { readonly code: C } & ErrorFields[C] & Partial<ErrorFields['INVALID_ARGUMENT']>
}[ErrorCode]

/**
 * `err instanceof ShardIdError` is true for every error shardid throws, whichever class it was
 * thrown as (`RangeError` for bad input, `TypeError` for a wrong type, `Error` otherwise).
 */
export declare const ShardIdError: {
  /** Every code, in the order of their numbers. */
  readonly codes: readonly ErrorCode[]
  [Symbol.hasInstance](value: unknown): value is ShardIdError
}

/** What `new Layout(...)` takes. */
export interface LayoutSpec {
  epochMs: U64Input
  timeBits: number
  shardBits: number
  sequenceBits: number
  /** Length of a time unit in ms (default 1; Sonyflake uses 10). */
  unitMs?: U64Input
  order?: FieldOrderName
  /** Whether IDs must fit a signed 64-bit column (default true). */
  signed?: boolean
}

/** The fields of an ID. */
export declare class Parts {
  /** The start of the ID's time unit, Unix milliseconds. */
  readonly timestampMs: number
  /** The shard (worker, machine) that made the ID. */
  readonly shard: number
  /** The ID's place among those of its shard and time unit, from 0. */
  readonly sequence: number
  /** `timestampMs` as a `Date` (made when read). */
  get date(): Date
  /** Every field, `date` as its ISO string. */
  toJSON(): { timestampMs: number; shard: number; sequence: number; date: string }
}

/** A validated bit layout. Immutable. */
export declare class Layout {
  /** 41 time | 13 shard | 10 sequence bits, epoch 2011-08-24T21:07:01.721Z, 1 ms units, signed. */
  static readonly INSTAGRAM: Layout
  /** 1 unused | 41 time | 10 worker | 12 sequence bits, epoch 2010-11-04T01:42:54.657Z, 1 ms units. */
  static readonly TWITTER: Layout
  /** 42 time | 10 worker | 12 increment bits, epoch 2015-01-01, 1 ms units, unsigned. */
  static readonly DISCORD: Layout
  /** 1 unused | 39 time | 8 sequence | 16 machine bits, epoch 2014-09-01, 10 ms units. */
  static readonly SONYFLAKE: Layout
  /** Validates a custom layout (`INVALID_LAYOUT` naming the broken rule). */
  constructor(spec: LayoutSpec)
  /** The epoch, Unix milliseconds: time 0 of the layout. */
  readonly epochMs: number
  /** The length of a time unit in milliseconds. */
  readonly unitMs: number
  /** The width of the time field in bits. */
  readonly timeBits: number
  /** The width of the shard field in bits. */
  readonly shardBits: number
  /** The width of the sequence field in bits. */
  readonly sequenceBits: number
  /** The order of the shard and sequence fields below the time. */
  readonly order: FieldOrderName
  /** Whether IDs fit a signed 64-bit column (the top bit is then never set). */
  readonly signed: boolean
  /** The largest shard the layout holds. */
  readonly maxShard: number
  /** The largest sequence number of a time unit. */
  readonly maxSequence: number
  /** The largest ID of the layout. */
  readonly maxId: bigint
  /** The last Unix millisecond the layout can represent. */
  readonly expiresAtMs: number
  /** `expiresAtMs` as a `Date`. */
  get expiresAt(): Date
  /** What defines the layout, as the constructor takes it back:
   *  `new Layout(JSON.parse(JSON.stringify(layout)))` equals `layout`. */
  toJSON(): Required<LayoutSpec> & { epochMs: number; unitMs: number }
  /** Whether `other` is a layout with the same definition. */
  equals(other: unknown): boolean
  /** The fields of an ID of this layout (a `bigint`, a decimal string or a safe integer); `INVALID_ID` for anything else. */
  decode(id: IdInput): Parts
  /** Decodes many IDs at once into columns, for tables of thousands of rows. */
  decodeMany(ids: readonly IdInput[] | BigUint64Array): {
    timestampMs: Float64Array
    shard: Float64Array
    sequence: Float64Array
  }
  /** The ID as a `bigint` when it is an ID of this layout; `INVALID_ID` otherwise. */
  validateId(id: IdInput): bigint
  /**
   * The UUIDv7 of an ID, as its lowercase hyphenated text: its time is the ID's own, the rest of
   * the ID and the layout's marker fill its random bits, so `fromUuid` gives the ID back and
   * UUIDs sort as their IDs do. (WebAssembly: in `shardid-wasm/public` only.)
   */
  toUuid(id: IdInput): string
  /** The same UUID as its 16 bytes (a `Buffer` in Node, a `Uint8Array` in WebAssembly). */
  toUuidBytes(id: IdInput): Uint8Array
  /** The ID a UUID (its text, or its 16 bytes) made by this layout's `toUuid` holds;
   *  `INVALID_ARGUMENT` for any other UUID. */
  fromUuid(uuid: string | Uint8Array): bigint
  /** The ID of the given time, shard and sequence. */
  compose(timestamp: TimeInput, shard: U64Input, sequence: U64Input): bigint
  /** The smallest ID of the time unit holding `timestamp`: `WHERE id >= minIdAt(t)`. */
  minIdAt(timestamp: TimeInput): bigint
  /** The largest ID of the time unit holding `timestamp`: `WHERE id <= maxIdAt(t)`. */
  maxIdAt(timestamp: TimeInput): bigint
  /** Instagram's `key % logicalShards`: the logical shard of, say, a user id. */
  shardForKey(key: U64Input, logicalShards: U64Input): number
  /** TiDB's decimal scatter: the last `digits` (1, 2 or 3; default 1) decimal digits move to
   *  just after the first, spreading consecutive IDs over 10, 100 or 1,000 key ranges. */
  scatterDecimal(id: IdInput, digits?: 1 | 2 | 3): bigint
  /** The inverse of `scatterDecimal` (with the same `digits`). */
  gatherDecimal(id: IdInput, digits?: 1 | 2 | 3): bigint
  /** Flips the top 8 time bits by the low bits of time and sequence: stays in range, its own inverse. */
  scatterBits(id: IdInput): bigint
  /** The inverse of `scatterBits` (the same transform). */
  gatherBits(id: IdInput): bigint
}

/** What `new Generator(...)` takes. */
export interface GeneratorOptions {
  layout: Layout
  shard: U64Input
  /** How far the clock may read behind the last ID before CLOCK_MOVED_BACKWARDS (default 1000). */
  backwardsToleranceMs?: U64Input
  /** How many time units a burst may run ahead of the clock (default 0: wait). */
  maxBorrowUnits?: U64Input
}

/**
 * Makes unique, strictly increasing IDs for one shard of a layout. Every Generator for the same
 * layout and shard in the process (worker threads included) shares one state.
 */
export declare class Generator {
  /** `SHARD_OUT_OF_RANGE` when the shard does not fit the layout. */
  constructor(options: GeneratorOptions)
  /** The layout of the IDs it makes. */
  readonly layout: Layout
  /** The shard of the IDs it makes. */
  readonly shard: number
  /** A new ID; waits for the next time unit (at most one) when this one is used up. */
  nextId(): bigint
  /** A new ID as a decimal string, for JSON. */
  nextIdString(): string
  /** One ID as if the clock read `now`; never waits (`SEQUENCE_EXHAUSTED` when the unit is used up). */
  nextIdAt(now: TimeInput): bigint
  /**
   * `n` IDs now, increasing; waits for the next time unit when one is used up — synchronously,
   * so a large batch blocks the event loop (1,048,576 IDs of Instagram's layout: about 1 s).
   * At most 16,777,216 per call (`INVALID_ARGUMENT` above).
   */
  nextIds(n: U64Input): BigUint64Array
  /** As `nextIds`, in chunks of 4,096 with the event loop running between two. */
  nextIdsAsync(n: U64Input): Promise<BigUint64Array>
  /**
   * Up to `n` IDs as if the clock read `now`, never waiting: **fewer than `n`** when the time
   * unit (and the units the generator may borrow) runs out — e.g. at most 1,024 per
   * millisecond with Instagram's layout. Check the length; call again with a later `now`.
   */
  nextIdsAt(now: TimeInput, n: U64Input): BigUint64Array
  /** What every Generator for this layout and shard in the process did (counts since it started); `UNSUPPORTED` in the WebAssembly module. */
  stats(): GeneratorStats
}

/** A generator's counters, named by the core's table (`stats()` in every binding). */
export interface GeneratorStats {
  /** IDs handed out. */
  ids: bigint
  /** Calls that waited for the next time unit, their own being used up. */
  waits: bigint
  /** Time units begun ahead of the clock (`maxBorrowUnits`). */
  borrowedUnits: bigint
  /** Calls that found the clock behind the last ID and went on within the tolerance. */
  clockBackwards: bigint
  /** Calls refused with `CLOCK_MOVED_BACKWARDS`. */
  clockBackwardsRefused: bigint
  /** Times this process started its clock's ticker thread (bursts start it). */
  tickerStarts: bigint
}

/** A database lease's counters (`stats()` of shardid/postgres's and shardid/mysql's leases),
 *  named by the core's table, over every shard the lease took. */
export interface LeaseStats {
  /** Shards taken: the first claim, and each one after a loss (`retake`). */
  acquisitions: bigint
  /** Statements that pushed an expiring lease's expiry forward: heartbeats, and ceiling writes (which renew it too). */
  renewals: bigint
  /** Ceilings recorded in the lease's row before IDs above the last one were handed out. */
  ceilingWrites: bigint
  /** Renewals whose answer came back more than two thirds of the time to live after the last renewal was sent. */
  lateRenewals: bigint
  /** Times the lease was lost while held: taken over, or past its deadline (closing is not a loss). */
  losses: bigint
  /** 1n while the lease holds its shard, 0n once lost or closed. */
  held: bigint
}

/** What `lease(...)` takes. */
export interface LeaseOptions {
  layout: Layout
  /** A directory of lock files, one per shard (`shard-<n>.lock`); created if missing. */
  directory: string
  /** The range of shards to lease from: `[first, end]`, end excluded. */
  shards: [U64Input, U64Input]
  backwardsToleranceMs?: U64Input
  maxBorrowUnits?: U64Input
}

/**
 * A generator on a shard leased from lock files: no two processes on a host hold the same
 * shard, and a successor continues above its predecessor's IDs. Node addon only (the
 * WebAssembly build throws `UNSUPPORTED`).
 */
export declare class LeasedGenerator {
  private constructor()
  /** The layout of the IDs it makes. */
  readonly layout: Layout
  /** The directory of the lock files. */
  readonly directory: string
  /** The shard this process holds. */
  readonly shard: number
  /** A new ID of the leased shard, as `Generator.nextId`. */
  nextId(): bigint
  /** A new ID as a decimal string, for JSON. */
  nextIdString(): string
  /** One ID as if the clock read `now`; never waits. */
  nextIdAt(now: TimeInput): bigint
  /** `n` IDs now, increasing (as `Generator.nextIds`). */
  nextIds(n: U64Input): BigUint64Array
  /** As `nextIds`, in chunks of 4,096 with the event loop running between two. */
  nextIdsAsync(n: U64Input): Promise<BigUint64Array>
  /** Releases the shard at once, so another process can take it (and continue above this
   *  one's IDs); later calls throw `CLOSED`. Closing twice is fine. */
  close(): void
  /** `using held = lease(...)`: `close()` at the end of the block. */
  [Symbol.dispose](): void
}

/** Leases the first free shard of `shards`; throws `NO_FREE_SHARD` when all are held. */
export declare function lease(options: LeaseOptions): LeasedGenerator

/** What `shardFromOrdinal(...)` takes. */
export interface ShardFromOrdinalOptions {
  layout: Layout
  /** The range of shards this service was given: `[first, end]`, end excluded. */
  shards: [U64Input, U64Input]
  /** The pod's name, `<statefulset>-<ordinal>` (default: the `HOSTNAME` environment
   *  variable, then the host's name). */
  hostname?: string | null
}

/**
 * The shard of this Kubernetes StatefulSet pod: the ordinal at the end of its hostname
 * (`app-3` is shard 3), checked against the layout's shards (`SHARD_OUT_OF_RANGE`) and
 * `shards` (`INVALID_ARGUMENT` naming `hostname`, as for a name with no ordinal). Node addon
 * only (the WebAssembly build throws `UNSUPPORTED`).
 */
export declare function shardFromOrdinal(options: ShardFromOrdinalOptions): number

/** What a public ID's format is: its type prefix, encoding and layout. */
export interface PublicIdFormat {
  /** The type prefix: `''` (none), or 1 to 63 of a-z, 0-9 and _, starting with a letter. */
  prefix: string
  /** How the body is written (default `'base32'`). */
  encoding?: EncodingName
  /** The layout whose IDs are taken (default `Layout.INSTAGRAM`: every ID of a signed 64-bit
   *  column; Discord's IDs need `Layout.DISCORD`). */
  layout?: Layout
}

/** What `new PublicIds(...)` takes. */
export interface PublicIdsOptions extends PublicIdFormat {
  /** The secret key: exactly 16 random bytes. Not kept: only what is derived from it. */
  key: Uint8Array
  /** The key's version, 0 to 31 (default 0), which every text made carries. */
  keyVersion?: U64Input
  /** Old keys by version, after a rotation: texts made with them still decode. */
  oldKeys?: Record<number, Uint8Array> | Map<number | bigint, Uint8Array>
}

/**
 * Public IDs: an ID as short, opaque text for URLs and APIs (`note_0923h26jsg2d8g`) and back,
 * under a secret key; the same text as every other language. It hides (the time, shard and
 * order of IDs); it does not authenticate. In the WebAssembly build, only `shardid-wasm/public`
 * has it: and a browser cannot decode without the key, which it must not hold (use
 * `checkPublicId` there).
 */
export declare class PublicIds {
  constructor(options: PublicIdsOptions)
  /** From keys as text (32 hex digits, or `VERSION:HEX` pairs separated by commas, the
   *  highest version current), as an environment variable holds them. `format` may be the
   *  prefix alone: `fromKeys(keys, 'note')`, as Python's `from_keys(keys, 'note')`. */
  static fromKeys(keys: string, format: PublicIdFormat | string): PublicIds
  /** From the keys in the environment variable `variable` (default `SHARDID_PUBLIC_ID_KEYS`). */
  static fromEnv(format: PublicIdFormat & { variable?: string }): PublicIds
  /** The type prefix of every text (`note` in `note_0923h26jsg2d8g`). */
  readonly prefix: string
  /** The encoding of the texts. */
  readonly encoding: EncodingName
  /** The layout whose IDs it encodes and accepts back. */
  readonly layout: Layout
  /** The current key's version. */
  readonly keyVersion: number
  /** Every key's version, the current one first. */
  readonly keyVersions: readonly number[]
  /** The length of every text made. */
  readonly textLength: number
  /** A regular expression's source matching every text of this format (no anchors). */
  readonly pattern: string
  /** The public ID of `id`; `INVALID_ID` for a value that is not an ID of the layout. */
  encode(id: IdInput): string
  /** The ID a public ID stands for; a `RangeError` coded `PUBLIC_ID_PREFIX`, `PUBLIC_ID_LENGTH`,
   *  `PUBLIC_ID_ALPHABET`, `PUBLIC_ID_CHECK`, `PUBLIC_ID_OVERFLOW`, `UNKNOWN_KEY_VERSION` or
   *  `PUBLIC_ID_MISMATCH` for any other text. */
  decode(text: string): bigint
  /** The shape of `text` checked without decoding; the key version it names. */
  check(text: string): number
  /** A `JSON.stringify` replacer: the values of `keys` as their public IDs, every other bigint
   *  as its decimal string. */
  jsonReplacer(keys: readonly string[]): (key: string, value: unknown) => unknown
  /** A `JSON.parse` reviver: the values of `keys` (public IDs, or arrays of them) as bigint IDs. */
  jsonReviver(keys: readonly string[]): (key: string, value: unknown) => unknown
}

/** The shape of a public ID checked without its key (prefix, length, alphabet, check symbol):
 *  what a browser can do. Returns the key version the text names. */
export declare function checkPublicId(text: string, format: { prefix: string; encoding?: EncodingName }): number

/** The ID a UUID made by `Layout#toUuid` holds; without `layout`, the preset its marker names
 *  (a custom layout's UUID needs its layout). `INVALID_ARGUMENT` for a UUID the bridge did not
 *  make, of another version or variant, or of another layout. */
export declare function fromUuid(uuid: string | Uint8Array, layout?: Layout | null): bigint

/** A `JSON.stringify` replacer: every bigint as its decimal string. */
export declare function jsonReplacer(key: string, value: unknown): unknown
/**
 * A `JSON.parse` reviver: the values of `keys` as bigint IDs of `layout` (required: IDs are
 * checked against the layout that made them), checked; an array of them too. Throws
 * `INVALID_ID` for anything else.
 */
export declare function jsonReviver(keys: readonly string[], layout: Layout): (key: string, value: unknown) => unknown
/** The clock the generators read: Unix ms, monotonic, anchored to the wall clock. */
export declare function nowMs(): number
/** The package's version. */
export declare const version: string
/** Whether Generators in different worker threads share state (true for the Node addon). */
export declare const threadsShareState: boolean

declare const shardid: {
  Layout: typeof Layout
  Generator: typeof Generator
  PublicIds: typeof PublicIds
  checkPublicId: typeof checkPublicId
  fromUuid: typeof fromUuid
  LeasedGenerator: typeof LeasedGenerator
  lease: typeof lease
  shardFromOrdinal: typeof shardFromOrdinal
  Parts: typeof Parts
  ShardIdError: typeof ShardIdError
  jsonReplacer: typeof jsonReplacer
  jsonReviver: typeof jsonReviver
  nowMs: typeof nowMs
  version: string
  threadsShareState: boolean
}
export default shardid
