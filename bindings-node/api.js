'use strict'
// The public classes, over a backend of plain functions: the native addon
// (native.generated.js) in the Node package, js/backend.js over the WebAssembly module. No ID logic lives here: every check and every bit is the
// core's; this file only gives the functions their classes and their `Parts` objects.

const { ShardIdError, makeError } = require('./errors.js')
const { PRESETS, LIMITS, STATS } = require('./core.generated.js')

/** `{ name: value }` from a family's names (core.generated.js) and a backend's values. */
function statsObject(names, values) {
  const out = {}
  names.forEach((name, i) => { out[name] = values[i] })
  return out
}

// The async batches make IDs in chunks of this many, yielding to the event loop between two:
// 4,096 IDs are 4 ms of Instagram's layout at most.
const CHUNK = 4096
const yieldToLoop = () => new Promise((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)))

// `n` IDs from `next(count)` in chunks, the event loop running between two; a count that is not
// a plain in-range integer goes to `next` at once, which refuses it with the core's error.
async function inChunks(next, n) {
  const plain = (typeof n === 'number' && Number.isSafeInteger(n)) || typeof n === 'bigint'
  if (!plain || n <= CHUNK || n > LIMITS.maxBatchIds) return next(n)
  const want = Number(n)
  const out = new BigUint64Array(want)
  for (let at = 0; at < want; at += CHUNK) {
    if (at > 0) await yieldToLoop()
    out.set(next(Math.min(CHUNK, want - at)), at)
  }
  return out
}

// A decimal scatter's count of digits: 1, 2 or 3 (the core's ScatterDigits).
const scatterDigits = (digits) => {
  if (digits === 1 || digits === 2 || digits === 3 || digits === 1n || digits === 2n || digits === 3n) return Number(digits)
  const Class = typeof digits === 'number' || typeof digits === 'bigint' ? RangeError : TypeError
  throw makeError('INVALID_ARGUMENT', { argument: 'digits', reason: LIMITS.scatterDigits }, Class)
}

/** A non-empty array of strings only (a plain loop: `every` with a callback costs 5x more). */
function allStrings(ids) {
  if (!Array.isArray(ids) || ids.length === 0) return false
  for (let i = 0; i < ids.length; i++) if (typeof ids[i] !== 'string') return false
  return true
}

function makeApi(backend) {
  // Decoded fields arrive here (see `decode` in src/layout.rs). The addon keeps one array per
  // instance of itself (each copy loaded, each worker: src/instance.rs) and answers with the one
  // it kept, which another copy of this file over the same addon registered first, maybe; the
  // WebAssembly backend keeps the one given and answers nothing.
  const given = new Float64Array(3)
  const scratch = backend.setDecodeBuffer(given) ?? given
  // Where a Layout keeps the backend's index of it (private: shardid/postgres goes through
  // the public fields).
  const LAYOUT = Symbol('shardid.layout')
  const GENERATOR = Symbol('shardid.generator')

  /** The fields of an ID; `date` is made when asked for. */
  class Parts {
    constructor(timestampMs, shard, sequence) {
      this.timestampMs = timestampMs
      this.shard = shard
      this.sequence = sequence
    }
    get date() {
      return new Date(this.timestampMs)
    }
    /** Every field, `date` as its ISO string (what `JSON.stringify` makes of a `Date`). */
    toJSON() {
      return { timestampMs: this.timestampMs, shard: this.shard, sequence: this.sequence, date: this.date.toJSON() }
    }
  }

  class Layout {
    /**
     * A custom layout, validated by the core:
     * `new Layout({ epochMs, timeBits, shardBits, sequenceBits, unitMs = 1,
     *               order = 'time_shard_sequence', signed = true })`.
     */
    constructor(spec) {
      if (spec !== null && typeof spec === 'object' && typeof spec[LAYOUT] === 'number') {
        this[LAYOUT] = spec[LAYOUT] // internal: a registered layout
      } else {
        const s = spec ?? {}
        this[LAYOUT] = backend.layoutNew(
          s.epochMs, s.unitMs ?? 1, s.timeBits, s.shardBits, s.sequenceBits,
          String(s.order ?? 'time_shard_sequence'), s.signed ?? true,
        )
      }
      Object.assign(this, backend.layoutInfo(this[LAYOUT]))
      Object.freeze(this)
    }
    get expiresAt() {
      return new Date(this.expiresAtMs)
    }
    /**
     * What defines the layout, as `new Layout(...)` takes it back:
     * `new Layout(JSON.parse(JSON.stringify(layout)))` equals `layout`. (`JSON.stringify` throws
     * on a bigint: `maxId` and the other derived fields are left out.)
     */
    toJSON() {
      const { epochMs, unitMs, timeBits, shardBits, sequenceBits, order, signed } = this
      return { epochMs, unitMs, timeBits, shardBits, sequenceBits, order, signed }
    }
    equals(other) {
      return other instanceof Layout && other[LAYOUT] === this[LAYOUT]
    }
    decode(id) {
      backend.decode(this[LAYOUT], id)
      return new Parts(scratch[0], scratch[1], scratch[2])
    }
    /**
     * Decodes many IDs at once (an array of bigints or decimal strings, or a BigUint64Array)
     * into `{ timestampMs, shard, sequence }` typed arrays: for tables of thousands of rows.
     */
    decodeMany(ids) {
      // IDs from JSON are strings: they cross into the backend as one joined string (the
      // backend checks every one and their count, so a string holding a comma is refused).
      const [timestampMs, shard, sequence] = allStrings(ids)
        ? backend.decodeManyText(this[LAYOUT], ids.join(','), ids.length)
        : backend.decodeMany(this[LAYOUT], ids)
      return { timestampMs, shard, sequence }
    }
    validateId(id) {
      return backend.validateId(this[LAYOUT], id)
    }
    compose(timestamp, shard, sequence) {
      return backend.compose(this[LAYOUT], timestamp, shard, sequence)
    }
    minIdAt(timestamp) {
      return backend.minIdAt(this[LAYOUT], timestamp)
    }
    maxIdAt(timestamp) {
      return backend.maxIdAt(this[LAYOUT], timestamp)
    }
    shardForKey(key, logicalShards) {
      return backend.shardForKey(this[LAYOUT], key, logicalShards)
    }
    scatterDecimal(id, digits = 1) {
      return backend.scatterDecimal(this[LAYOUT], id, scatterDigits(digits))
    }
    gatherDecimal(id, digits = 1) {
      return backend.gatherDecimal(this[LAYOUT], id, scatterDigits(digits))
    }
    scatterBits(id) {
      return backend.scatterBits(this[LAYOUT], id)
    }
    gatherBits(id) {
      return backend.gatherBits(this[LAYOUT], id)
    }
    /** The UUIDv7 of an ID, as its lowercase hyphenated text: its time is the ID's, the rest
     *  of the ID and the layout's marker fill its random bits (the core's bridge). */
    toUuid(id) {
      return backend.toUuid(this[LAYOUT], id)
    }
    /** The same UUID as its 16 bytes. */
    toUuidBytes(id) {
      return backend.toUuidBytes(this[LAYOUT], id)
    }
    /** The ID a UUID (text, or 16 bytes) made by this layout's `toUuid` holds. */
    fromUuid(uuid) {
      return backend.fromUuid(this[LAYOUT], uuid)
    }
  }
  for (const name of PRESETS) {
    Object.defineProperty(Layout, name, {
      value: new Layout({ [LAYOUT]: backend.layoutPreset(name) }),
      enumerable: true,
    })
  }

  class Generator {
    /**
     * `new Generator({ layout, shard, backwardsToleranceMs?, maxBorrowUnits? })`. Every
     * Generator for the same layout and shard in the process (worker threads included)
     * shares one state: they never repeat each other's IDs.
     */
    constructor(options) {
      const o = options ?? {}
      if (!(o.layout instanceof Layout)) {
        throw makeError('INVALID_ARGUMENT', { argument: 'options.layout', reason: 'must be a shardid Layout (e.g. Layout.INSTAGRAM)' }, TypeError)
      }
      this.layout = o.layout
      this[GENERATOR] = backend.generatorNew(
        o.layout[LAYOUT], o.shard, o.backwardsToleranceMs, o.maxBorrowUnits,
      )
      this.shard = Number(o.shard)
      Object.freeze(this)
    }
    nextId() {
      return backend.nextId(this[GENERATOR])
    }
    nextIdString() {
      return backend.nextIdString(this[GENERATOR])
    }
    nextIdAt(now) {
      return backend.nextIdAt(this[GENERATOR], now)
    }
    nextIds(n) {
      return backend.nextIds(this[GENERATOR], n)
    }
    /** `n` IDs, increasing, made in chunks with the event loop running between two. */
    nextIdsAsync(n) {
      return inChunks((count) => backend.nextIds(this[GENERATOR], count), n)
    }
    nextIdsAt(now, n) {
      return backend.nextIdsAt(this[GENERATOR], now, n)
    }
    /**
     * What every Generator for this layout and shard in the process did: `{ ids, waits,
     * borrowedUnits, clockBackwards, clockBackwardsRefused, tickerStarts }`, bigint counts
     * named by the core's table.
     */
    stats() {
      return statsObject(STATS.generator, backend.generatorStats(this[GENERATOR]))
    }
  }

  const LEASE = Symbol('shardid.lease')

  /**
   * A generator on a shard leased from a directory of lock files: copies of one service on a
   * host (cluster workers, PM2, replicas) never hold the same shard, a killed worker's shard
   * is free again, and its successor continues above the IDs it issued. Node addon only.
   */
  class LeasedGenerator {
    constructor(secret, layout, directory, index) {
      if (secret !== LEASE) {
        throw makeError('INVALID_ARGUMENT', { argument: 'LeasedGenerator', reason: 'is made by shardid.lease({ layout, directory, shards })' }, TypeError)
      }
      this.layout = layout
      this.directory = directory
      this[GENERATOR] = index
      Object.freeze(this)
    }
    get shard() {
      return backend.leaseShard(this[GENERATOR])
    }
    nextId() {
      return backend.leaseNextId(this[GENERATOR])
    }
    nextIdString() {
      return backend.leaseNextIdString(this[GENERATOR])
    }
    nextIdAt(now) {
      return backend.leaseNextIdAt(this[GENERATOR], now)
    }
    nextIds(n) {
      return backend.leaseNextIds(this[GENERATOR], n)
    }
    nextIdsAsync(n) {
      return inChunks((count) => backend.leaseNextIds(this[GENERATOR], count), n)
    }
    /** Releases the shard at once, so another process can take it (and continue above this
     *  one's IDs); later calls throw LEASE_LOST. Also `using g = lease(...)`. */
    close() {
      backend.leaseClose(this[GENERATOR])
    }
  }
  if (Symbol.dispose) LeasedGenerator.prototype[Symbol.dispose] = LeasedGenerator.prototype.close

  /**
   * `lease({ layout, directory, shards: [first, end], backwardsToleranceMs?, maxBorrowUnits? })`:
   * takes the first free shard of `first..end` (end excluded) from lock files in `directory`.
   * Throws an `Error` with code `NO_FREE_SHARD` when every shard is held by a live process.
   */
  function lease(options) {
    const o = options ?? {}
    if (!(o.layout instanceof Layout) || typeof o.directory !== 'string' || !Array.isArray(o.shards) || o.shards.length !== 2) {
      throw makeError('INVALID_ARGUMENT', { argument: 'lease', reason: 'takes { layout: Layout, directory: string, shards: [first, end] }' }, TypeError)
    }
    const index = backend.leaseNew(o.layout[LAYOUT], o.directory, o.shards[0], o.shards[1],
      o.backwardsToleranceMs, o.maxBorrowUnits)
    return new LeasedGenerator(LEASE, o.layout, o.directory, index)
  }

  /**
   * `shardFromOrdinal({ layout, shards: [first, end], hostname? })`: the shard of this
   * Kubernetes StatefulSet pod, the ordinal at the end of `hostname` (default: the `HOSTNAME`
   * environment variable, then the host's name); every rule is the core's.
   */
  function shardFromOrdinal(options) {
    const o = options ?? {}
    if (!(o.layout instanceof Layout) || !Array.isArray(o.shards) || o.shards.length !== 2) {
      throw makeError('INVALID_ARGUMENT', { argument: 'shardFromOrdinal', reason: 'takes { layout: Layout, shards: [first, end], hostname?: string }' }, TypeError)
    }
    if (!backend.shardFromOrdinal) {
      throw makeError('UNSUPPORTED', { reason: "a pod's hostname is read by the Node addon: in the WebAssembly build, pass the shard to Generator" })
    }
    return backend.shardFromOrdinal(o.layout[LAYOUT], o.shards[0], o.shards[1], o.hostname)
  }

  /**
   * A `JSON.stringify` replacer that writes every bigint as its decimal string
   * (`JSON.stringify` throws on bigints, and numbers above 2^53 lose digits in `JSON.parse`):
   * `JSON.stringify({ id: 4036916263258161152n }, jsonReplacer)` is `'{"id":"4036916263258161152"}'`.
   */
  function jsonReplacer(key, value) {
    return typeof value === 'bigint' ? value.toString() : value
  }

  /**
   * A `JSON.parse` reviver that turns the values of the named keys into bigint IDs of
   * `layout`, checked: a decimal string, a safe integer, or an array of them. An unsafe number
   * has already been rounded by the parser and is refused (`RangeError`, code `INVALID_ID`),
   * like any value that is not an ID of the layout.
   * `JSON.parse(body, jsonReviver(['id', 'noteIds'], Layout.INSTAGRAM))`. The layout is
   * required: an ID is checked against the layout that made it, never a guessed one.
   */
  function jsonReviver(keys, layout) {
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string') || !(layout instanceof Layout)) {
      throw makeError('INVALID_ARGUMENT', { argument: 'jsonReviver', reason: 'takes (keys: string[], layout: Layout): the layout of the IDs, e.g. Layout.INSTAGRAM' }, TypeError)
    }
    const names = new Set(keys)
    return function reviver(key, value) {
      if (!names.has(key) || value === null) return value
      return Array.isArray(value) ? value.map((v) => (v === null ? null : layout.validateId(v))) : layout.validateId(value)
    }
  }

  const PUBLIC = Symbol('shardid.publicIds')
  // The environment variable (and Django setting) keys are read from by default.
  const KEYS_VARIABLE = 'SHARDID_PUBLIC_ID_KEYS'
  const formatOf = (options, name) => {
    const o = options ?? {}
    if (typeof o !== 'object') {
      const call = name === 'PublicIds' ? "new PublicIds({ key, prefix: 'note', encoding?, layout? })" : `${name}(…, { prefix: 'note', encoding?, layout? })`
      throw makeError('INVALID_ARGUMENT', { argument: name, reason: `takes { prefix, encoding?, layout? }: ${call}` }, TypeError)
    }
    const layout = o.layout ?? Layout.INSTAGRAM
    if (!(layout instanceof Layout)) {
      throw makeError('INVALID_ARGUMENT', { argument: `${name}.layout`, reason: 'must be a shardid Layout (e.g. Layout.INSTAGRAM)' }, TypeError)
    }
    return { prefix: o.prefix, encoding: o.encoding ?? 'base32', layout }
  }

  /**
   * Public IDs: an ID as short, opaque text for URLs and APIs (`note_0923h26jsg2d8g`) and
   * back, under a secret key (a `Uint8Array` of 16 bytes), the same text as every other
   * language. The key is not kept (only what the core derives from it) and never shown.
   * `new PublicIds({ key, prefix, encoding = 'base32', keyVersion = 0, oldKeys = {}, layout })`.
   */
  class PublicIds {
    constructor(options) {
      let o = options ?? {}
      if (o !== null && typeof o === 'object' && typeof o[PUBLIC] === 'number') {
        this[PUBLIC] = o[PUBLIC] // internal: made by fromKeys
      } else {
        const { prefix, encoding, layout } = formatOf(o, 'PublicIds')
        let index = backend.publicNew(o.key, o.keyVersion ?? 0, prefix, encoding, layout[LAYOUT])
        o = { ...o, encoding }
        const old = o.oldKeys ?? {}
        if (typeof old !== 'object') {
          throw makeError('INVALID_ARGUMENT', { argument: 'oldKeys', reason: 'must be an object or a Map of key versions to keys' }, TypeError)
        }
        for (const [version, key] of old instanceof Map ? old : Object.entries(old)) {
          index = backend.publicWithOldKey(index, typeof version === 'string' && /^[0-9]+$/.test(version) ? Number(version) : version, key)
        }
        this[PUBLIC] = index
      }
      // The core took the prefix and encoding as given: they are the ones made.
      this.prefix = o.prefix
      this.encoding = o.encoding
      this.layout = o.layout ?? Layout.INSTAGRAM
      Object.assign(this, backend.publicInfo(this[PUBLIC]))
      Object.freeze(this)
    }

    /**
     * From keys written as text, as an environment variable holds them: 32 hex digits (one
     * key, version 0), or `VERSION:HEX` pairs separated by commas, the highest current.
     * `fromKeys(keys, { prefix, encoding?, layout? })`, or `fromKeys(keys, 'note')` for the
     * prefix alone (as Python's `from_keys(keys, 'note')`).
     */
    static fromKeys(keys, options) {
      // `fromKeys(keys, 'note')`: the prefix alone, as Python's `from_keys(keys, 'note')`.
      const { prefix, encoding, layout } = formatOf(typeof options === 'string' ? { prefix: options } : options, 'PublicIds.fromKeys')
      return new PublicIds({ [PUBLIC]: backend.publicFromKeys(keys, prefix, encoding, layout[LAYOUT]), prefix, encoding, layout })
    }

    /** From the keys in the environment variable `variable` (default `SHARDID_PUBLIC_ID_KEYS`). */
    static fromEnv(options) {
      const o = options ?? {}
      const variable = o.variable ?? KEYS_VARIABLE
      const env = typeof process === 'object' && process !== null ? process.env : undefined
      const keys = env?.[variable]
      if (typeof keys !== 'string') {
        throw makeError('INVALID_ARGUMENT', { argument: variable, reason: 'is not set: public IDs need keys (32 hex digits, or VERSION:HEX pairs)' }, RangeError)
      }
      return PublicIds.fromKeys(keys, o)
    }

    /** The public ID of `id` (a bigint, a decimal string or a safe integer). */
    encode(id) {
      return backend.publicEncode(this[PUBLIC], id)
    }

    /** The ID (a bigint) a public ID stands for; a `RangeError` with the reason's `code`
     *  (`PUBLIC_ID_PREFIX`, ..., `PUBLIC_ID_MISMATCH`) for any text that is not one. */
    decode(text) {
      return backend.publicDecode(this[PUBLIC], text)
    }

    /** The shape of `text` checked without decoding; the key version it names. */
    check(text) {
      return backend.publicCheck(text, this.prefix, this.encoding)
    }

    /**
     * A `JSON.stringify` replacer: the values of `keys` (IDs: bigints, decimal strings, safe
     * integers, or arrays of them) as their public IDs; every other bigint as its decimal string.
     */
    jsonReplacer(keys) {
      const names = keyNames(keys, 'jsonReplacer')
      const encode = (v) => (v === null ? null : this.encode(v))
      return (key, value) => {
        if (names.has(key) && value !== null && value !== undefined) {
          return Array.isArray(value) ? value.map(encode) : encode(value)
        }
        return typeof value === 'bigint' ? value.toString() : value
      }
    }

    /** A `JSON.parse` reviver: the values of `keys` (public IDs, or arrays of them) as bigint
     *  IDs; anything else under those keys throws the decode's error. */
    jsonReviver(keys) {
      const names = keyNames(keys, 'jsonReviver')
      const decode = (v) => (v === null ? null : this.decode(v))
      return (key, value) => {
        if (!names.has(key) || value === null) return value
        return Array.isArray(value) ? value.map(decode) : decode(value)
      }
    }
  }

  function keyNames(keys, name) {
    if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')) {
      throw makeError('INVALID_ARGUMENT', { argument: name, reason: 'takes (keys: string[])' }, TypeError)
    }
    return new Set(keys)
  }

  /** The shape of a public ID checked without its key (what a browser can do: it cannot
   *  decode without the key); the key version it names. */
  function checkPublicId(text, options) {
    const o = options ?? {}
    return backend.publicCheck(text, o.prefix, o.encoding ?? 'base32')
  }

  /** The ID a UUID made by `Layout#toUuid` holds; without `layout`, the layout its marker
   *  names (a preset's; a custom layout's UUID needs its layout). */
  function fromUuid(uuid, layout) {
    if (layout !== undefined && layout !== null && !(layout instanceof Layout)) {
      throw makeError('INVALID_ARGUMENT', { argument: 'layout', reason: 'is not a shardid Layout' }, TypeError)
    }
    return backend.fromUuid(layout ? layout[LAYOUT] : null, uuid)
  }

  return {
    Layout,
    Generator,
    PublicIds,
    checkPublicId,
    fromUuid,
    LeasedGenerator,
    lease,
    shardFromOrdinal,
    jsonReplacer,
    jsonReviver,
    Parts,
    ShardIdError,
    nowMs: backend.nowMs,
    version: backend.version(),
    /** Whether Generators in different worker threads share state (the Node addon) or not
     *  (WebAssembly: each instance has its own memory, so give each worker its own shard). */
    threadsShareState: backend.threadsShareState(),
  }
}

module.exports = { makeApi }
