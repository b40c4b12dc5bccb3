'use strict'
// The JavaScript face of the core's error kinds (core.generated.js, from core/src/kind.rs),
// shared by the Node addon and the WebAssembly module: one `ShardIdError` to test for, and one
// way to build an error from a kind and its fields, so both builds throw the same `code`, the
// same fields (camelCase: `err.retryAtMs`) and the same message.

const { KINDS } = require('./core.generated.js')

const BY_CODE = new Map(KINDS.map((k) => [k.code, k]))
const BY_NUMBER = new Map(KINDS.map((k) => [k.number, k]))

/**
 * What every error shardid throws is, whichever class it was thrown as (a `RangeError` for bad
 * input, a `TypeError` for a value of the wrong type, an `Error` otherwise):
 * `catch (e) { if (e instanceof ShardIdError) console.log(e.code) }`. It is never constructed;
 * `instanceof` checks for an `Error` whose `code` is one of `ShardIdError.codes`.
 */
class ShardIdError extends Error {
  constructor() {
    super('ShardIdError is not constructed: test for it with instanceof')
    throw new TypeError(this.message)
  }

  static [Symbol.hasInstance](value) {
    return value instanceof Error && typeof value.code === 'string' && BY_CODE.has(value.code)
  }
}
Object.defineProperty(ShardIdError, 'codes', { value: Object.freeze(KINDS.map((k) => k.code)), enumerable: true })

const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase())

/** The kind's message template with `fields` (camelCase names) filled in. */
function render(kind, fields) {
  return kind.template.replace(/\{([a-z_]+)\}/g, (_, name) => String(fields[camel(name)]))
}

/**
 * The error of kind `code` with `fields` (camelCase names, bigints or strings); the class is
 * the kind's (`RangeError` for input, `Error` otherwise) unless `Class` is given, the message
 * the kind's template unless `message` is.
 */
function makeError(code, fields = {}, Class, message) {
  const kind = BY_CODE.get(code)
  const C = Class ?? (kind.category === 'input' ? RangeError : Error)
  const err = new C(message ?? render(kind, fields))
  err.code = code
  for (const name of kind.fields) err[name] = fields[name]
  return err
}

/**
 * Whether an error of `pg` means the session is gone (and a lease's lock or a client with it):
 * a connection error (no SQLSTATE), a connection exception (class 08) or the server ending the
 * session (class 57P, e.g. pg_terminate_backend).
 */
function sessionLost(err) {
  const code = err.code ?? ''
  return !/^[0-9A-Z]{5}$/.test(code) || code.startsWith('08') || code.startsWith('57P')
}

/**
 * Whether an error of a database driver (pg, mysql2) says the database could not be reached or
 * the connection is gone: a socket error (`ECONNREFUSED`, `ENOTFOUND`, `ETIMEDOUT`, pg's
 * "Connection terminated"), or a SQLSTATE of a connection exception (class 08), of the server
 * ending sessions (57P), of a log-in refused (class 28) or of a database that does not exist
 * (3D000). shardid's own errors are never one.
 */
function unreachable(err) {
  if (err == null || BY_CODE.has(err.code)) return false
  if (err.fatal === true) return true // mysql2: the connection is unusable
  return sessionLost(err) || /^(28|3D000)/.test(err.code ?? '')
}

/** A driver's error in words: its message, or (an `AggregateError` of every address tried,
 *  which Node gives an empty message) its errors' messages, or its code. */
function describe(err) {
  if (err?.message) return err.message
  if (Array.isArray(err?.errors) && err.errors.length) return err.errors.map(describe).join('; ')
  return String(err?.code ?? err)
}

/** `err` kept as `error.cause`, as `new Error(message, { cause })` keeps it (not enumerable). */
function withCause(error, err) {
  Object.defineProperty(error, 'cause', { value: err, writable: true, configurable: true, enumerable: false })
  return error
}

/** `DATABASE_UNREACHABLE`, carrying the driver's error as `cause` and its words as `reason`. */
function unreachableError(err) {
  return withCause(makeError('DATABASE_UNREACHABLE', { reason: describe(err) }), err)
}

/** `CLOSED`: `what` ("the dictionary of topic urls") was closed and makes no more calls. */
function closedError(what) {
  return makeError('CLOSED', { what })
}

/** The kind with this number (a C / WebAssembly status), or undefined. */
function kindOf(number) {
  return BY_NUMBER.get(number)
}

module.exports = { ShardIdError, makeError, kindOf, sessionLost, unreachable, unreachableError, closedError, withCause, describe }
