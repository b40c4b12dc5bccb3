// Every conformance vector of tests/vectors/, through the JS API.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

import { shardid, vectors, layoutFromSpec, outcome, modulePath } from './load.mjs'

const layouts = new Map(vectors('layouts.json').layouts.map((l) => [l.name, layoutFromSpec(l.spec)]))

function run(layout, op, args) {
  const a = Object.fromEntries(Object.entries(args).map(([k, v]) => [k, BigInt(v)]))
  switch (op) {
    case 'decode': return layout.decode(a.id)
    case 'compose': return layout.compose(a.timestamp_ms, a.shard, a.sequence)
    case 'min_id_at': return layout.minIdAt(a.timestamp_ms)
    case 'max_id_at': return layout.maxIdAt(a.timestamp_ms)
    case 'shard_for_key': return layout.shardForKey(a.key, a.logical_shards)
    case 'scatter_decimal': return layout.scatterDecimal(a.id)
    case 'gather_decimal': return layout.gatherDecimal(a.id)
    case 'scatter_bits': return layout.scatterBits(a.id)
    case 'gather_bits': return layout.gatherBits(a.id)
    case 'scatter_decimal_digits': return layout.scatterDecimal(a.id, a.digits)
    case 'gather_decimal_digits': return layout.gatherDecimal(a.id, a.digits)
    default: throw new Error(`unknown op ${op}`)
  }
}

test('layouts and their limits', () => {
  for (const entry of vectors('layouts.json').layouts) {
    const l = layouts.get(entry.name)
    assert.equal(String(l.maxShard), entry.max_shard, entry.name)
    assert.equal(String(l.maxSequence), entry.max_sequence, entry.name)
    assert.equal(String(l.maxId), entry.max_id, entry.name)
    assert.equal(String(l.expiresAtMs), entry.expires_at_ms, entry.name)
    if (entry.preset) assert.ok(l.equals(shardid.Layout[entry.name.toUpperCase()]), entry.name)
  }
})

test('invalid layouts are rejected with INVALID_LAYOUT', () => {
  for (const entry of vectors('layouts.json').invalid) {
    assert.throws(() => layoutFromSpec(entry.spec), (err) => err.code === entry.expect.error, entry.name)
  }
})

for (const file of ['decode.json', 'compose.json', 'ranges.json', 'shard_for_key.json', 'scatter.json']) {
  test(`every case of ${file}`, () => {
    const cases = vectors(file).cases
    assert.ok(cases.length > 0)
    for (const c of cases) {
      const layout = layouts.get(c.layout)
      assert.deepEqual(outcome(() => run(layout, c.op, c.args)), c.expect, c.name)
      if ('id' in c.args) {
        // IDs as decimal strings give the same answers.
        const method = { decode: 'decode', scatter_decimal: 'scatterDecimal', gather_decimal: 'gatherDecimal', scatter_bits: 'scatterBits', gather_bits: 'gatherBits', scatter_decimal_digits: 'scatterDecimal', gather_decimal_digits: 'gatherDecimal' }[c.op]
        const extra = 'digits' in c.args ? [Number(c.args.digits)] : []
        const asString = outcome(() => layout[method](c.args.id, ...extra))
        assert.deepEqual(asString, c.expect, `${c.name} (string)`)
      }
    }
  })
}

// Generators for one (layout, shard) share one state per process, and each trace assumes a
// fresh one: every trace runs in its own process.
const RUN_TRACE = `
const { shardid, layoutFromSpec, vectors, outcome } = await import(process.argv[1])
const trace = JSON.parse(process.argv[2])
const spec = vectors('layouts.json').layouts.find((l) => l.name === trace.layout).spec
const opts = Object.fromEntries(Object.entries(trace.options).map(([k, v]) => [k.replace(/_(.)/g, (_, c) => c.toUpperCase()), BigInt(v)]))
const gen = new shardid.Generator({ layout: layoutFromSpec(spec), shard: BigInt(trace.shard), ...opts })
const results = trace.steps.map((s) => outcome(() => s.op === 'next_id_at'
  ? gen.nextIdAt(BigInt(s.now_ms)) : gen.nextIdsAt(BigInt(s.now_ms), BigInt(s.count))))
process.stdout.write(JSON.stringify(results))
`

for (const trace of vectors('generator.json').traces) {
  test(`generator trace ${trace.name}`, () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', RUN_TRACE,
      fileURLToPath(new URL('./load.mjs', import.meta.url)), JSON.stringify(trace)],
      { env: { ...process.env, SHARDID_JS_MODULE: modulePath } })
    const got = JSON.parse(out)
    assert.equal(got.length, trace.steps.length)
    trace.steps.forEach((step, i) => assert.deepEqual(got[i], step.expect, `step ${i}`))
  })
}

test('Layout has exactly the core\'s presets, and refuses an unknown order with the core\'s words', () => {
  const presets = vectors('layouts.json').layouts.filter((l) => l.preset).map((l) => l.name.toUpperCase())
  assert.deepEqual(Object.keys(shardid.Layout).sort(), presets.sort())
  assert.throws(() => new shardid.Layout({ epochMs: 0, timeBits: 41, shardBits: 10, sequenceBits: 12, order: 'time|shard' }),
    (err) => err.code === 'INVALID_LAYOUT' && err.reason === 'the order must be "time_shard_sequence" or "time_sequence_shard"')
})

// Hostile inputs for an ID (adversarial.json): the same code as every other language, the
// language's own class (TypeError for a wrong type, RangeError for a bad value), and a message
// short enough to log whatever came in.
test('adversarial inputs get the same error codes as in every language', () => {
  const cases = vectors('adversarial.json').cases
  assert.ok(cases.length > 40)
  for (const c of cases) {
    const layout = layouts.get(c.layout)
    const i = c.input
    const value = 'text' in i ? i.text
      : 'text_repeat' in i ? i.text_repeat.text.repeat(i.text_repeat.times)
        : 'int' in i ? BigInt(i.int)
          : 'number' in i ? Number(i.number)
            : i.other
    if ('ok' in c.expect) {
      assert.equal(layout.validateId(value), BigInt(c.expect.ok), c.name)
      continue
    }
    assert.throws(() => layout.validateId(value), (e) => {
      assert.equal(e.code, c.expect.error, c.name)
      assert.ok(e instanceof (c.expect.wrong_type ? TypeError : RangeError), `${c.name}: ${e.constructor.name}`)
      assert.ok(e.message.length < 200, `${c.name}: a message of ${e.message.length} characters`)
      return true
    }, c.name)
  }
})
