// A shard from a Kubernetes StatefulSet pod's ordinal: every case of ordinal.json, the default
// hostname (HOSTNAME, then the host's name) and arguments of the wrong type. The WebAssembly
// build has no host: shardFromOrdinal throws UNSUPPORTED there.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

import { modulePath, shardid, vectors, layoutFromSpec, outcome } from './load.mjs'

const { Layout, shardFromOrdinal } = shardid
const isWasm = !shardid.threadsShareState
const layouts = new Map(vectors('layouts.json').layouts.map((l) => [l.name, layoutFromSpec(l.spec)]))
const cases = vectors('ordinal.json').cases

test('the WebAssembly build refuses clearly', { skip: !isWasm }, () => {
  assert.throws(() => shardFromOrdinal({ layout: Layout.INSTAGRAM, shards: [0, 8], hostname: 'app-3' }),
    (err) => err.code === 'UNSUPPORTED' && /Node addon/.test(err.message))
})

test('every case of ordinal.json', { skip: isWasm }, () => {
  assert.ok(cases.length > 20)
  for (const c of cases) {
    const shards = c.args.shards.map(BigInt)
    const got = outcome(() => shardFromOrdinal({ layout: layouts.get(c.layout), shards, hostname: c.args.hostname }))
    assert.deepEqual(got, c.expect, c.name)
    // Bounds as numbers too, as a Kubernetes manifest's values arrive.
    const asNumbers = outcome(() => shardFromOrdinal({ layout: layouts.get(c.layout), shards: shards.map(Number), hostname: c.args.hostname }))
    assert.deepEqual(asNumbers, c.expect, `${c.name} (numbers)`)
  }
})

test('refusals are RangeErrors naming their argument', { skip: isWasm }, () => {
  const refused = cases.filter((c) => c.expect.error === 'INVALID_ARGUMENT')
  assert.ok(refused.length >= 10)
  for (const c of refused) {
    assert.throws(() => shardFromOrdinal({ layout: layouts.get(c.layout), shards: c.args.shards.map(BigInt), hostname: c.args.hostname }),
      (err) => err instanceof RangeError && err instanceof shardid.ShardIdError && err.argument === c.expect.argument, c.name)
  }
})

/** What `shardFromOrdinal` returns (or its error's code) in a fresh Node with `env`. */
function inChild(env, hostname) {
  const script = `const s = require(${JSON.stringify(modulePath)}); ${hostname ?? ''}
try { console.log(s.shardFromOrdinal({ layout: s.Layout.INSTAGRAM, shards: [0, 8192] })) } catch (e) { console.log(e.code, e.message) }`
  return execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8', timeout: 60_000 }).trim()
}

test('the hostname defaults to HOSTNAME, then the host\'s name', { skip: isWasm }, () => {
  const { HOSTNAME, ...base } = process.env
  assert.equal(inChild({ ...base, HOSTNAME: 'web-7' }), '7')
  assert.match(inChild({ ...base, HOSTNAME: 'web-07' }), /^INVALID_ARGUMENT hostname /)
  // Set in the process, as a snippet does: read at the call.
  assert.equal(inChild({ ...base, HOSTNAME: 'web-7' }, "process.env.HOSTNAME = 'web-12'"), '12')
  const host = readFileSync('/proc/sys/kernel/hostname', 'utf8').trim()
  const expected = outcome(() => shardFromOrdinal({ layout: Layout.INSTAGRAM, shards: [0, 8192], hostname: host }))
  const got = inChild(base)
  if ('ok' in expected) assert.equal(got, expected.ok)
  else assert.ok(got.startsWith(`${expected.error} hostname `), got)
})

test('arguments of the wrong type', { skip: isWasm }, () => {
  const layout = Layout.INSTAGRAM
  for (const hostname of [3, {}, ['app-3']]) {
    assert.throws(() => shardFromOrdinal({ layout, shards: [0, 8], hostname }),
      (err) => err instanceof TypeError && err.code === 'INVALID_ARGUMENT' && err.argument === 'hostname')
  }
  for (const bad of [undefined, {}, { layout, shards: 8 }, { layout: 'instagram', shards: [0, 8] }]) {
    assert.throws(() => shardFromOrdinal(bad), (err) => err instanceof TypeError && err.code === 'INVALID_ARGUMENT')
  }
  assert.throws(() => shardFromOrdinal({ layout, shards: [-1, 8], hostname: 'app-3' }), (err) => err.code === 'SHARD_OUT_OF_RANGE')
  assert.throws(() => shardFromOrdinal({ layout, shards: [0, 8], hostname: 'app-\udc003' }), (err) => err.code === 'INVALID_ARGUMENT')
  assert.equal(shardFromOrdinal({ layout, shards: [0, 8], hostname: 'app-3' }), 3)
  assert.equal(typeof shardFromOrdinal({ layout, shards: [0n, 8n], hostname: 'app-3' }), 'number')
})
