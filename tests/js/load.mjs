// Which implementation the suite tests: the Node addon by default; SHARDID_JS_MODULE names
// another module with the same API (the WebAssembly build will be one).
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const target = process.env.SHARDID_JS_MODULE ?? join(here, '../../bindings-node/index.js')
export const modulePath = resolve(target)
export const shardid = createRequire(import.meta.url)(modulePath)

/** A vector file; IDs stay exact because the JSON holds them as strings. */
export function vectors(name) {
  return JSON.parse(readFileSync(join(here, '../vectors', name), 'utf8'))
}

export function layoutFromSpec(spec) {
  return new shardid.Layout({
    epochMs: BigInt(spec.epoch_ms),
    unitMs: BigInt(spec.unit_ms),
    timeBits: spec.time_bits,
    shardBits: spec.shard_bits,
    sequenceBits: spec.sequence_bits,
    order: spec.order,
    signed: spec.signed,
  })
}

/** A result in the vectors' shape: {ok: ...} or {error: CODE, ...fields, message}, the error's
 *  camelCase fields under their snake_case names, as strings. */
export function outcome(call) {
  try {
    const value = call()
    if (value instanceof shardid.Parts) {
      return { ok: { timestamp_ms: String(value.timestampMs), shard: String(value.shard), sequence: String(value.sequence) } }
    }
    if (value instanceof BigUint64Array) return { ok: Array.from(value, String) }
    return { ok: String(value) }
  } catch (err) {
    if (!(err instanceof shardid.ShardIdError)) throw err
    const got = { error: err.code, message: err.message }
    for (const [name, value] of Object.entries(err)) {
      if (name !== 'code') got[name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = String(value)
    }
    return got
  }
}
