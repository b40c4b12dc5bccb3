// Public IDs through the JS API: every case of tests/vectors/public_ids.json (the core's text,
// byte for byte), hostile input, the JSON helpers, and that no key shows. Run against the Node
// addon and the WebAssembly module with public IDs (shardid-wasm/public); against the default
// WebAssembly module (SHARDID_JS_PUBLIC_IDS=unsupported), every entry point is UNSUPPORTED.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { inspect } from 'node:util'

import { shardid, vectors, layoutFromSpec, outcome } from './load.mjs'

const { PublicIds, checkPublicId, Layout } = shardid
const file = vectors('public_ids.json')
const layouts = new Map(vectors('layouts.json').layouts.map((l) => [l.name, layoutFromSpec(l.spec)]))
const KEY = new TextEncoder().encode('0123456789abcdef')
const hex = (h) => Uint8Array.from(h.match(/../g) ?? [], (b) => parseInt(b, 16))
const unsupported = process.env.SHARDID_JS_PUBLIC_IDS === 'unsupported'

function build(spec) {
  return new PublicIds({
    key: hex(spec.key),
    keyVersion: spec.key_version,
    prefix: spec.prefix,
    encoding: spec.encoding,
    layout: layouts.get(spec.layout),
    oldKeys: new Map(spec.old_keys.map((k) => [k.key_version, hex(k.key)])),
  })
}

const textOf = (args) => ('text' in args ? args.text : args.text_repeat.text.repeat(args.text_repeat.times))

function run(c) {
  if (c.op === 'check') return checkPublicId(textOf(c.args), { prefix: c.ids.prefix, encoding: c.ids.encoding })
  const ids = build(c.ids)
  return c.op === 'encode' ? ids.encode(BigInt(c.args.id)) : ids.decode(textOf(c.args))
}

test('without public IDs, the default WebAssembly module says where they are', { skip: !unsupported }, () => {
  const calls = [
    () => new PublicIds({ key: KEY, prefix: 'note' }),
    () => PublicIds.fromKeys('30313233343536373839616263646566', { prefix: 'note' }),
    () => checkPublicId('note_0923h26jsg2d8g', { prefix: 'note' }),
  ]
  for (const call of calls) {
    assert.throws(call, (err) => err.code === 'UNSUPPORTED' && /shardid-wasm\/public/.test(err.message))
  }
})

test('every case of public_ids.json', { skip: unsupported }, () => {
  assert.ok(file.cases.length > 400)
  for (const c of file.cases) {
    assert.deepEqual(outcome(() => run(c)), c.expect, c.name)
  }
})

test('the constructor refuses what the core refuses', { skip: unsupported }, () => {
  for (const c of file.invalid) {
    assert.deepEqual(outcome(() => build(c.ids)), c.expect, c.name)
    assert.throws(() => build(c.ids), RangeError, c.name)
  }
  for (const c of file.keys_text) {
    const made = () => PublicIds.fromKeys(c.keys, { prefix: c.prefix, encoding: c.encoding }).encode(BigInt(c.id))
    assert.deepEqual(outcome(made), c.expect, c.name)
  }
})

test('patterns match every text of their format', { skip: unsupported }, () => {
  for (const p of file.patterns) {
    const ids = new PublicIds({ key: KEY, prefix: p.prefix, encoding: p.encoding, layout: Layout.DISCORD })
    assert.equal(ids.pattern, p.pattern)
    assert.equal(ids.textLength, p.text_len)
    const re = new RegExp(`^${ids.pattern}$`)
    for (const n of [0n, 1n, 2n ** 63n - 1n, 2n ** 64n - 1n, 123456789n]) {
      const text = ids.encode(n)
      assert.ok(re.test(text), text)
      assert.equal(text.length, ids.textLength)
    }
  }
})

test('the issue\'s example, and IDs as bigints, strings and safe numbers', { skip: unsupported }, () => {
  const notes = new PublicIds({ key: KEY, prefix: 'note', encoding: 'base32' })
  const text = notes.encode(4036916263258161152n)
  assert.equal(text, 'note_0923h26jsg2d8g')
  assert.equal(notes.decode(text), 4036916263258161152n)
  assert.equal(notes.decode(text.toUpperCase()), 4036916263258161152n)
  assert.equal(notes.encode('4036916263258161152'), text)
  assert.equal(notes.encode(5), notes.encode(5n))
  assert.equal(notes.check(text), 0)
  assert.deepEqual([notes.prefix, notes.encoding, notes.keyVersion, notes.keyVersions], ['note', 'base32', 0, [0]])
  assert.ok(notes.layout.equals(Layout.INSTAGRAM))
  assert.ok(Object.isFrozen(notes))
})

test('hostile arguments: typed errors, never a wrong ID', { skip: unsupported }, () => {
  const notes = new PublicIds({ key: KEY, prefix: 'note' })
  const good = notes.encode(123n)
  const hostile = [
    ['', 'PUBLIC_ID_PREFIX'], [good.slice(0, -1), 'PUBLIC_ID_LENGTH'], [`${good}\u0301`, 'PUBLIC_ID_LENGTH'],
    [`note_${'\u{1F600}'}${good.slice(6)}`, 'PUBLIC_ID_ALPHABET'], [`n\u043ete_${good.slice(5)}`, 'PUBLIC_ID_PREFIX'],
    ['note_'.repeat(100000), 'PUBLIC_ID_ALPHABET'], [`${good}${'x'.repeat(5000)}`, 'PUBLIC_ID_LENGTH'],
    [`note_\ud800${good.slice(6)}`, 'PUBLIC_ID_ALPHABET'],
  ]
  for (const [text, code] of hostile) {
    assert.throws(() => notes.decode(text), (err) => err instanceof RangeError && err.code === code && err.message.length < 200, JSON.stringify(text.slice(0, 30)))
  }
  // The position counts from 0, prefix included, the same as in every language.
  assert.throws(() => notes.decode(`note_0923h26jsg2d8\u043e`), (err) => err.code === 'PUBLIC_ID_ALPHABET' && err.position === 18n)
  for (const bad of [undefined, null, 5, 5n, ['note_'], { toString: () => good }]) {
    assert.throws(() => notes.decode(bad), (err) => err instanceof TypeError && err.code === 'INVALID_ARGUMENT')
  }
  for (const [id, code] of [[-1n, 'INVALID_ID'], [2n ** 63n, 'INVALID_ID'], [1.5, 'INVALID_ID'], ['0x10', 'INVALID_ID'], [null, 'INVALID_ARGUMENT']]) {
    assert.throws(() => notes.encode(id), (err) => err.code === code, String(id))
  }
  for (const key of ['0123456789abcdef', undefined, [1, 2], new Uint16Array(8), KEY.buffer]) {
    assert.throws(() => new PublicIds({ key, prefix: 'note' }), (err) => err instanceof TypeError && err.code === 'INVALID_ARGUMENT' && err.argument === 'key')
  }
  assert.throws(() => new PublicIds({ key: KEY }), (err) => err instanceof TypeError && err.argument === 'prefix')
  assert.throws(() => new PublicIds({ key: KEY, prefix: 'note', encoding: 'base64' }), (err) => err instanceof RangeError && err.argument === 'encoding')
  assert.throws(() => new PublicIds({ key: KEY, prefix: 'note', layout: {} }), TypeError)
  assert.throws(() => new PublicIds({ key: KEY, prefix: 'note', keyVersion: 2n ** 40n }), (err) => err.argument === 'key_version')
  // A key as a Node Buffer is a Uint8Array.
  if (typeof Buffer === 'function') assert.equal(new PublicIds({ key: Buffer.from(KEY), prefix: 'note' }).encode(5n), notes.encode(5n))
})

test('texts under another key or type never give their ID', { skip: unsupported }, () => {
  const notes = new PublicIds({ key: KEY, prefix: 'note' })
  const other = new PublicIds({ key: hex('ab'.repeat(16)), prefix: 'note' })
  const users = new PublicIds({ key: KEY, prefix: 'user' })
  let refused = 0
  for (let n = 1000n; n < 3000n; n++) {
    assert.throws(() => notes.decode(users.encode(n)), (err) => err.code === 'PUBLIC_ID_PREFIX')
    try {
      assert.notEqual(notes.decode(other.encode(n)), n)
    } catch (err) {
      if (err.code !== 'PUBLIC_ID_MISMATCH') throw err
      assert.ok(!/\d{5}/.test(err.message), err.message)
      refused++
    }
  }
  assert.ok(refused > 800 && refused < 1200, `${refused} refused`)
})

test('rotation: old keys decode, the current one encodes', { skip: unsupported }, () => {
  const old = new PublicIds({ key: KEY, keyVersion: 1, prefix: 'note', encoding: 'base62' })
  const rotated = new PublicIds({ key: hex('ab'.repeat(16)), keyVersion: 2, oldKeys: { 1: KEY }, prefix: 'note', encoding: 'base62' })
  assert.deepEqual(rotated.keyVersions, [2, 1])
  for (let n = 0n; n < 500n; n++) {
    assert.equal(rotated.decode(old.encode(n)), n)
    assert.equal(rotated.decode(rotated.encode(n)), n)
  }
  assert.throws(() => old.decode(rotated.encode(7n)), (err) => err.code === 'UNKNOWN_KEY_VERSION' && err.version === 2n)
  const fromKeys = PublicIds.fromKeys(`1:30313233343536373839616263646566,2:${'ab'.repeat(16)}`, { prefix: 'note', encoding: 'base62' })
  assert.equal(fromKeys.encode(9n), rotated.encode(9n))
})

test('fromEnv reads the keys from the environment', { skip: unsupported || typeof process !== 'object' }, () => {
  const saved = process.env.SHARDID_PUBLIC_ID_KEYS
  try {
    delete process.env.SHARDID_PUBLIC_ID_KEYS
    assert.throws(() => PublicIds.fromEnv({ prefix: 'note' }), (err) => err.code === 'INVALID_ARGUMENT')
    process.env.SHARDID_PUBLIC_ID_KEYS = '30313233343536373839616263646566'
    assert.equal(PublicIds.fromEnv({ prefix: 'note' }).encode(5n), new PublicIds({ key: KEY, prefix: 'note' }).encode(5n))
    process.env.OTHER_KEYS = 'not hex at all, a secret'
    assert.throws(() => PublicIds.fromEnv({ prefix: 'note', variable: 'OTHER_KEYS' }), (err) => err.argument === 'keys' && !err.message.includes('secret'))
  } finally {
    if (saved === undefined) delete process.env.SHARDID_PUBLIC_ID_KEYS
    else process.env.SHARDID_PUBLIC_ID_KEYS = saved
    delete process.env.OTHER_KEYS
  }
})

test('the JSON helpers: public IDs out, bigints back in', { skip: unsupported }, () => {
  const notes = new PublicIds({ key: KEY, prefix: 'note' })
  const body = { id: 4036916263258161152n, parentIds: [5n, '6', null], count: 3n, title: 'x' }
  const json = JSON.stringify(body, notes.jsonReplacer(['id', 'parentIds']))
  assert.equal(json, JSON.stringify({ id: notes.encode(body.id), parentIds: [notes.encode(5n), notes.encode(6n), null], count: '3', title: 'x' }))
  const back = JSON.parse(json, notes.jsonReviver(['id', 'parentIds']))
  assert.deepEqual(back, { id: 4036916263258161152n, parentIds: [5n, 6n, null], count: '3', title: 'x' })
  // A raw number or another type's text under a public key is refused, never taken.
  assert.throws(() => JSON.parse('{"id":"4036916263258161152"}', notes.jsonReviver(['id'])), (err) => err.code === 'PUBLIC_ID_PREFIX')
  assert.throws(() => JSON.parse('{"id":5}', notes.jsonReviver(['id'])), TypeError)
  assert.throws(() => notes.jsonReviver('id'), TypeError)
})

test('no key shows: not in the object, its JSON or its inspection', { skip: unsupported }, () => {
  const notes = new PublicIds({ key: KEY, prefix: 'note', oldKeys: { 3: hex('ab'.repeat(16)) } })
  const shown = inspect(notes, { showHidden: true, depth: 5 })
  assert.ok(!shown.includes('0123456789') && !/\b48, 49, 50\b/.test(shown) && !/\b171, 171\b/.test(shown), shown)
  assert.ok(shown.includes('note'))
})

test("fromKeys(keys, 'note') takes the prefix alone, as Python's from_keys(keys, 'note')", { skip: unsupported }, () => {
  const keys = '30313233343536373839616263646566'
  const ids = PublicIds.fromKeys(keys, 'note')
  assert.equal(ids.prefix, 'note')
  assert.equal(ids.encoding, 'base32')
  assert.equal(ids.encode(5n), new PublicIds({ key: KEY, prefix: 'note' }).encode(5n))
  // Another shape is refused naming the exact call.
  assert.throws(
    () => PublicIds.fromKeys(keys, 7),
    (err) => err.code === 'INVALID_ARGUMENT' && err instanceof TypeError && err.message.includes("PublicIds.fromKeys(…, { prefix: 'note', encoding?, layout? })"),
  )
  assert.throws(() => new PublicIds('note'), (err) => err.code === 'INVALID_ARGUMENT' && err.message.includes("new PublicIds({ key, prefix: 'note'"))
})
