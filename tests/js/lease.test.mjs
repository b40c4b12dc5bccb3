// Shard leases (Node addon): copies of one service never share a shard. 8 cluster workers
// make 1,000,000 IDs each at once; a worker killed with SIGKILL frees its shard and its
// successor continues above its IDs; a clock set back between runs never yields an old ID.
// The WebAssembly build has no file system: lease() throws UNSUPPORTED there.
import assert from 'node:assert/strict'
import { fork } from 'node:child_process'
import cluster from 'node:cluster'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { modulePath, shardid } from './load.mjs'

const { Layout, lease } = shardid
const isWasm = !shardid.threadsShareState
const T0 = 1_700_000_000_000
const worker = fileURLToPath(new URL('./lease-worker.mjs', import.meta.url))
const temp = () => mkdtempSync(join(tmpdir(), 'shardid-lease-'))

const throwsCode = (fn, code) => assert.throws(fn, (err) => err.code === code)

test('the WebAssembly build refuses leases clearly', { skip: !isWasm }, () => {
  throwsCode(() => lease({ layout: Layout.TWITTER, directory: temp(), shards: [0, 4] }), 'UNSUPPORTED')
})

test('two leases never share a shard; NO_FREE_SHARD names the range', { skip: isWasm }, () => {
  const dir = temp()
  const a = lease({ layout: Layout.TWITTER, directory: dir, shards: [7, 9] })
  const b = lease({ layout: Layout.TWITTER, directory: dir, shards: [7, 9] })
  assert.deepEqual([a.shard, b.shard], [7, 8])
  assert.throws(() => lease({ layout: Layout.TWITTER, directory: dir, shards: [7, 9] }),
    (err) => err.code === 'NO_FREE_SHARD' && /every shard in 7\.\.9 is leased/.test(err.message))
  throwsCode(() => lease({ layout: Layout.TWITTER, directory: dir, shards: [1020, 1030] }), 'SHARD_OUT_OF_RANGE')
  throwsCode(() => lease({ layout: Layout.TWITTER, directory: dir }), 'INVALID_ARGUMENT')
  assert.throws(() => lease({ layout: Layout.TWITTER, directory: dir, shards: [5, 5] }),
    (err) => err.code === 'INVALID_ARGUMENT' && err instanceof RangeError &&
      err.message === 'shards 5..5 is empty: a lease needs a range of at least one shard')
  writeFileSync(join(dir, 'a-file'), '')
  assert.throws(() => lease({ layout: Layout.TWITTER, directory: join(dir, 'a-file', 'shards'), shards: [0, 4] }),
    (err) => err.code === 'LEASE_FILE' && err.message.includes(join(dir, 'a-file', 'shards')))
  throwsCode(() => new shardid.LeasedGenerator(), 'INVALID_ARGUMENT')
  assert.ok(a.nextIds(1000).every((id, i, all) => i === 0 || id > all[i - 1]))
  rmSync(dir, { recursive: true, force: true })
})

/** Runs lease-worker.mjs in a child process; resolves with its message once it has exited
 *  (and so released its shard). */
function run(args) {
  return new Promise((resolve, reject) => {
    const child = fork(worker, args, { env: { ...process.env, SHARDID_JS_MODULE: modulePath } })
    let message
    child.on('message', (m) => { message = m })
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve(message) : reject(new Error(`worker exited with ${code}`))))
  })
}

/** Runs lease-worker.mjs as a cluster worker; resolves with its message. */
function clusterWorker(args) {
  cluster.setupPrimary({ exec: worker })
  return new Promise((resolve, reject) => {
    const w = cluster.fork({ SHARDID_JS_MODULE: modulePath, SHARDID_LEASE_ARGS: JSON.stringify(args) })
    w.on('message', resolve)
    w.on('error', reject)
    w.on('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)))
  })
}

test('8 cluster workers make 1,000,000 IDs each at once without a duplicate', { skip: isWasm, timeout: 120_000 }, async () => {
  const dir = temp()
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => clusterWorker([dir, join(dir, `ids-${i}`), '1000000'])))
  const shards = new Set(results.map((r) => r.shard))
  assert.equal(shards.size, 8, 'each worker holds its own shard')
  const all = new BigUint64Array(8_000_000)
  results.forEach((_, i) => all.set(new BigUint64Array(readFileSync(join(dir, `ids-${i}`)).buffer), i * 1_000_000))
  all.sort()
  let duplicates = 0
  for (let i = 1; i < all.length; i++) if (all[i] === all[i - 1]) duplicates++
  assert.equal(duplicates, 0)
  rmSync(dir, { recursive: true, force: true })
})

test('a worker killed with SIGKILL frees its shard; its successor never repeats an ID', { skip: isWasm, timeout: 60_000 }, async () => {
  const dir = temp()
  const out = join(dir, 'ids')
  const child = fork(worker, [dir, out, 'forever'], { env: { ...process.env, SHARDID_JS_MODULE: modulePath } })
  await new Promise((resolve) => child.on('message', resolve)) // it holds shard 0 and has written IDs
  throwsCode(() => lease({ layout: Layout.TWITTER, directory: dir, shards: [0, 1] }), 'NO_FREE_SHARD')
  child.kill('SIGKILL')
  await new Promise((resolve) => child.on('exit', resolve))
  const bytes = readFileSync(out)
  const killed = new BigUint64Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 8))
  const successor = lease({ layout: Layout.TWITTER, directory: dir, shards: [0, 1] })
  assert.equal(successor.shard, 0)
  const max = killed.reduce((m, id) => (id > m ? id : m), 0n)
  assert.ok(killed.length > 0 && successor.nextId() > max)
  rmSync(dir, { recursive: true, force: true })
})

test('a closed lease frees its shard for another process at once and makes no more IDs', { skip: isWasm }, async () => {
  const dir = temp()
  const held = lease({ layout: Layout.TWITTER, directory: dir, shards: [0, 1] })
  const last = held.nextId()
  held.close()
  // Another process takes shard 0 at once (the worker leases from [0, 64]: the first free).
  const started = Date.now()
  const { shard } = await run([dir, join(dir, 'ids'), '10'])
  assert.equal(shard, 0)
  assert.ok(Date.now() - started < 10_000)
  // Closed is not lost: CLOSED, naming the shard it held (retrying cannot help).
  for (const call of [() => held.nextId(), () => held.nextIds(3), () => held.nextIdString()]) {
    assert.throws(call, (err) => err.code === 'CLOSED' && err.what === 'the lease on shard 0' &&
      err.message === 'the lease on shard 0 was closed: make a new one')
  }
  assert.equal(held.shard, 0)
  held.close() // twice is fine
  const again = lease({ layout: Layout.TWITTER, directory: dir, shards: [0, 1] })
  assert.ok(again.nextId() > last)
  again.close()
  rmSync(dir, { recursive: true, force: true })
})

test('a clock set back between runs never yields an old ID', { skip: isWasm }, async () => {
  const dir = temp()
  const { shard, last } = await run([dir, join(dir, 'ids'), 'at', String(T0)])
  const again = lease({ layout: Layout.TWITTER, directory: dir, shards: [shard, shard + 1] })
  // 5 s back, beyond the 1 s tolerance: the clock error. 400 ms back: wait for the last
  // holder's ceiling (SEQUENCE_EXHAUSTED from nextIdAt, which never waits).
  throwsCode(() => again.nextIdAt(T0 - 5000), 'CLOCK_MOVED_BACKWARDS')
  throwsCode(() => again.nextIdAt(T0 - 400), 'SEQUENCE_EXHAUSTED')
  assert.ok(again.nextIdAt(T0 + 200) > BigInt(last))
  rmSync(dir, { recursive: true, force: true })
})
