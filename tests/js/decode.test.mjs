// Single-ID decode against batch decode, ID by ID, on layouts whose fields lie anywhere in the
// two 32-bit halves of an ID. The WebAssembly build decodes single IDs in JS by the core's
// numbers (bindings-wasm/js/backend.js, issue 20) and batches in the module: the two must
// agree on every ID, in every form an ID is given in, and refuse the same ones with the same
// code. Against the Node addon both are the core's, which keeps the test honest there too.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { shardid, vectors, layoutFromSpec } from './load.mjs'

const { Layout } = shardid

// xorshift64: the same IDs on every run.
function* ids(seed, n) {
  let x = BigInt(seed)
  const M = (1n << 64n) - 1n
  for (let i = 0; i < n; i++) {
    x ^= (x << 13n) & M
    x ^= x >> 7n
    x ^= (x << 17n) & M
    yield x
  }
}

// Layouts JS takes, with fields across bit 32 in every way: the presets, the vectors' layouts,
// and custom ones with a shard or sequence field lying across the halves, in `hi` alone, in
// `lo` alone, 32 bits wide, and unsigned layouts that use all 64 bits.
const custom = [
  { epochMs: 0, timeBits: 20, shardBits: 24, sequenceBits: 20 },
  { epochMs: 0, timeBits: 20, shardBits: 12, sequenceBits: 32 },
  { epochMs: 5, unitMs: 7, timeBits: 30, shardBits: 2, sequenceBits: 32, order: 'time_sequence_shard' },
  { epochMs: 1_000, timeBits: 28, shardBits: 36, sequenceBits: 0, signed: false },
  { epochMs: 0, unitMs: 1_000, timeBits: 32, shardBits: 0, sequenceBits: 32, signed: false },
  { epochMs: 0, timeBits: 16, shardBits: 8, sequenceBits: 8 },
  { epochMs: 1_600_000_000_000, unitMs: 10, timeBits: 39, shardBits: 16, sequenceBits: 8, order: 'time_sequence_shard' },
]
const layouts = [
  Layout.TWITTER, Layout.INSTAGRAM, Layout.DISCORD, Layout.SONYFLAKE,
  ...vectors('layouts.json').layouts.map((l) => layoutFromSpec(l.spec)),
  ...custom.map((spec) => new Layout(spec)),
]

const fields = (p) => [p.timestampMs, p.shard, p.sequence]
const codeOf = (fn) => {
  try {
    fn()
    return 'ok'
  } catch (err) {
    return err.code
  }
}

test('decode(id) is decodeMany([id]) for random IDs of every layout, as bigints, strings and numbers', () => {
  let checked = 0
  let valid = 0
  for (const [i, layout] of layouts.entries()) {
    const all = [...ids(0x9e3779b97f4a7c15n + BigInt(i), 2_000)]
    // Half of them brought within the layout's IDs, so both paths are walked.
    const given = all.map((id, k) => (k % 2 ? id : id % (layout.maxId + 1n)))
    given.push(0n, layout.maxId, layout.maxId + 1n, (1n << 64n) - 1n, 1n << 32n, (1n << 32n) - 1n)
    for (const id of given) {
      const inside = id <= layout.maxId
      const forms = [id, String(id), String(id).padStart(19, '0'), String(id).padStart(20, '0')]
      if (id <= BigInt(Number.MAX_SAFE_INTEGER)) forms.push(Number(id))
      if (inside) {
        const many = layout.decodeMany([id])
        const expected = [many.timestampMs[0], many.shard[0], many.sequence[0]]
        valid++
        for (const form of forms) {
          assert.deepEqual(fields(layout.decode(form)), expected, `layout ${i}: ${typeof form} ${form}`)
          checked++
        }
      } else {
        for (const form of forms) {
          if (String(form).length > 20) continue
          assert.equal(codeOf(() => layout.decode(form)), 'INVALID_ID', `layout ${i}: ${typeof form} ${form}`)
          assert.equal(codeOf(() => layout.decodeMany([form])), 'INVALID_ID', `layout ${i}: decodeMany ${typeof form} ${form}`)
          checked++
        }
      }
    }
  }
  assert.ok(valid > layouts.length * 1_000, `${valid} valid IDs`)
  assert.ok(checked > layouts.length * 5_000, `${checked} decodes`)
})

test('decode refuses what decodeMany refuses, with the same code', () => {
  const layout = Layout.TWITTER
  const refused = ['', ' 1', '1 ', '+1', '-1', '0x10', '1e3', '1.0', '１', '1_000', '18446744073709551616',
    '99999999999999999999', '000000000000000000001', 'abc', -1n, 1n << 64n, -1, 1.5, 2 ** 53, NaN, null,
    undefined, {}, [], true]
  for (const id of refused) {
    const single = codeOf(() => layout.decode(id))
    assert.notEqual(single, 'ok', `decode(${String(id)})`)
    if (typeof id === 'string' || typeof id === 'bigint') {
      assert.equal(single, codeOf(() => layout.decodeMany([id])), `decode(${String(id)})`)
    }
  }
  // 20 digits below 2^64, leading zeros, and the largest u64: parsed by the core, then decoded.
  assert.deepEqual(fields(layout.decode('01050118621198921728')), fields(layout.decode(1050118621198921728n)))
  assert.equal(codeOf(() => layout.decode('18446744073709551615')), 'INVALID_ID')
  assert.deepEqual(fields(Layout.DISCORD.decode('0000000000000000000')), fields(Layout.DISCORD.decode(0n)))
})
