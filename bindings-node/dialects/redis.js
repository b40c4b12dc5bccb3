'use strict'
// Dense IDs on Redis 7 or Valkey (issue 57), over ioredis (an optional peer dependency): the
// executor of the core's steps (native.RedisSegments, shardid::redis::RedisSegments: the Lua
// scripts, the keys and the reading of their replies). segments.js's denseIds() and createTag()
// run a `redis://`, `rediss://` or `unix://` URL through this file's dialect object with the
// same Link and execute() as every SQL database: it opens a connection, reads its server's
// run_id, sends EVALSHA (EVAL on NOSCRIPT) and feeds the reply back. Nothing about the numbers
// is decided here.
//
// ioredis reconnects by itself and queues and resends commands across a reconnection by
// default: a take sent again on a server that restarted meanwhile, with the identity read
// before, would find its own run_id on the tag and skip nothing past the writes the restart
// lost. Here a connection never reconnects nor queues: an error ends it, the next use opens
// another, and the core reads the identity again before its next operation
// (RedisSegments::failed).
//
// The shard lease on Redis (`require('shardid/redis').lease(...)`, ../redis.js) opens its
// connection through this dialect object too.

const crypto = require('node:crypto')
const native = require('../native.generated.js')
const { makeError, unreachableError } = require('../errors.js')
const { holdingLoop } = require('../idle.js')
const { execute, Link } = require('./index.js')

// The prefix of the keys when none is given (`shardid:tag:{orders}`): the Rust client's.
const DEFAULT_PREFIX = 'shardid'
// Connecting and each reply: a server that does not answer is unreachable, not a wait without end.
const TIMEOUT_MS = 5000

const isRedisUrl = (url) => typeof url === 'string' && native.isRedisUrl(url)

function ioredis() {
  try {
    return require('ioredis')
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err
    throw makeError('UNSUPPORTED', { reason: 'Redis URLs need ioredis: npm install ioredis' })
  }
}

/** INVALID_ARGUMENT now for a Redis URL this client cannot use (not at the first fetch). */
function check(url, argument) {
  const invalid = (reason) => makeError('INVALID_ARGUMENT', { argument, reason }, RangeError)
  if (url.startsWith('redis+sentinel://')) return void native.redisSentinelUrl(url, argument)
  try {
    const parsed = new URL(url)
    if (parsed.protocol === 'unix:' ? !parsed.pathname : !parsed.hostname) throw new Error('no host')
  } catch {
    throw invalid('is not a Redis URL: redis://[user:password@]host[:port][/db], rediss://... or unix:///path/to/socket')
  }
}

/** ioredis's options for `url`: one connection that never reconnects, queues or resends. */
function options(url) {
  const o = {
    lazyConnect: true,
    retryStrategy: () => null,
    reconnectOnError: () => false,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    connectTimeout: TIMEOUT_MS,
    commandTimeout: TIMEOUT_MS,
  }
  // The primary the sentinels name, asked at each connection: one opened again after a
  // failover reaches the promoted replica.
  if (url.startsWith('redis+sentinel://')) {
    const { sentinels, name, db, username, password } = native.redisSentinelUrl(url, 'url')
    return { ...o, sentinels, name, db, username: username ?? undefined, password: password ?? undefined, sentinelRetryStrategy: () => null }
  }
  if (url.startsWith('unix://')) {
    const parsed = new URL(url)
    return { ...o, path: decodeURIComponent(parsed.pathname), db: Number(parsed.searchParams.get('db') ?? 0) }
  }
  return o
}

/** One connection and the run_id of the server it reached; its socket held only while busy. */
class Conn {
  constructor(client, runId) {
    this.client = client
    this.runId = runId
  }

  ref() { this.client.stream?.ref?.() }
  unref() { this.client.stream?.unref?.() }
}

const sha = (script) => crypto.createHash('sha1').update(script).digest('hex')

/** A reply's cells, nested arrays flattened, integers and bulk strings as strings. */
function flatten(reply, out = []) {
  if (Array.isArray(reply)) for (const item of reply) flatten(item, out)
  else out.push(reply == null ? null : Buffer.isBuffer(reply) ? reply.toString() : String(reply))
  return out
}

// The dialect object of Redis, in the shape dialects/index.js's Link and segments.js ask of a
// SQL database's.
const dialect = {
  name: 'redis',
  check,
  schema: (given) => given ?? DEFAULT_PREFIX,
  opener(url) {
    return async () => {
      const Redis = ioredis()
      const o = options(url)
      const client = o.path || o.sentinels ? new Redis(o) : new Redis(url, o)
      client.on('error', () => {}) // see watch()
      try {
        await client.connect()
        const runId = native.redisRunId(await client.info('server'))
        if (runId === null) throw makeError('DATABASE', { reason: "the server's INFO names no run_id: not a Redis server" })
        return new Conn(client, runId)
      } catch (err) {
        client.disconnect()
        throw err
      }
    }
  },
  // A connection ended by the server (or broken) is an event ioredis emits; never reopened
  // by ioredis (see the top of this file).
  watch(conn, onLost) {
    conn.client.on('error', onLost)
    conn.client.on('end', onLost)
  },
  // Every error gives the connection up: the next use opens another and reads its server's
  // identity.
  lost: () => true,
  code: () => null,
  /** Whether `err` says the server cannot be reached (refused, timed out, gone, or not a
   *  primary: a replica refuses writes, a loading server answers LOADING). */
  unreachable(err) {
    if (err?.code === 'DATABASE_UNREACHABLE') return false // already one
    const message = String(err?.message ?? '')
    return Boolean(err?.syscall || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOENT'].includes(err?.code) ||
      /^(READONLY|LOADING|MASTERDOWN)/.test(message) || /Connection is closed|Command timed out|Stream isn't writeable|connect ETIMEDOUT/.test(message))
  },
  /** EVALSHA of `script` with `values` (the number of keys, the keys, the arguments), EVAL on
   *  NOSCRIPT: the reply's cells. */
  async row(conn, script, values) {
    try {
      return flatten(await conn.client.evalsha(sha(script), ...values))
    } catch (err) {
      if (!String(err?.message).startsWith('NOSCRIPT')) throw err
      return flatten(await conn.client.eval(script, ...values))
    }
  },
  destroy(conn) { conn.client.disconnect() },
  async end(conn) {
    try {
      await conn.client.quit()
    } catch {
      conn.client.disconnect()
    }
  },
}

/**
 * The dialect object and ready step of one allocator's connection: a script is sent only on
 * the connection whose server's run_id the core was given. The Link opens a new connection by
 * itself when it saw the last one end (the server restarted, or was replaced by a promoted
 * replica), and a step the core made with the run_id read before, sent there, would find that
 * identity on the tag and skip nothing past the writes the restart lost; it fails instead,
 * and the core reads the new server's run_id before its next operation.
 */
function identified() {
  let conn = null
  const own = {
    ...dialect,
    async row(on, script, values) {
      if (on !== conn) {
        throw Object.assign(new Error('the connection to the Redis server was opened again since its run_id was read: read it again'), { staleIdentity: true })
      }
      return dialect.row(on, script, values)
    },
  }
  return { dialect: own, ready: (on) => { conn = on; return on.runId } }
}

/** The Redis parts of `denseIds()`: its links (one server: no ticket servers on Redis yet),
 *  the core's steps and the connection's ready step; `null` unless `targets` are Redis URLs. */
function segmentsOf(targets, schema, argument) {
  if (!targets.some(isRedisUrl)) return null
  if (targets.length !== 1) {
    throw makeError('INVALID_ARGUMENT', { argument, reason: 'must be one Redis URL: ticket servers across several Redis servers are not supported yet' }, RangeError)
  }
  check(targets[0], argument)
  const prefix = dialect.schema(schema)
  const protocol = new native.RedisSegments(prefix) // INVALID_ARGUMENT for a bad prefix
  const { dialect: own, ready } = identified()
  const links = [new Link(own, own.opener(targets[0]))]
  return { dialect: own, schema: prefix, links, protocol, ready }
}

/** The error of a refusal or of the driver's error, as segments.js's takeError says it. */
function failure({ step, error }, tag) {
  if (step.driver) return dialect.unreachable(error) ? unreachableError(error) : error
  // The core's words name the Rust and Python call; Node's is createTagFrom.
  if (step.kind === 'INVALID_ARGUMENT') return makeError('INVALID_ARGUMENT', { argument: 'url', reason: step.reason.replaceAll('create_tag_from', 'createTagFrom') }, RangeError)
  const err = new Error(`tag ${tag}: ${step.reason}: ${step.sqlstate}`)
  err.code = step.sqlstate
  return err
}

async function create(url, tag, prefix, first, explicit) {
  check(url, 'url')
  const protocol = new native.RedisSegments(dialect.schema(prefix))
  const { dialect: own, ready } = identified()
  const link = new Link(own, own.opener(url))
  try {
    const done = await execute(protocol, (p) => p.createTag(tag, String(first), explicit), [link], ready)
    if (done.step.step !== 'created') throw failure(done, tag)
    return BigInt(done.step.next)
  } finally {
    await holdingLoop(() => link.end())
  }
}

/** `createTag(url, tag, { schema })` on a Redis URL: from 1, only on a server that holds
 *  shardid's data (else INVALID_ARGUMENT naming createTagFrom). */
async function createTag(url, tag, { schema } = {}) {
  await create(url, tag, schema, 1n, false)
}

/**
 * `await createTagFrom(url, tag, first, { schema = 'shardid' } = {})`: creates the tag of dense
 * IDs `tag` from `first` (a bigint or number, 1 to 2^53 - 1) on the Redis server at `url` (past
 * the server's fence after a step back), also on a server that holds no shardid data: 1 on a
 * new server, past the last number handed out on one that lost its data. A tag already there
 * is left as it is. Resolves to where its numbers continue (a bigint).
 */
async function createTagFrom(url, tag, first, { schema } = {}) {
  if (!isRedisUrl(url)) {
    throw makeError('INVALID_ARGUMENT', { argument: 'url', reason: 'must be a Redis URL (redis://, rediss://, unix:// or redis+sentinel://): createTagFrom is Redis\'s' }, RangeError)
  }
  const n = typeof first === 'number' && Number.isSafeInteger(first) ? BigInt(first) : first
  if (typeof n !== 'bigint' || n < 1n || n >= 2n ** 53n) {
    throw makeError('INVALID_ARGUMENT', { argument: 'first', reason: 'must be an integer from 1 to 2^53 - 1' }, RangeError)
  }
  return create(url, tag, schema, n, true)
}

module.exports = { isRedisUrl, check, segmentsOf, createTag, createTagFrom, dialect, DEFAULT_PREFIX }
