// Expiring shard leases on a SQLite file (shardid/sqlite; on better-sqlite3, and on node:sqlite
// in tests/js/run.sh's Node 22 run): processes racing for the shards of one file, the release, a
// holder paused past its time to live, and the same error codes as Python's shardid.sqlite. No
// server: each test makes its own file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { database } from './sqlite-driver.mjs'

const addonOnly = { skip: process.env.SHARDID_JS_MODULE ? 'SQLite is in the Node addon only' : false }
const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const pkg = new URL('../../bindings-node/', import.meta.url).pathname
const TTL_MS = 600

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'shardid-sqlite-lease-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const urlOf = (file) => `sqlite:///${file}` // an absolute path: four slashes

// A process that takes a lease on shards [0, 3) when `go` arrives on stdin, prints what it got
// (its shard and 1,000 IDs, or the error's code), and releases it when stdin ends.
const RACER = `
const { lease } = require(${JSON.stringify(pkg + 'sqlite.js')})
const { Layout } = require(${JSON.stringify(pkg + 'index.js')})
process.stdout.write('ready\\n')
process.stdin.once('data', async () => {
  try {
    const g = await lease({ layout: Layout.TWITTER, url: process.argv[1], shards: [0, 3] })
    const ids = Array.from(await g.nextIds(1000), String)
    process.stdout.write(JSON.stringify({ shard: g.shard, ids }) + '\\n')
    process.stdin.once('end', () => g.close())
  } catch (e) {
    process.stdout.write(JSON.stringify({ code: e.code }) + '\\n')
    process.stdin.destroy()
  }
})
`

function racer(url) {
  const p = spawn(process.execPath, ['-e', RACER, url], { stdio: ['pipe', 'pipe', 'inherit'] })
  let ready
  const started = new Promise((resolve) => { ready = resolve })
  const answer = new Promise((resolve, reject) => {
    let out = ''
    p.stdout.on('data', (d) => {
      out += d
      if (out.startsWith('ready\n')) {
        ready()
        out = out.slice('ready\n'.length)
      }
      if (out.endsWith('\n')) resolve(JSON.parse(out))
    })
    // 'close', not 'exit': a racer that answered and exited may still have its answer in the pipe.
    p.on('close', (code) => reject(new Error(`racer exited ${code} before answering`)))
  })
  const exited = new Promise((resolve) => p.on('exit', resolve))
  return { p, started, answer, exited }
}

test('four processes race for three shards: each shard once, the fourth NO_FREE_SHARD', addonOnly, async (t) => {
  const url = urlOf(join(scratch(t), 'leases.db'))
  const racers = [0, 1, 2, 3].map(() => racer(url))
  t.after(() => racers.forEach((r) => r.p.kill()))
  await Promise.all(racers.map((r) => r.started)) // every process waiting; then all at once
  for (const r of racers) r.p.stdin.write('go\n')
  const answers = await Promise.all(racers.map((r) => r.answer))
  assert.deepEqual(answers.map((a) => a.shard ?? a.code).sort(), [0, 1, 2, 'NO_FREE_SHARD'])
  const ids = answers.flatMap((a) => a.ids ?? [])
  assert.equal(ids.length, 3000)
  assert.equal(new Set(ids).size, 3000)
  // Released when each holder ends: the shards are free at once, not a time to live later.
  for (const r of racers) r.p.stdin.end()
  assert.deepEqual(await Promise.all(racers.map((r) => r.exited)), [0, 0, 0, 0])
  const { lease } = require('./sqlite.js')
  const { Layout } = require('./index.js')
  const held = await Promise.all([0, 1, 2].map(() => lease({ layout: Layout.TWITTER, url, shards: [0, 3] })))
  assert.deepEqual(held.map((g) => g.shard).sort(), [0, 1, 2])
  await Promise.all(held.map((g) => g.close()))
})

test('release, counters, and a lease taken over stops', addonOnly, async (t) => {
  const { lease } = require('./sqlite.js')
  const { Layout } = require('./index.js')
  const file = join(scratch(t), 'leases.db')
  const url = urlOf(file)
  const a = await lease({ layout: Layout.TWITTER, url, shards: [0, 1], ttlMs: TTL_MS })
  await assert.rejects(lease({ layout: Layout.TWITTER, url, shards: [0, 1] }), (e) => e.code === 'NO_FREE_SHARD' && /every shard in 0\.\.1/.test(e.message))
  const first = await a.nextIds(1000)
  assert.equal(a.stats().held, 1n)
  assert.equal(a.stats().acquisitions, 1n)
  await a.close()
  assert.equal(a.stats().held, 0n)
  // Its ceiling stays: the next holder starts above every ID the last one issued.
  const b = await lease({ layout: Layout.TWITTER, url, shards: [0, 1], ttlMs: TTL_MS })
  assert.ok((await b.nextId()) > first[first.length - 1])
  // Another takes the row over (a holder paused past its time to live would find the same):
  // the next ceiling write finds another token, and the generator stops for good.
  const admin = database(file)
  assert.equal(admin.prepare("UPDATE shardid_leases SET token = 'someone else'").run().changes, 1)
  admin.close()
  await assert.rejects(b.nextIdAt(Date.now() + 3_600_000), (e) => e.code === 'LEASE_LOST')
  await assert.rejects(b.nextIdAt(Date.now() + 3_600_000), (e) => e.code === 'LEASE_LOST')
  assert.equal(b.stats().losses, 1n)
  assert.equal(b.held, false)
  await b.close()
})

test('the same refusals as Python', addonOnly, async (t) => {
  const sqlite = require('./sqlite.js')
  const postgres = require('./postgres.js')
  const { Layout } = require('./index.js')
  const dir = scratch(t)
  const url = urlOf(join(dir, 'leases.db'))
  const layout = Layout.TWITTER
  await assert.rejects(sqlite.lease({ layout, url, shards: [0, 1], kind: 'session' }),
    (e) => e.code === 'UNSUPPORTED' && /SQLite has no advisory locks/.test(e.message))
  await assert.rejects(sqlite.lease({ layout, url: 'postgresql://db/app', shards: [0, 1] }),
    (e) => e.code === 'INVALID_ARGUMENT' && e.argument === 'url')
  await assert.rejects(postgres.lease({ layout, connectionString: url, shards: [0, 1] }),
    (e) => e.code === 'INVALID_ARGUMENT' && /lease from shardid\/sqlite/.test(e.message))
  await assert.rejects(sqlite.lease({ layout, url: urlOf(join(dir, 'missing', 'leases.db')), shards: [0, 1] }),
    (e) => e.code === 'DATABASE_UNREACHABLE')
  await assert.rejects(sqlite.lease({ layout, url: 'sqlite://relative.db', shards: [0, 1] }),
    (e) => e.code === 'INVALID_ARGUMENT')
})
