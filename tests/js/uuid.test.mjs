// The UUIDv7 bridge: every case of tests/vectors/uuid.json, as text and as 16 bytes.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { shardid, vectors, layoutFromSpec, outcome } from './load.mjs'

const layouts = new Map(vectors('layouts.json').layouts.map((l) => [l.name, layoutFromSpec(l.spec)]))
const cases = vectors('uuid.json').cases
// The default WebAssembly module leaves the bridge to shardid-wasm/public (its size budget).
const unsupported = process.env.SHARDID_JS_PUBLIC_IDS === 'unsupported'

const bytesOf = (text) => Uint8Array.from(text.replace(/-/g, '').match(/../g), (h) => parseInt(h, 16))

function run(c, asBytes) {
  const layout = c.layout === null ? undefined : layouts.get(c.layout)
  if (c.op === 'to_uuid') {
    const text = layout.toUuid(BigInt(c.args.id))
    const bytes = layout.toUuidBytes(c.args.id)
    assert.ok(bytes instanceof Uint8Array && bytes.length === 16)
    assert.deepEqual(Array.from(bytes), Array.from(bytesOf(text)), c.name)
    return text
  }
  const text = c.args.uuid
  const arg = asBytes && /^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$/.test(text) ? bytesOf(text) : text
  if (layout === undefined) return shardid.fromUuid(arg)
  assert.equal(outcome(() => shardid.fromUuid(arg, layout)).ok, outcome(() => layout.fromUuid(arg)).ok)
  return layout.fromUuid(arg)
}

test('every case of uuid.json', { skip: unsupported }, () => {
  assert.ok(cases.length > 80)
  for (const c of cases) {
    assert.deepEqual(outcome(() => run(c, false)), c.expect, c.name)
    assert.deepEqual(outcome(() => run(c, true)), c.expect, `${c.name} (bytes)`)
  }
})

test('a UUID of the wrong type or length', { skip: unsupported }, () => {
  const l = shardid.Layout.TWITTER
  for (const bad of [7n, null, undefined, {}, new Uint16Array(8)]) {
    assert.throws(() => l.fromUuid(bad), (err) => err instanceof TypeError && err.code === 'INVALID_ARGUMENT', String(bad))
  }
  assert.throws(() => l.fromUuid(new Uint8Array(15)), (err) => err instanceof RangeError && err.code === 'INVALID_ARGUMENT')
  assert.throws(() => shardid.fromUuid(l.toUuid(0n), {}), (err) => err instanceof TypeError && err.code === 'INVALID_ARGUMENT')
  // UUIDs of one layout sort as their IDs.
  const ids = [0n, 1n, 1n << 22n, (1n << 62n) + 5n, l.maxId]
  const texts = ids.map((id) => l.toUuid(id))
  assert.deepEqual([...texts].sort(), texts)
  assert.deepEqual(texts.map((t) => shardid.fromUuid(t)), ids)
})

test('the default WebAssembly module says where the bridge is', { skip: !unsupported }, () => {
  assert.throws(() => shardid.Layout.TWITTER.toUuid(0n), (err) => err.code === 'UNSUPPORTED')
  assert.throws(() => shardid.fromUuid('00000000-0000-7000-8000-000000000000'), (err) => err.code === 'UNSUPPORTED')
})
