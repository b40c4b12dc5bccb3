'use strict'
// shardid/segments: dense IDs from segments (号段) of PostgreSQL, with `pg` (an optional peer
// dependency), of MySQL and MariaDB (a `mysql://` URL), with `mysql2`, or of a SQLite file (a
// `sqlite:///` URL), with `better-sqlite3` or `node:sqlite`: one driver over the URL's dialect
// (dialects/). The allocator is the core's (shardid::segment, through the addon):
// the hot path is synchronous and never touches the database; fetches are asynchronous, one at
// a time, on a connection of the allocator's own. The statements are the core's too.

const native = require('./native.generated.js')
const { makeError, unreachableError, closedError, withCause, describe } = require('./errors.js')
const { holdingLoop } = require('./idle.js')
const { dialectOf, dialectOfAll, creationError, exact, execute, Link } = require('./dialects/index.js')
const { SQLSTATES, STATS } = require('./core.generated.js')
const { isRedisUrl, segmentsOf: redisSegmentsOf, createTag: redisCreateTag, createTagFrom } = require('./dialects/redis.js')

const SECRET = Symbol('shardid.segments')
// The addon writes the size of a fetch that became due here (-1: none): see src/segment.rs.
// The array the addon's instance kept (src/instance.rs): the first one registered with it.
const signal = native.setSegmentSignal(new Float64Array(3).fill(-1))

const unavailable = (tag, reason) => makeError('SEGMENT_UNAVAILABLE', { tag, reason })

// The take, the give-back, the rotation across ticket servers, the MySQL family's resend of a
// take rolled back whole and a serial period's first take are the core's steps
// (native.SegmentProtocol), run by dialects/index.js's `execute` the same for every database.

/** The error of a take that failed (`failed`): the driver's, or the core's refusal with its
 *  SQLSTATE as the code (as a database's own error would carry it). */
function takeError({ step, error }, link, tag) {
  if (step.driver) return link.dialect.unreachable(error) ? unreachableError(error) : error
  const err = new Error(`no segment of tag ${tag}: ${step.reason}: ${step.sqlstate}`)
  err.code = step.sqlstate
  return err
}

// -- the unused rest given back when the process ends ----------------------------------------
//
// close() gives the unused rest of a segment back, so the next process continues at the next
// number; most services never call it, and each exit skipped up to two segments (issue 59).
// Every open allocator is kept here, weakly (a WeakRef: one the application drops is still
// freed), and closed, within EXIT_BUDGET_MS in all:
// - on 'beforeExit', when the event loop has nothing left to do (the allocators' idle
//   connections do not hold it: idle.js); the closes hold it until they are done. Not on
//   process.exit() or an uncaught exception, which end the process at once: call close() first;
// - on SIGTERM and SIGINT, only while no other listener of the signal is there when it comes
//   (as signal-exit, used by many CLIs, decides): an application with a handler of its own
//   shuts down as it chooses (its close() calls, or an event loop left to empty: 'beforeExit').
//   Alone, the listener gives back, then leaves and sends the signal again, so the process
//   ends as that signal ends it (a parent sees the same status); a second signal meanwhile
//   ends it at once. Only in the main thread (signals are the main thread's).
// pg-pool and prom-client install nothing; pino (on-exit-leak-free) keeps weak references and
// acts on 'exit' and 'beforeExit' alone: a give-back needs the event loop, which 'exit' no
// longer runs.
const EXIT_BUDGET_MS = 2000
const openAllocators = new Set()
let exitHooked = false
let exiting = null

/** Keeps `allocator` (weakly) to close when the process ends; returns what `close()` drops. */
function closeOnExit(allocator) {
  for (const ref of openAllocators) if (ref.deref() === undefined) openAllocators.delete(ref)
  const ref = new WeakRef(allocator)
  openAllocators.add(ref)
  if (!exitHooked) {
    exitHooked = true
    process.on('beforeExit', onBeforeExit)
    if (require('node:worker_threads').isMainThread) for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, onSignal)
  }
  return ref
}

/** Closes every allocator kept, at most EXIT_BUDGET_MS (the timer holds the loop that long). */
function closeAll() {
  exiting ??= (async () => {
    const all = [...openAllocators].map((ref) => ref.deref()).filter((a) => a !== undefined)
    openAllocators.clear()
    let timer
    const budget = new Promise((resolve) => { timer = setTimeout(resolve, EXIT_BUDGET_MS) })
    try {
      await Promise.race([Promise.allSettled(all.map((a) => a.close())), budget])
    } finally {
      clearTimeout(timer)
      exiting = null
    }
  })()
  return exiting
}

function onBeforeExit() {
  if (openAllocators.size > 0) closeAll()
}

function onSignal(sig) {
  if (process.listenerCount(sig) > 1) return // the application's own handler decides
  const end = () => {
    process.removeListener('SIGINT', onSignal)
    process.removeListener('SIGTERM', onSignal)
    process.kill(process.pid, sig)
  }
  if (exiting !== null) return end() // a second signal while giving back
  closeAll().then(end, end)
}

// What dense IDs and serials share: an allocator of the core fed with segments of a tag by a
// dialect's statements (dialects/*.js), and how much of them it used.
class Segmented {
  constructor(secret, { tag, protocol, index, waitMs }) {
    if (secret !== SECRET) {
      const [name, maker] = new.target === Serials ? ['Serials', 'serials()'] : ['DenseIds', 'denseIds()']
      throw makeError('INVALID_ARGUMENT', { argument: name, reason: `is made by ${maker} from shardid/segments` }, TypeError)
    }
    this.tag = tag
    this.waitMs = waitMs
    /** Segments fetched. */
    this.fetches = 0
    this._protocol = protocol
    this._index = index
    this._closed = false
    this._error = null
    this._inFlight = null
  }

  /** Numbers taken from the database and neither handed out nor given back: the holes this
   *  allocator made, as the core counts them (`stats().skipped`, and the exporters'). */
  get skipped() {
    return this.stats().skipped
  }
}

class DenseIds extends Segmented {
  constructor(secret, { links, ready, ...rest } = {}) {
    super(secret, rest)
    // One connection per ticket server, opened at its first fetch and again after its session
    // was lost; which one a take uses is the protocol's.
    this._links = links
    this._ready = ready
  }

  // Starts the fetch the addon signalled, if any: one at a time (the core makes sure).
  _due() {
    const size = signal[0]
    if (size < 0) return
    signal[0] = -1
    this._inFlight = this._fetch(size).finally(() => { this._inFlight = null })
  }

  // Takes one segment: the core's protocol says from which server, and how.
  async _fetch(size) {
    const done = await execute(this._protocol, (p) => p.take(this.tag, String(size)), this._links, this._ready)
    if (done.step.step === 'segment') {
      const [first, count, stride] = done.step.segment
      native.segmentFill(this._index, first, count, stride)
      this.fetches += 1
      this._error = null
      return
    }
    native.segmentFetchFailed(this._index)
    // A server that cannot be reached is DATABASE_UNREACHABLE (the driver's error as its
    // cause); the database's own errors are kept as they are.
    this._error = takeError(done, this._links[0], this.tag)
  }

  _check() {
    if (this._closed) throw closedError(`DenseIds of tag ${this.tag}`)
  }

  // Why no segment is there: what the last fetch met (a database that cannot be reached, or
  // its error), or a fetch still under way after `waitMs`.
  _failure(waited = true) {
    const error = this._error
    if (this._closed) return closedError(`DenseIds of tag ${this.tag}`)
    if (error && error.code === SQLSTATES.unknownTag) return makeError('UNKNOWN_TAG', { tag: this.tag, create: 'createTag' })
    if (error && ['NOT_MYSQL', 'UNSUPPORTED'].includes(error.code)) return error // not a server to wait for
    let reason
    if ((this._inFlight || !error) && !waited) reason = 'both segments are used up and the next one is still being fetched (the Async methods wait for it)'
    else if (this._inFlight || !error) reason = `no segment arrived within ${this.waitMs} ms`
    else if (error.code === 'DATABASE_UNREACHABLE') reason = error.message
    else reason = `the last fetch failed: ${describe(error)}`
    const err = unavailable(this.tag, reason)
    return error ? withCause(err, error) : err
  }

  /**
   * The next ID (a bigint), synchronously, from memory. Throws `SEGMENT_UNAVAILABLE` (retry,
   * or use `nextIdAsync`) when both segments are used up and the fetch has not arrived.
   */
  nextId() {
    this._check()
    const id = native.segmentNextId(this._index)
    this._due()
    if (id == null) throw this._failure(false)
    return id
  }

  /** The next ID, waiting (at most `waitMs`) for a segment when both are used up. */
  async nextIdAsync() {
    this._check()
    const deadline = Date.now() + this.waitMs
    for (;;) {
      const id = native.segmentNextId(this._index)
      this._due()
      if (id != null) return id
      if (this._fatal() || Date.now() >= deadline) throw this._failure()
      await (this._inFlight ?? new Promise((resolve) => setTimeout(resolve, 20)))
      this._check()
    }
  }

  // Why `denseIds()` got no first segment: a database that cannot be reached is said as such
  // (no allocator was made, so nothing is "unavailable"); otherwise as `_failure()`.
  _startFailure() {
    if (this._error?.code === 'DATABASE_UNREACHABLE') return this._error
    return this._failure()
  }

  // An error that waiting cannot mend.
  _fatal() {
    return Boolean(this._error && [SQLSTATES.unknownTag, 'NOT_MYSQL', 'UNSUPPORTED'].includes(this._error.code))
  }

  /** `n` IDs (a BigUint64Array), synchronously; throws `SEGMENT_UNAVAILABLE` as `nextId` does. */
  nextIds(n) {
    this._check()
    const ids = native.segmentNextIds(this._index, n)
    this._due()
    if (ids.length < Number(n)) throw this._failure(false) // the IDs taken are lost: a hole, never a duplicate
    return ids
  }

  /** `n` IDs, waiting for segments as `nextIdAsync` does. */
  async nextIdsAsync(n) {
    this._check()
    const want = Number(n)
    const out = new BigUint64Array(want)
    let have = 0
    let deadline = Date.now() + this.waitMs
    while (have < want) {
      const ids = native.segmentNextIds(this._index, want - have)
      this._due()
      out.set(ids, have)
      have += ids.length
      if (ids.length > 0) { deadline = Date.now() + this.waitMs; continue }
      if (this._fatal() || Date.now() >= deadline) throw this._failure()
      await (this._inFlight ?? new Promise((resolve) => setTimeout(resolve, 20)))
      this._check()
    }
    return out
  }

  /** Gives the unused rest back (a restart then continues at the next number) and ends the
   *  connection; later calls throw `CLOSED`. Closing twice is fine. */
  close() {
    if (this._closed) return Promise.resolve()
    this._closed = true
    openAllocators.delete(this._exitRef)
    native.segmentUnregister(this._index) // exporters no longer report it (as a lease closed)
    return holdingLoop(() => this._close())
  }

  /** What this allocator did: `fetches`, `failedFetches`, their latency (`fetchLatencyLastMs`,
   *  `fetchLatencyMaxMs`, a histogram `fetchLatencyLe1ms` ... `fetchLatencyLeInf` and
   *  `fetchLatencySumMs`), `emptyWaits`, `skipped` and `remaining`, as bigints named by the
   *  core's table. */
  stats() {
    const values = native.segmentStats(this._index)
    const out = {}
    STATS.segments.forEach((name, i) => { out[name] = values[i] })
    return out
  }

  async _close() {
    if (this._inFlight) await this._inFlight
    const unused = native.segmentUnused(this._index)
    try {
      if (unused !== null) {
        // A server that is down keeps the rest: a hole, counted in `skipped`.
        let returned = false
        try {
          const giveBack = (p) => p.giveBack(this.tag, unused.first, unused.end)
          returned = (await execute(this._protocol, giveBack, this._links, this._ready)).step.returned === true
        } finally {
          native.segmentSettle(this._index, returned)
        }
      }
    } finally {
      await Promise.all(this._links.map((link) => link.end()))
    }
  }
}
if (Symbol.asyncDispose) DenseIds.prototype[Symbol.asyncDispose] = DenseIds.prototype.close

/**
 * `await denseIds({ connectionString, tag, schema = 'seg', minSize = 1000, maxSize = 1000000,
 * targetMs = 60000, waitMs = 5000 })`: dense IDs of `tag`, from segments of the PostgreSQL
 * server (`client` may replace `connectionString`: an unconnected `pg.Client` it then owns).
 * `connectionString` may be a list of ticket servers (each with the DDL of its index): segments
 * are then taken from whichever answers, in turn (IDs interleave across servers).
 * Resolves once the first segment is in memory; rejects with `UNKNOWN_TAG` for a tag never
 * created. A `redis://`, `rediss://` or `unix://` URL takes segments from a Redis server
 * with `ioredis` (an optional peer dependency; `schema` is then the keys' prefix, `shardid` by
 * default): see `createTagFrom` for its first tag.
 */
async function denseIds(options) {
  const o = options ?? {}
  checkTag(o.tag)
  const targets = o.client ? [o.client] : Array.isArray(o.connectionString) ? o.connectionString : [o.connectionString]
  // A Redis URL: the executor of the core's Redis steps over ioredis (redis.js), same allocator.
  const redis = o.client ? null : redisSegmentsOf(targets, o.schema, 'connectionString')
  // INVALID_ARGUMENT for a schema name that is not a plain identifier, before the URL's checks.
  if (!redis) native.segmentSql(o.schema ?? 'seg')
  const dialect = redis?.dialect ?? dialectOfAll(targets, 'connectionString')
  const schema = redis?.schema ?? dialect.schema(o.schema, 'seg')
  const links = redis?.links ?? targets.map((target) => new Link(dialect, dialect.opener(target, 'shardid/segments')))
  // A new allocator of the core, reported to exporters (`shardid_segment_*{schema,tag}`) until
  // `close()` (or a start that failed) unregisters it: the addon's table never frees it.
  const index = native.segmentNew(o.minSize ?? 1000, o.maxSize ?? 1000000, o.targetMs ?? 60000, schema, o.tag)
  const protocol = redis?.protocol ?? new native.SegmentProtocol(dialect.name, schema, links.length)
  const ready = redis?.ready ?? dialect.segments(schema).ready
  const ids = new DenseIds(SECRET, { links, ready, tag: o.tag, protocol, index, waitMs: o.waitMs ?? 5000 })
  // The first segment, so that the first synchronous nextId() has one. A server that is down
  // at start-up is only its share: it is retried at its turn.
  native.segmentPrime(index)
  ids._due()
  await ids._inFlight
  if (ids.fetches === 0) {
    native.segmentUnregister(index)
    await holdingLoop(() => Promise.all(links.map((link) => link.end())))
    throw ids._startFailure()
  }
  ids._exitRef = closeOnExit(ids)
  return ids
}

/** INVALID_ARGUMENT for a tag of dense IDs the database would refuse, before connecting. */
function checkTag(tag) {
  if (typeof tag !== 'string' || tag.length === 0 || Buffer.byteLength(tag) > 200) {
    throw makeError('INVALID_ARGUMENT', { argument: 'tag', reason: 'must be 1 to 200 bytes of text' }, TypeError)
  }
}

/**
 * `await createTag(url, tag, { schema = 'seg' } = {})`: creates the tag of dense IDs `tag`
 * (from 1) on the server at `url` (a PostgreSQL connection string or a `mysql://` URL; a list:
 * on each ticket server) if it is not there; a tag already there is left as it is. Rejects
 * with `INVALID_ARGUMENT` for a bad tag, URL or schema, `DATABASE` naming the DDL to run when
 * the schema has none, `DATABASE_UNREACHABLE` when a server cannot be reached.
 */
async function createTag(url, tag, { schema: given } = {}) {
  checkTag(tag)
  if (isRedisUrl(url)) return redisCreateTag(url, tag, { schema: given }) // from 1 on a server with shardid's data only
  native.segmentSql(given ?? 'seg') // INVALID_ARGUMENT for a schema name that is not a plain identifier
  const targets = Array.isArray(url) ? url : [url]
  if (targets.length === 0 || !targets.every((t) => typeof t === 'string')) {
    throw makeError('INVALID_ARGUMENT', { argument: 'url', reason: 'must be a connection string or a non-empty list of them' }, TypeError)
  }
  const dialect = dialectOfAll(targets, 'url')
  const schema = dialect.schema(given, 'seg')
  const protocol = dialect.segments(schema)
  for (const target of targets) {
    const link = new Link(dialect, dialect.opener(target, 'shardid/segments'))
    try {
      await link.use((conn) => protocol.createTag(conn, tag))
    } catch (err) {
      throw creationError(dialect, err, schema, '--segments')
    } finally {
      await holdingLoop(() => link.end())
    }
  }
}

/**
 * The PostgreSQL DDL of dense IDs from segments in `schema` (default `seg`): the table of tags
 * and the functions, to run once (a migration, or `psql -1 -f -`). The same text as
 * `python -m shardid.sql --segments`; `{ servers, index }` renders ticket server `index` of
 * `servers`, which hands out only the numbers congruent to `index`.
 */
function ddl(schema = 'seg', { servers = 1, index = 0 } = {}) {
  return native.segmentsDdl(schema, servers, index)
}

module.exports = { denseIds, DenseIds, createTag, createTagFrom, ddl }

// Business serial numbers (ORD-20261125-000123): the core's formats, and its allocator of
// periods (a tag per period, from the same segments), driven here with `pg`.

/**
 * `new SerialFormat('ORD-{yyyy}{MM}{dd}-{seq:6}', 'Asia/Shanghai')`: a serial format in an IANA
 * time zone, parsed and checked once (`INVALID_SERIAL_FORMAT`, `UNKNOWN_TIME_ZONE`).
 */
// The addon writes a parsed serial here (see src/serial.rs: serialParseInto): the array its
// instance kept, as the signal above.
const parsed = native.setSerialBuffer(new Float64Array(8))
const field = (v) => (v < 0 ? null : v)
const pad = (v, n) => String(v).padStart(n, '0')

class SerialFormat {
  constructor(format, zone) {
    if (typeof format !== 'string' || typeof zone !== 'string') {
      throw makeError('INVALID_ARGUMENT', { argument: 'format', reason: 'and zone must be strings' }, TypeError)
    }
    this._index = native.serialFormatNew(format, zone)
    const info = native.serialFormatInfo(this._index)
    /** The format as given. */
    this.format = info.format
    /** The format with its reset written out (`{seq:6:day}`). */
    this.canonical = info.canonical
    /** The zone's canonical name. */
    this.zone = info.zone
    /** `'never'`, `'year'`, `'month'` or `'day'`. */
    this.reset = info.reset
    /** The number's width in digits. */
    this.width = info.width
    /** The largest number a serial holds (a bigint). */
    this.maxNumber = BigInt(info.maxNumber)
    /** Every serial's length in characters. */
    this.length = info.length
    this._registration = info
    this._last = { key: -1, period: '' } // the last period's text (parse)
    Object.freeze(this)
  }

  /** The serial of `number` issued at `unixMs` (time as an argument: tests, replay). */
  render(number, unixMs) {
    return native.serialRender(this._index, number, unixMs)
  }

  /** A serial parsed back: `{ number (bigint), period, year, month, day, hour, week }`; throws `INVALID_SERIAL`. */
  parse(serial) {
    native.serialParseInto(this._index, serial)
    const hi = parsed[0]
    const year = parsed[2]
    const month = parsed[3]
    const day = parsed[4]
    const number = hi === 0 ? BigInt(parsed[1]) : (BigInt(hi) << 32n) | BigInt(parsed[1])
    // The period's text, made once per period (serials parsed together are mostly of one).
    const last = this._last
    const key = year * 10000 + month * 100 + day
    if (last.key !== key) {
      let period = ''
      if (this.reset !== 'never') period = pad(year, 4)
      if (this.reset === 'month' || this.reset === 'day') period += '-' + pad(month, 2)
      if (this.reset === 'day') period += '-' + pad(day, 2)
      last.key = key
      last.period = period
    }
    return { number, period: last.period, year: field(year), month: field(month), day: field(day), hour: field(parsed[5]), week: field(parsed[6]) }
  }

  /** The period `unixMs` falls in (`'2026-11-25'`, `'2026-11'`, `'2026'`, `''`). */
  periodAt(unixMs) {
    return native.serialPeriodAt(this._index, unixMs)
  }
}

/** The error of a database refusal of a serial tag, as its kind (the rest as it is). */
function serialDatabaseError(dialect, err, tag, zone, schema) {
  if (err.code === SQLSTATES.unknownTag) return makeError('UNKNOWN_TAG', { tag, create: 'createSerial' })
  if (dialect.missing(err) && dialect.name === 'mysql') {
    // The MySQL family keeps the registrations in a table of their own, after the segments'.
    return withCause(makeError('DATABASE', { reason: `${schema} has no shardid segments or serials tables: run their DDL once first (npx shardid sql --schema ${schema} --segments --dialect mysql, then serialsDdl('${schema}') of shardid/mysql) (${err.message})` }), err)
  }
  if (dialect.missing(err) || dialect.unreachable(err)) return creationError(dialect, err, schema, '--segments')
  if (err.code === SQLSTATES.serialMismatch) {
    return makeError('SERIAL_MISMATCH', { tag, reason: native.serialMismatchReason(err.message, tag) })
  }
  if (err.code === SQLSTATES.unknownTimeZone) return makeError('UNKNOWN_TIME_ZONE', { zone })
  return err
}

class Serials extends Segmented {
  constructor(secret, { link, format, ready, ...rest } = {}) {
    super(secret, rest)
    this._ready = ready
    /** The SerialFormat. */
    this.format = format
    // The connection, opened again after its session was lost (dialects/index.js).
    this._link = link
    this._givingBack = null
  }

  // Starts what the addon signalled: the fetch that became due, periods to give back.
  _due() {
    const size = signal[0]
    if (size >= 0) {
      const token = signal[1]
      signal[0] = -1
      this._inFlight = this._fetch(token, size).finally(() => { this._inFlight = null })
    }
    if (signal[2] > 0) {
      signal[2] = -1
      const rests = native.serialsRests(this._index)
      const previous = this._givingBack ?? Promise.resolve()
      this._givingBack = previous.then(() => this._giveBack(rests))
    }
  }

  async _fetch(token, size) {
    try {
      const period = native.serialsFetchPeriod(this._index, token)
      const done = await execute(this._protocol, (p) => p.takePeriod(this.tag, period, String(size)), [this._link], this._ready)
      if (done.step.step !== 'segment') throw takeError(done, this._link, this.tag)
      const [first, count, stride] = done.step.segment
      if (native.serialsFill(this._index, token, size, exact(first), exact(count), exact(stride))) {
        this.fetches += 1
        this._error = null
      } else {
        // The period was given up meanwhile: its segment goes back.
        const tag = native.serialPeriodTag(this.tag, period)
        await this._giveBack([{ tag, first: exact(first), end: String(BigInt(exact(first)) + BigInt(exact(count)) * BigInt(exact(stride))), count: exact(count), lost: '0' }])
      }
    } catch (err) {
      native.serialsFetchFailed(this._index, token, size)
      this._error = err
    }
  }

  async _giveBack(rests) {
    for (const rest of rests) {
      let returned = false
      try {
        if (rest.count !== '0') {
          // A server that is down keeps the rest: a hole.
          const giveBack = (p) => p.giveBack(rest.tag, rest.first, rest.end)
          returned = (await execute(this._protocol, giveBack, [this._link], this._ready)).step.returned === true
        }
      } finally {
        // The allocator counts the holes (`skipped`), the rest's `lost` and what was not returned.
        native.serialsSettle(this._index, rest.first, rest.end, rest.count, rest.lost, returned)
      }
    }
  }

  _failure() {
    if (this._closed) return closedError(`Serials of tag ${this.tag}`)
    if (this._error && this._error.code === SQLSTATES.unknownTag) return makeError('UNKNOWN_TAG', { tag: this.tag, create: 'createSerial' })
    if (this._error?.code === 'DATABASE_UNREACHABLE') return this._error
    const reason = `the database did not answer within ${this.waitMs} ms` + (this._error ? ` (${this._error.message})` : '')
    const err = unavailable(this.tag, reason)
    if (this._error) err.cause = this._error
    return err
  }

  _next(unixMs) {
    if (this._closed) throw this._failure()
    const serial = unixMs === undefined ? native.serialsNextNow(this._index) : native.serialsNext(this._index, unixMs)
    this._due()
    return serial
  }

  /**
   * The next serial, now, synchronously from memory. Throws `SEGMENT_UNAVAILABLE` when the
   * period has no segment yet (its first serial after midnight: its segment is being fetched)
   * or both are used up: retry, or use `nextSerialAsync`.
   */
  nextSerial() {
    const serial = this._next()
    if (serial === null) throw this._failure()
    return serial
  }

  /** The next serial issued at `unixMs` (a number: a scripted clock, a replay), synchronously. */
  nextSerialAt(unixMs) {
    const serial = this._next(unixMs)
    if (serial === null) throw this._failure()
    return serial
  }

  /** The next serial, waiting (at most `waitMs`) for the period's segment. */
  async nextSerialAsync(unixMs) {
    const deadline = Date.now() + this.waitMs
    for (;;) {
      const serial = this._next(unixMs)
      if (serial !== null) return serial
      if ((this._error && this._error.code === SQLSTATES.unknownTag) || Date.now() >= deadline) throw this._failure()
      await (this._inFlight ?? new Promise((resolve) => setTimeout(resolve, 5)))
    }
  }

  /** As `nextSerialAsync`, issued at `unixMs`. */
  nextSerialAtAsync(unixMs) {
    return this.nextSerialAsync(unixMs)
  }

  /** A serial of this format parsed back. */
  parse(serial) {
    return this.format.parse(serial)
  }

  /** The serial of `number` at `unixMs`, by this format (nothing is taken). */
  render(number, unixMs) {
    return this.format.render(number, unixMs)
  }

  /** What this allocator did over every period, as `DenseIds#stats()` names it (`fetches`,
   *  `failedFetches`, the fetch latency, `emptyWaits`, `skipped`: the holes it made,
   *  `remaining`: what is left of the current period's segment), as bigints. */
  stats() {
    const values = native.serialsStats(this._index)
    const out = {}
    STATS.segments.forEach((name, i) => { out[name] = values[i] })
    return out
  }

  /** Gives every period's rest back and ends the connection; later calls throw `CLOSED`. */
  async close() {
    if (this._closed) return
    this._closed = true
    openAllocators.delete(this._exitRef)
    if (this._inFlight) await this._inFlight
    if (this._givingBack) await this._givingBack
    try {
      await this._giveBack(native.serialsClose(this._index))
    } finally {
      await this._link.end()
    }
  }
}
if (Symbol.asyncDispose) Serials.prototype[Symbol.asyncDispose] = Serials.prototype.close

/** The dialect and serial statements for `o` (a URL, or a `pg.Client`): INVALID_ARGUMENT for
 *  a bad schema name. */
function serialsOn(o) {
  const dialect = dialectOf(o.client ?? o.connectionString, 'connectionString')
  const schema = dialect.schema(o.schema, 'seg')
  return [dialect, dialect.serials(schema), schema]
}

/**
 * `await serials({ connectionString, tag, format, zone, schema = 'seg', minSize = 1000,
 * maxSize = 1000000, targetMs = 60000, waitMs = 5000 })`: the serials of `tag`, registered
 * (`createSerial`) with `format` in `zone`; rejects with `UNKNOWN_TAG` for a tag never
 * registered and `SERIAL_MISMATCH` for one registered otherwise.
 */
async function serials(options) {
  const o = options ?? {}
  const format = new SerialFormat(o.format, o.zone)
  native.serialCheckTag(o.tag)
  const [dialect, protocol, schema] = serialsOn(o)
  const link = new Link(dialect, dialect.opener(o.client ?? o.connectionString, 'shardid/segments'))
  let registered
  try {
    registered = await link.use((conn) => protocol.info(conn, o.tag))
  } catch (err) {
    await link.end()
    throw serialDatabaseError(dialect, err, o.tag, format.zone, o.schema ?? 'seg')
  }
  const [canonical, zone, maxGap] = registered
  const reason = native.serialMismatch(format._index, canonical, zone)
  if (reason !== null) {
    await link.end()
    throw makeError('SERIAL_MISMATCH', { tag: o.tag, reason })
  }
  // A new allocator of the core, reported to exporters (`shardid_segment_*{schema,tag}`, its
  // serial tag) until `close()`.
  const index = native.serialsNew(format._index, schema, o.tag, o.minSize ?? 1000, o.maxSize ?? 1000000, o.targetMs ?? 60000, maxGap)
  const takes = new native.SegmentProtocol(dialect.name, schema, 1)
  const ready = dialect.segments(schema).ready
  const made = new Serials(SECRET, { link, tag: o.tag, format, index, protocol: takes, ready, waitMs: o.waitMs ?? 5000 })
  made._exitRef = closeOnExit(made)
  return made
}

/**
 * `await createSerial(url, tag, format, { zone, schema = 'seg', maxGap = 1 })` (or one object,
 * `createSerial({ connectionString | client, tag, format, zone, schema, maxGap })`): registers
 * the serial tag once (again alike: nothing) on the server at `url`; a `client` given is used
 * as it is (not ended). Rejects with `SERIAL_MISMATCH` for a tag registered otherwise, or a
 * format another tag prints; `INVALID_ARGUMENT` for a bad tag, URL or schema; `DATABASE`
 * naming the DDL to run when the schema has none (PostgreSQL, MySQL and MariaDB: the schema's
 * DDL is run once, as for segments; a SQLite file gets its tables at first use);
 * `DATABASE_UNREACHABLE` when the server cannot be reached.
 */
async function createSerial(url, tag, format, options) {
  const o = typeof url === 'string' ? { ...options, connectionString: url, tag, format } : url ?? {}
  const parsed = new SerialFormat(o.format, o.zone)
  native.serialCheckTag(o.tag)
  const maxGap = o.maxGap ?? 1
  if (!Number.isInteger(maxGap) || maxGap < 1 || maxGap > 2 ** 31 - 1) {
    throw makeError('INVALID_ARGUMENT', { argument: 'maxGap', reason: 'must be an integer from 1 to 2^31 - 1' })
  }
  const [dialect, protocol] = serialsOn(o)
  const r = parsed._registration
  // A client given is the caller's: used as it is, not ended.
  const link = o.client ? new Link(dialect, null, o.client) : new Link(dialect, dialect.opener(o.connectionString, 'shardid/segments'))
  try {
    await link.use((conn) => protocol.create(conn, [o.tag, parsed.format, parsed.zone, r.canonical, r.shape, r.pieces, r.width, r.reset, maxGap], parsed))
  } catch (err) {
    throw serialDatabaseError(dialect, err, o.tag, parsed.zone, o.schema ?? 'seg')
  } finally {
    await link.end()
  }
}

module.exports.SerialFormat = SerialFormat
module.exports.Serials = Serials
module.exports.serials = serials
module.exports.createSerial = createSerial
