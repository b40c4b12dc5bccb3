'use strict'
// The backend of api.js over the WebAssembly module's raw exports (src/raw.rs): the same
// functions, arguments and errors as the Node addon's. The module takes only checked numbers,
// so the argument checks live here (the Node addon makes them in Rust, src/args.rs there):
// a `bigint` must lie in 0..2^64 (WebAssembly would wrap it), a `number` must be a safe
// integer, an ID string plain decimal digits, a time a valid `Date`. Results and error
// fields come back through a typed-array view of the module's memory.

const { makeError, kindOf } = require('./errors.js')
const { PROBLEMS, ARGS, ORDERS, PRESETS, UNKNOWN, LIMITS, PUBLIC } = require('./core.generated.js')

const MAX = 2n ** 64n
// src/raw.rs: a text batch whose ID at OUT[0] did not parse.
const UNPARSED_ID = 0xffffffff

// An argument refused before the module could take it, by the core's rules (ARGS, generated
// from core/src/args.rs): the argument's error code for the problem, the fields `argument` and
// `reason` (and an ID's value as `id`), the message `<argument> <reason>`; the same errors as
// the Node addon's src/args.rs.
function refuse(kind, problem, name, value, reason = ARGS[kind].reasons[problem]) {
  const err = new (problem === 'wrongType' ? TypeError : RangeError)(`${name} ${reason}`)
  err.code = ARGS[kind].codes[problem]
  err.argument = name
  err.reason = reason
  if (kind === 'id') err.id = value
  return err
}

const TYPE_NAMES = { undefined: 'undefined', object: 'an object', boolean: 'a boolean', number: 'a number',
  string: 'a string', symbol: 'a symbol', function: 'a function', bigint: 'a bigint' }

// A 64-bit argument: a bigint in 0..2^64, a non-negative safe integer, for IDs plain decimal
// text (parsed by the core, `parseId`), for times a valid Date. `kind` names a rule of ARGS.
function toU64(raw, value, name, kind) {
  const rule = ARGS[kind]
  switch (typeof value) {
    case 'bigint':
      if (value >= 0n && value < MAX) return value
      throw refuse(kind, value < 0n ? 'negative' : 'tooLarge', name, value)
    case 'number':
      if (Number.isSafeInteger(value) && value >= 0) return BigInt(value)
      throw refuse(kind, PROBLEMS[raw.numberProblem(value)], name, value)
    case 'string':
      if (rule.text) return raw.parseId(value, name)
      break
    case 'object':
      if (rule.date && value instanceof Date) {
        const ms = value.getTime()
        if (Number.isNaN(ms)) throw refuse(kind, 'invalidDate', name, value)
        if (ms < 0) throw refuse(kind, 'negative', name, value)
        return BigInt(ms)
      }
      break
  }
  const expected = rule.text ? 'a bigint, a decimal string or a safe integer'
    : rule.date ? 'a Date, or Unix milliseconds as a number or bigint' : 'a bigint or a safe integer'
  const got = value === null ? 'null' : TYPE_NAMES[typeof value]
  throw refuse(kind, 'wrongType', name, value, `must be ${expected}, not ${got}`)
}

// An ID's two 32-bit halves, for decoding single IDs in JS (see `decode` below): a `bigint`
// written into `halves` is read back as two numbers from `words`, with no BigInt operator
// (each allocates). `HI` and `LO` are the halves' places on this platform's byte order.
const halves = new BigUint64Array(1)
const words = new Uint32Array(halves.buffer)
const LO = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1
const HI = 1 - LO

// The halves of an ID written as 1 to 19 ASCII digits, into `words`; false for any other
// string. Every such string is an ID by the core's rule (core/src/decimal.rs: 1 to 20 digits
// below 2^64, leading zeros allowed) and is below 10^19 < 2^64; 20 digits, which can be above
// 2^64, and anything else go to the core's parser, which also says what is wrong. The value
// is h * 10^9 + l, put together from parts that a number holds exactly.
function decimalHalves(s) {
  const n = s.length
  if (n === 0 || n > 19) return false
  const split = n > 9 ? n - 9 : 0
  let h = 0
  let l = 0
  let i = 0
  for (; i < split; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return false
    h = h * 10 + d
  }
  for (; i < n; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return false
    l = l * 10 + d
  }
  // h < 10^10 = (hh * 2^16 + hl): a = hl * 10^9 + l < 2^47, b = hh * 10^9 < 2^48 (weight 2^16).
  const hh = Math.floor(h / 65536)
  const a = (h - hh * 65536) * 1e9 + l
  const b = hh * 1e9
  const aHigh = Math.floor(a / 4294967296)
  const bHigh = Math.floor(b / 65536)
  let lo = (b - bHigh * 65536) * 65536 + (a - aHigh * 4294967296)
  let carry = 0
  if (lo >= 4294967296) {
    lo -= 4294967296
    carry = 1
  }
  words[HI] = bHigh + aHigh + carry
  words[LO] = lo
  return true
}

// A layout's decode plan, from the core's numbers (layoutInfo: epoch, unit, and where each
// field lies, shardid::js::field_positions): what `decode` applies to an ID's halves. A field
// `width` bits from bit `shift` is `(((hi >>> hs) & hm) >>> 0) * hmul + (((lo >>> ls) & lm) >>> 0)`:
// its lowest `lw` bits come from `lo`, the rest from `hi`. Every value stays below 2^53.
// Masks as int32 bit patterns (`| 0`), which V8 keeps as small integers for `&`.
const lowBits = (n) => (n >= 32 ? -1 : 2 ** n - 1) | 0
function fieldPlan(shift, width) {
  const lw = shift >= 32 ? 0 : Math.min(width, 32 - shift)
  return { hs: Math.max(0, shift + lw - 32), hm: lowBits(width - lw), hmul: 2 ** lw, ls: shift < 32 ? shift : 0, lm: lowBits(lw) }
}
function makePlan(o) {
  const n = (i) => Number(o[i])
  const idBits = n(17)
  return { hiLimit: idBits > 32 ? 2 ** (idBits - 32) : 1, loLimit: 2 ** Math.min(idBits, 32), unitMs: n(1), epochMs: n(0),
    time: fieldPlan(n(11), n(12)), shard: fieldPlan(n(13), n(14)), sequence: fieldPlan(n(15), n(16)) }
}
const fieldOf = (f, hi, lo) => (((hi >>> f.hs) & f.hm) >>> 0) * f.hmul + (((lo >>> f.ls) & f.lm) >>> 0)

function makeBackend(raw, memory) {
  // IDs given as text are parsed by the core: their bytes go into the module's scratch text
  // (at most 20 ASCII digits, so no encoder is needed, and anything longer or non-ASCII is
  // refused without a copy).
  let text = null
  const textView = () => {
    if (text === null || text.buffer !== memory().buffer) text = new Uint8Array(memory().buffer, raw.scratchText(24), 24)
    return text
  }
  const rules = {
    numberProblem: raw.numberProblem,
    parseId(value, name) {
      const n = value.length
      if (n <= 20) {
        const bytes = textView()
        let ascii = true
        for (let i = 0; i < n; i++) {
          const c = value.charCodeAt(i)
          ascii &&= c < 128
          bytes[i] = c
        }
        if (ascii && raw.parseId(n) === 0) return view()[0]
      }
      throw refuse('id', 'notDecimal', name, value)
    },
  }
  const u64 = (value, name, kind) => toU64(rules, value, name, kind)
  let out = null
  const view = () => {
    // A view dies when the memory grows: make a new one then.
    // 18 words: OUT_WORDS in src/raw.rs (layoutInfo's).
    if (out === null || out.buffer !== memory().buffer) out = new BigUint64Array(memory().buffer, raw.outPtr(), 18)
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
    const v = u64(n, 'n', 'other')
    // The core's bound (core/src/args.rs): more would exhaust the module's memory, which
    // WebAssembly reports as an 'unreachable' trap with no code.
    if (v > BigInt(LIMITS.maxBatchIds)) throw makeError('INVALID_ARGUMENT', { argument: 'n', reason: LIMITS.tooManyIds })
    return Number(v)
  }
  // Batch decoding writes the IDs straight into the module's scratch memory and copies the
  // three columns it leaves there (src/raw.rs, WORDS and TEXT) out into arrays of their own.
  const columns = (status, at, n, text) => {
    if (status === UNPARSED_ID) throw refuse('id', 'notDecimal', 'ids[i]', text.split(',')[Number(view()[0])])
    check(status)
    const column = (i) => new Float64Array(memory().buffer, at + 8 * i * n, n).slice()
    return [column(0), column(1), column(2)]
  }
  let decodeBuffer = null
  // The fields of the ID in `halves` by `plan`, into the decode buffer.
  const decodeHalves = (plan) => {
    const hi = words[HI]
    const lo = words[LO]
    decodeBuffer[0] = fieldOf(plan.time, hi, lo) * plan.unitMs + plan.epochMs
    decodeBuffer[1] = fieldOf(plan.shard, hi, lo)
    decodeBuffer[2] = fieldOf(plan.sequence, hi, lo)
  }
  // Decode plans by layout handle, made by layoutInfo (every Layout calls it once).
  const plans = []
  const encoder = new TextEncoder()
  const unsupported = () => {
    throw makeError('UNSUPPORTED', { reason: 'leases need lock files: use the Node addon (the WebAssembly module has no file system)' })
  }
  // Public IDs: only the module built with them (shardid-wasm/public) has their exports.
  const publicIds = typeof raw.publicNew === 'function'
  const noPublicIds = () => {
    throw makeError('UNSUPPORTED', { reason: "public IDs are in the module shardid-wasm/public (import from 'shardid-wasm/public'), not in this smaller one" })
  }
  const typeError = (argument, reason) => makeError('INVALID_ARGUMENT', { argument, reason }, TypeError)
  // Text into the module's scratch text from byte `at` on: each UTF-16 unit that is ASCII as
  // itself, any other as 0xFF (no alphabet, prefix or key holds it, so the core refuses it
  // where it would refuse the character), cut after `max` units. The same bytes the Node
  // addon gives the core (its src/public.rs).
  const putText = (value, name, at, max = Infinity) => {
    if (typeof value !== 'string') throw typeError(name, 'must be a string')
    const n = Math.min(value.length, max)
    // The scratch first: growing it may grow the memory, which detaches older views.
    const ptr = raw.scratchText(at + n)
    const bytes = new Uint8Array(memory().buffer, ptr, at + n)
    for (let i = 0; i < n; i++) {
      const c = value.charCodeAt(i)
      bytes[at + i] = c < 128 ? c : 0xff
    }
    return n
  }
  const putKey = (key, name) => {
    if (!(key instanceof Uint8Array)) throw typeError(name, 'must be a Uint8Array (16 random bytes), not a string or another type')
    const ptr = raw.scratchText(key.length)
    new Uint8Array(memory().buffer, ptr, key.length).set(key)
    return key.length
  }
  const encodingIndex = (name) => {
    if (typeof name !== 'string') throw typeError('encoding', 'must be a string')
    const index = PUBLIC.encodings.indexOf(name)
    if (index < 0) throw makeError('INVALID_ARGUMENT', { argument: 'encoding', reason: PUBLIC.unknownEncoding })
    return index
  }
  // A key version: above 2^32 it is still "must be 0 to 31", which the core says.
  const version = (v, name) => {
    const n = u64(v, name, 'other')
    return n > 0xffffffffn ? 0xffffffff : Number(n)
  }
  // One more unit than any public ID: a longer text is too long.
  const TEXT_UNITS = PUBLIC.maxTextLength + 2
  const textDecoder = new TextDecoder()
  const readText = (n) => {
    const ptr = raw.scratchText(n)
    return textDecoder.decode(new Uint8Array(memory().buffer, ptr, n))
  }
  const publicBackend = publicIds ? {
    publicNew(key, keyVersion, prefix, encoding, layout) {
      const keyLength = putKey(key, 'key')
      const v = version(keyVersion, 'keyVersion')
      const enc = encodingIndex(encoding)
      const prefixLength = putText(prefix, 'prefix', keyLength)
      return Number(check(raw.publicNew(layout, keyLength, v, prefixLength, enc))[0])
    },
    publicWithOldKey(index, keyVersion, key) {
      const v = version(keyVersion, 'oldKeys')
      return Number(check(raw.publicWithOldKey(index, v, putKey(key, 'oldKeys')))[0])
    },
    publicFromKeys(keys, prefix, encoding, layout) {
      if (typeof keys !== 'string') throw typeError('keys', 'must be a string')
      if (typeof prefix !== 'string') throw typeError('prefix', 'must be a string')
      const enc = encodingIndex(encoding)
      const keysLength = putText(keys, 'keys', 0)
      const prefixLength = putText(prefix, 'prefix', keysLength)
      return Number(check(raw.publicFromKeys(layout, keysLength, prefixLength, enc))[0])
    },
    publicInfo(index) {
      const o = check(raw.publicInfo(index))
      const count = Number(o[1])
      const keyVersions = Array.from(o.subarray(4, 4 + count), Number)
      return { keyVersion: Number(o[0]), keyVersions, textLength: Number(o[2]), pattern: readText(Number(o[3])) }
    },
    publicEncode(index, id) {
      const n = Number(check(raw.publicEncode(index, u64(id, 'id', 'id')))[0])
      return readText(n)
    },
    publicDecode(index, text) {
      return check(raw.publicDecode(index, putText(text, 'text', 0, TEXT_UNITS)))[0]
    },
    publicCheck(text, prefix, encoding) {
      if (typeof text !== 'string') throw typeError('text', 'must be a string')
      if (typeof prefix !== 'string') throw typeError('prefix', 'must be a string')
      const enc = encodingIndex(encoding)
      const prefixLength = putText(prefix, 'prefix', 0)
      const textLength = putText(text, 'text', prefixLength, TEXT_UNITS)
      return Number(check(raw.publicCheck(prefixLength, enc, textLength))[0])
    },
  } : {
    publicNew: noPublicIds,
    publicWithOldKey: noPublicIds,
    publicFromKeys: noPublicIds,
    publicInfo: noPublicIds,
    publicEncode: noPublicIds,
    publicDecode: noPublicIds,
    publicCheck: noPublicIds,
  }
  // The UUIDv7 bridge: with public IDs, in shardid-wasm/public (the default module's budget).
  const noUuid = () => {
    throw makeError('UNSUPPORTED', { reason: "the UUIDv7 bridge is in the module shardid-wasm/public (import from 'shardid-wasm/public'), not in this smaller one" })
  }
  const uuidBytes = (layout, id) => {
    check(raw.uuidTo(layout, u64(id, 'id', 'id')))
    return new Uint8Array(memory().buffer, raw.scratchText(16), 16).slice()
  }
  const uuidBackend = typeof raw.uuidTo === 'function' ? {
    toUuid(layout, id) {
      // The core's text of the bytes (uuid::format): lowercase hexadecimal, 8-4-4-4-12.
      const hex = Array.from(uuidBytes(layout, id), (b) => b.toString(16).padStart(2, '0')).join('')
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
    },
    toUuidBytes: uuidBytes,
    fromUuid(layout, uuid) {
      const index = layout === null ? 0xffffffff : layout
      // Text as the addon gives it to the core; one unit longer than a UUID is already too long.
      if (typeof uuid === 'string') return check(raw.uuidFrom(index, 1, putText(uuid, 'uuid', 0, 37)))[0]
      if (!(uuid instanceof Uint8Array)) throw typeError('uuid', 'must be a string or a Uint8Array of 16 bytes')
      if (uuid.length !== 16) throw makeError('INVALID_ARGUMENT', { argument: 'uuid', reason: 'must be 16 bytes' }, RangeError)
      new Uint8Array(memory().buffer, raw.scratchText(16), 16).set(uuid)
      return check(raw.uuidFrom(index, 0, 16))[0]
    },
  } : { toUuid: noUuid, toUuidBytes: noUuid, fromUuid: noUuid }
  return {
    ...publicBackend,
    ...uuidBackend,
    leaseNew: unsupported,
    leaseShard: unsupported,
    leaseNextId: unsupported,
    leaseNextIdString: unsupported,
    leaseNextIdAt: unsupported,
    leaseNextIds: unsupported,
    leaseClose: unsupported,
    threadsShareState: () => false,
    version: () => raw.version(),
    nowMs: () => raw.nowMs(),
    setDecodeBuffer(buffer) { decodeBuffer = buffer },
    // Preset and order names are looked up here, in the core's tables, and refused with the
    // core's reason: no strings cross into the module.
    layoutPreset(name) {
      const index = PRESETS.indexOf(name)
      if (index < 0) throw makeError('INVALID_LAYOUT', { reason: UNKNOWN.preset })
      return Number(check(raw.layoutPreset(index))[0])
    },
    layoutNew(epochMs, unitMs, timeBits, shardBits, sequenceBits, order, signed) {
      const width = (v, name) => { const b = u64(v, name, 'layoutField'); return b > 255n ? 255 : Number(b) }
      const orderIndex = ORDERS.indexOf(order)
      if (orderIndex < 0) throw makeError('INVALID_LAYOUT', { reason: UNKNOWN.order })
      return Number(check(raw.layoutNew(u64(epochMs, 'epochMs', 'layoutField'), u64(unitMs, 'unitMs', 'layoutField'),
        width(timeBits, 'timeBits'), width(shardBits, 'shardBits'), width(sequenceBits, 'sequenceBits'),
        orderIndex, Boolean(signed)))[0])
    },
    layoutInfo(layout) {
      const o = check(raw.layoutInfo(layout))
      plans[layout] = makePlan(o)
      return { epochMs: Number(o[0]), unitMs: Number(o[1]), timeBits: Number(o[2]), shardBits: Number(o[3]),
        sequenceBits: Number(o[4]), order: ORDERS[Number(o[5])], signed: o[6] === 1n,
        maxShard: Number(o[7]), maxSequence: Number(o[8]), maxId: o[9], expiresAtMs: Number(o[10]) }
    },
    // A single ID is decoded here, by the core's plan for the layout: a call into the module
    // costs more than the decode (issue 20). A bigint in 0..2^64 or 1 to 19 digits go straight
    // to their halves; any other argument (a safe-integer number, 20 digits, or one to refuse)
    // through the argument checks and the core's parser. An ID above the layout's largest is
    // refused by the core (`validate_id`, which the core's decode begins with).
    decode(layout, id) {
      const plan = plans[layout]
      if (typeof id === 'bigint' ? id >= 0n && id < MAX && ((halves[0] = id), true)
        : typeof id === 'string' && decimalHalves(id)) {
        if (words[HI] < plan.hiLimit && words[LO] < plan.loLimit) return decodeHalves(plan)
      }
      // Any other argument (a safe-integer number, 20 digits, or one to refuse): the argument
      // checks and the core's parser; an ID above the layout's largest: the core's INVALID_ID.
      halves[0] = check(raw.idOp(layout, 0, u64(id, 'id', 'id')))[0]
      // Unreachable: the core found the ID valid, and the plan's limits are the core's.
      if (!(words[HI] < plan.hiLimit && words[LO] < plan.loLimit)) throw makeError('PANIC')
      decodeHalves(plan)
    },
    decodeMany(layout, ids) {
      let typed
      if (ids instanceof BigUint64Array) typed = ids
      else if (Array.isArray(ids)) typed = BigUint64Array.from(ids, (id) => u64(id, 'ids[i]', 'id'))
      else throw makeError('INVALID_ARGUMENT', { argument: 'ids', reason: 'must be an array or a BigUint64Array' }, TypeError)
      const n = typed.length
      const at = raw.scratchWords(4 * n)
      new BigUint64Array(memory().buffer, at + 24 * n, n).set(typed)
      return columns(raw.decodeColumns(layout, n), at, n)
    },
    decodeManyText(layout, text, n) {
      // Decimal IDs are ASCII: a string that needs more bytes than characters is not one.
      const words = raw.scratchWords(3 * n), bytes = raw.scratchText(text.length)
      const { read, written } = encoder.encodeInto(text, new Uint8Array(memory().buffer, bytes, text.length))
      if (read !== text.length) throw refuse('id', 'notDecimal', 'ids[i]', text.split(',').find((id) => /[^\x00-\x7f]/.test(id)))
      return columns(raw.decodeColumnsText(layout, n, written), words, n, text)
    },
    validateId: (layout, id) => check(raw.idOp(layout, 0, u64(id, 'id', 'id')))[0],
    // The count of digits (checked by api.js) rides in the op's second byte.
    scatterDecimal: (layout, id, digits) => check(raw.idOp(layout, 1 | (digits << 8), u64(id, 'id', 'id')))[0],
    gatherDecimal: (layout, id, digits) => check(raw.idOp(layout, 2 | (digits << 8), u64(id, 'id', 'id')))[0],
    scatterBits: (layout, id) => check(raw.idOp(layout, 3, u64(id, 'id', 'id')))[0],
    gatherBits: (layout, id) => check(raw.idOp(layout, 4, u64(id, 'id', 'id')))[0],
    compose: (layout, t, shard, sequence) => check(raw.compose(layout, u64(t, 'timestamp', 'timestamp'),
      u64(shard, 'shard', 'shard'), u64(sequence, 'sequence', 'sequence')))[0],
    minIdAt: (layout, t) => check(raw.idAt(layout, u64(t, 'timestamp', 'timestamp'), false))[0],
    maxIdAt: (layout, t) => check(raw.idAt(layout, u64(t, 'timestamp', 'timestamp'), true))[0],
    shardForKey: (layout, key, n) => Number(check(raw.shardForKey(layout, u64(key, 'key', 'other'),
      u64(n, 'logicalShards', 'logicalShards')))[0]),
    generatorNew(layout, shard, tolerance, borrow) {
      const opt = (v, name, d) => (v === undefined || v === null ? d : u64(v, name, 'other'))
      return Number(check(raw.generatorNew(layout, u64(shard, 'shard', 'shard'),
        opt(tolerance, 'backwardsToleranceMs', raw.defaultBackwardsToleranceMs()), opt(borrow, 'maxBorrowUnits', 0n)))[0])
    },
    generatorStats() {
      // The counters would cost the module ~450 bytes gzipped: over its 8 KB budget.
      throw makeError('UNSUPPORTED', { reason: 'stats() is not in the WebAssembly module (its size budget): use the Node addon' })
    },
    nextId: (g) => check(raw.nextId(g))[0],
    nextIdString: (g) => String(check(raw.nextId(g))[0]),
    nextIdAt: (g, now) => check(raw.nextIdAt(g, u64(now, 'now', 'timestamp')))[0],
    nextIds(g, n) {
      const ids = raw.nextIds(g, count(n))
      batchStatus()
      return ids
    },
    nextIdsAt(g, now, n) {
      const ids = raw.nextIdsAt(g, u64(now, 'now', 'timestamp'), count(n))
      batchStatus()
      return ids
    },
  }
}

/**
 * shardid-wasm and shardid-wasm/public are two WebAssembly modules, each with its own table of
 * layouts and its own generator states: a page importing both has two, and a Generator of each
 * on the same (layout, shard) handed out the same IDs. So every Generator of a JavaScript realm
 * (a page, a worker, a Node process) is made by the first of the modules to load there, which
 * then holds every generator state of the realm as one module alone does; the core's rules are
 * unchanged, only which module runs them. A Layout of the other module (or the Node addon) is
 * taken as this module's Layout of the same spec (`toJSON()`, checked again by the core) by
 * Generator, PublicIds and fromUuid.
 */
const FIRST = Symbol.for('shardid-wasm.generators')

function acrossModules(api) {
  const ownOf = (Layout) => (layout) =>
    layout !== null && typeof layout === 'object' && !(layout instanceof Layout) &&
    typeof layout.toJSON === 'function' && typeof layout.decode === 'function'
      ? new Layout(layout.toJSON())
      : layout
  const formatOf = (own) => (o) => (o !== null && typeof o === 'object' && 'layout' in o ? { ...o, layout: own(o.layout) } : o)
  const own = ownOf(api.Layout)
  const ownFormat = formatOf(own)
  globalThis[FIRST] ??= { Generator: api.Generator, Layout: api.Layout }
  const first = globalThis[FIRST]
  const firstFormat = formatOf(ownOf(first.Layout))
  const Generator = new Proxy(api.Generator, {
    construct: (target, [options], newTarget) =>
      first.Generator === target
        ? Reflect.construct(target, [ownFormat(options)], newTarget)
        : new first.Generator(firstFormat(options)),
  })
  const PublicIds = new Proxy(api.PublicIds, {
    construct: (target, [options], newTarget) => Reflect.construct(target, [ownFormat(options)], newTarget),
    get(target, name, receiver) {
      if (name === 'fromKeys') return (keys, options) => target.fromKeys(keys, ownFormat(options))
      if (name === 'fromEnv') return (options) => target.fromEnv(ownFormat(options))
      return Reflect.get(target, name, receiver)
    },
  })
  return { ...api, Generator, PublicIds, fromUuid: (uuid, layout) => api.fromUuid(uuid, own(layout)) }
}

module.exports = { makeBackend, acrossModules }
