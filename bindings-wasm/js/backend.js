'use strict'
// The backend of api.js over the WebAssembly module's raw exports (src/raw.rs): the same
// functions, arguments and errors as the Node addon's. The module takes only checked numbers,
// so the argument checks live here (the Node addon makes them in Rust, src/args.rs there):
// a `bigint` must lie in 0..2^64 (WebAssembly would wrap it), a `number` must be a safe
// integer, an ID string plain decimal digits, a time a valid `Date`. Results and error
// fields come back through a typed-array view of the module's memory.

const { makeError, kindOf } = require('./errors.js')

const MAX = 2n ** 64n
const PRESETS = { INSTAGRAM: 0, TWITTER: 1, DISCORD: 2, SONYFLAKE: 3 }
// src/raw.rs: a text batch whose ID at OUT[0] did not parse.
const UNPARSED_ID = 0xffffffff
// The error code of a value out of range, per kind of argument (times: before / after).
const RANGE_CODE = { id: 'INVALID_ID', shard: 'SHARD_OUT_OF_RANGE', sequence: 'SEQUENCE_OUT_OF_RANGE',
  count: 'INVALID_SHARD_COUNT', layout: 'INVALID_LAYOUT', other: 'INVALID_ARGUMENT' }

// An argument the module never saw, refused before the core could be asked: INVALID_ARGUMENT
// with its fields, or the code of what the argument is, with the message `<name> <reason>`
// (and for an ID, the value given as `id`).
function argError(Class, code, name, reason, value) {
  if (code === 'INVALID_ARGUMENT') return makeError(code, { argument: name, reason }, Class)
  const err = new Class(`${name} ${reason}`)
  err.code = code
  if (code === 'INVALID_ID') err.id = value
  return err
}

function toU64(value, name, kind) {
  const code = (negative) => kind === 'time' ? (negative ? 'TIMESTAMP_BEFORE_EPOCH' : 'TIMESTAMP_PAST_EXPIRY') : RANGE_CODE[kind]
  switch (typeof value) {
    case 'bigint':
      if (value >= 0n && value < MAX) return value
      throw argError(RangeError, code(value < 0n), name, value < 0n ? 'is negative' : 'does not fit in 64 bits', value)
    case 'number':
      if (Number.isSafeInteger(value) && value >= 0) return BigInt(value)
      throw argError(RangeError, code(value < 0), name, Number.isSafeInteger(value) || value < 0
        ? 'is negative' : 'is not a safe integer: pass a bigint or a decimal string', value)
    case 'string':
      if (kind === 'id') {
        if (/^[0-9]{1,20}$/.test(value)) {
          const v = BigInt(value)
          if (v < MAX) return v
        }
        throw argError(RangeError, 'INVALID_ID', name, 'must be a decimal integer string in 0..2^64', value)
      }
      break
    case 'object':
      if (kind === 'time' && value instanceof Date) {
        const ms = value.getTime()
        if (Number.isNaN(ms)) throw argError(RangeError, 'INVALID_ARGUMENT', name, 'is an invalid Date')
        if (ms < 0) throw argError(RangeError, 'TIMESTAMP_BEFORE_EPOCH', name, 'is before 1970')
        return BigInt(ms)
      }
      break
  }
  const expected = kind === 'id' ? 'a bigint, a decimal string or a safe integer'
    : kind === 'time' ? 'a Date, or Unix milliseconds as a number or bigint' : 'a bigint or a safe integer'
  throw argError(TypeError, kind === 'time' ? 'INVALID_ARGUMENT' : code(false), name, `must be ${expected}, not ${typeof value}`, value)
}

function makeBackend(raw, memory) {
  let out = null
  const view = () => {
    // A view dies when the memory grows: make a new one then.
    if (out === null || out.buffer !== memory().buffer) out = new BigUint64Array(memory().buffer, raw.outPtr(), 12)
    return out
  }
  // The error of a status: the core's kind, its number fields from OUT (as bigints), its
  // text fields from the module (src/raw.rs, `fail`).
  const check = (status) => {
    if (status === 0) return view()
    const kind = kindOf(status)
    const o = view()
    const fields = {}
    kind.fields.forEach((name, i) => { fields[name] = kind.text[i] ? raw.errorText(i) : o[i] })
    throw makeError(kind.code, fields)
  }
  const batchStatus = () => check(Number(view()[11]))
  const count = (n) => {
    const v = toU64(n, 'n', 'other')
    if (v > 0xffffffffn) throw makeError('INVALID_ARGUMENT', { argument: 'n', reason: 'is larger than 2^32 - 1' })
    return Number(v)
  }
  // Batch decoding writes the IDs straight into the module's scratch memory and copies the
  // three columns it leaves there (src/raw.rs, WORDS and TEXT) out into arrays of their own.
  const columns = (status, at, n, text) => {
    if (status === UNPARSED_ID) throw makeError('INVALID_ID', { id: text.split(',')[Number(view()[0])] })
    check(status)
    const column = (i) => new Float64Array(memory().buffer, at + 8 * i * n, n).slice()
    return [column(0), column(1), column(2)]
  }
  let decodeBuffer = null
  const encoder = new TextEncoder()
  const unsupported = () => {
    throw makeError('UNSUPPORTED', { reason: 'leases need lock files: use the Node addon (the WebAssembly module has no file system)' })
  }
  return {
    leaseNew: unsupported,
    leaseShard: unsupported,
    leaseNextId: unsupported,
    leaseNextIdString: unsupported,
    leaseNextIdAt: unsupported,
    leaseNextIds: unsupported,
    threadsShareState: () => false,
    version: () => raw.version(),
    nowMs: () => raw.nowMs(),
    setDecodeBuffer(buffer) { decodeBuffer = buffer },
    layoutPreset: (name) => Number(check(raw.layoutPreset(PRESETS[name]))[0]),
    layoutNew(epochMs, unitMs, timeBits, shardBits, sequenceBits, order, signed) {
      const width = (v, name) => { const b = toU64(v, name, 'layout'); return b > 255n ? 255 : Number(b) }
      if (order !== 'time_shard_sequence' && order !== 'time_sequence_shard') {
        throw makeError('INVALID_LAYOUT', { reason: `order must be "time_shard_sequence" or "time_sequence_shard", not ${JSON.stringify(order)}` })
      }
      return Number(check(raw.layoutNew(toU64(epochMs, 'epochMs', 'layout'), toU64(unitMs, 'unitMs', 'layout'),
        width(timeBits, 'timeBits'), width(shardBits, 'shardBits'), width(sequenceBits, 'sequenceBits'),
        order === 'time_sequence_shard', Boolean(signed)))[0])
    },
    layoutInfo(layout) {
      const o = check(raw.layoutInfo(layout))
      return { epochMs: Number(o[0]), unitMs: Number(o[1]), timeBits: Number(o[2]), shardBits: Number(o[3]),
        sequenceBits: Number(o[4]), order: o[5] ? 'time_sequence_shard' : 'time_shard_sequence', signed: o[6] === 1n,
        maxShard: Number(o[7]), maxSequence: Number(o[8]), maxId: o[9], expiresAtMs: Number(o[10]) }
    },
    decode(layout, id) {
      const o = check(raw.decode(layout, toU64(id, 'id', 'id')))
      decodeBuffer[0] = Number(o[0]); decodeBuffer[1] = Number(o[1]); decodeBuffer[2] = Number(o[2])
    },
    decodeMany(layout, ids) {
      let typed
      if (ids instanceof BigUint64Array) typed = ids
      else if (Array.isArray(ids)) typed = BigUint64Array.from(ids, (id) => toU64(id, 'ids[i]', 'id'))
      else throw argError(TypeError, 'INVALID_ID', 'ids', 'must be an array or a BigUint64Array', ids)
      const n = typed.length
      const at = raw.scratchWords(4 * n)
      new BigUint64Array(memory().buffer, at + 24 * n, n).set(typed)
      return columns(raw.decodeColumns(layout, n), at, n)
    },
    decodeManyText(layout, text, n) {
      // Decimal IDs are ASCII: a string that needs more bytes than characters is not one.
      const words = raw.scratchWords(3 * n), bytes = raw.scratchText(text.length)
      const { read, written } = encoder.encodeInto(text, new Uint8Array(memory().buffer, bytes, text.length))
      if (read !== text.length) throw makeError('INVALID_ID', { id: text.split(',').find((id) => /[^\x00-\x7f]/.test(id)) })
      return columns(raw.decodeColumnsText(layout, n, written), words, n, text)
    },
    validateId: (layout, id) => check(raw.idOp(layout, 0, toU64(id, 'id', 'id')))[0],
    scatterDecimal: (layout, id) => check(raw.idOp(layout, 1, toU64(id, 'id', 'id')))[0],
    gatherDecimal: (layout, id) => check(raw.idOp(layout, 2, toU64(id, 'id', 'id')))[0],
    scatterBits: (layout, id) => check(raw.idOp(layout, 3, toU64(id, 'id', 'id')))[0],
    gatherBits: (layout, id) => check(raw.idOp(layout, 4, toU64(id, 'id', 'id')))[0],
    compose: (layout, t, shard, sequence) => check(raw.compose(layout, toU64(t, 'timestamp', 'time'),
      toU64(shard, 'shard', 'shard'), toU64(sequence, 'sequence', 'sequence')))[0],
    minIdAt: (layout, t) => check(raw.idAt(layout, toU64(t, 'timestamp', 'time'), false))[0],
    maxIdAt: (layout, t) => check(raw.idAt(layout, toU64(t, 'timestamp', 'time'), true))[0],
    shardForKey: (layout, key, n) => Number(check(raw.shardForKey(layout, toU64(key, 'key', 'other'),
      toU64(n, 'logicalShards', 'count')))[0]),
    generatorNew(layout, shard, tolerance, borrow) {
      const opt = (v, name, d) => (v === undefined || v === null ? d : toU64(v, name, 'other'))
      return Number(check(raw.generatorNew(layout, toU64(shard, 'shard', 'shard'),
        opt(tolerance, 'backwardsToleranceMs', raw.defaultBackwardsToleranceMs()), opt(borrow, 'maxBorrowUnits', 0n)))[0])
    },
    nextId: (g) => check(raw.nextId(g))[0],
    nextIdString: (g) => String(check(raw.nextId(g))[0]),
    nextIdAt: (g, now) => check(raw.nextIdAt(g, toU64(now, 'now', 'time')))[0],
    nextIds(g, n) {
      const ids = raw.nextIds(g, count(n))
      batchStatus()
      return ids
    },
    nextIdsAt(g, now, n) {
      const ids = raw.nextIdsAt(g, toU64(now, 'now', 'time'), count(n))
      batchStatus()
      return ids
    },
  }
}

module.exports = { makeBackend }
