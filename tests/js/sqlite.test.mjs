// SQLite (a sqlite:/// URL): dense IDs, serials and the dictionary of several processes and
// threads on one file with tiny segments, a process SIGKILLed mid-run, IDs past 2^53, and the
// errors of a file that cannot be used. No server: each test makes its own file in a
// temporary directory. On better-sqlite3 in the suite; tests/js/run.sh runs this file again
// under Node 22 in the packed package with no better-sqlite3 installed, on Node's own
// node:sqlite (SHARDID_SQLITE_DRIVER=node:sqlite says which driver the run is for).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, openSync, closeSync, rmSync, writeFileSync, chmodSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { database, driverName, query } from './sqlite-driver.mjs'

const addonOnly = { skip: process.env.SHARDID_JS_MODULE ? 'SQLite is in the Node addon only' : false }
const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const worker = fileURLToPath(new URL('./sqlite-worker.mjs', import.meta.url))

function scratch(t) {
  const dir = mkdtempSync(join(tmpdir(), 'shardid-sqlite-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const urlOf = (file) => `sqlite:///${file}` // an absolute path: four slashes

// A child process of sqlite-worker.mjs: its JSON lines once it exits 0.
function child(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [worker, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    p.stdout.on('data', (d) => { out += d })
    p.stderr.on('data', (d) => { err += d })
    p.on('exit', (code) => (code === 0 ? resolve(out.trim().split('\n').map((l) => JSON.parse(l))) : reject(new Error(`worker ${args} exited ${code}: ${err}`))))
  })
}

function thread(args) {
  return new Promise((resolve, reject) => {
    const w = new Worker(worker, { workerData: args })
    const got = []
    w.on('message', (m) => got.push(m))
    w.on('error', reject)
    w.on('exit', (code) => (code === 0 ? resolve(got) : reject(new Error(`thread exited ${code}`))))
  })
}


test('the package runs on the SQLite driver this run is for', addonOnly, () => {
  assert.equal(driverName(), process.env.SHARDID_SQLITE_DRIVER ?? 'better-sqlite3')
})

test('processes and threads on one file with tiny segments hand out every dense ID once', addonOnly, async (t) => {
  const { createTag, denseIds } = require('./segments.js')
  const file = join(scratch(t), 'ids.db')
  await createTag(urlOf(file), 'orders')
  await createTag(urlOf(file), 'orders') // again: nothing
  // The tag remembers the last size taken: tiny from the first take of the workers on.
  const warm = await denseIds({ connectionString: urlOf(file), tag: 'orders', minSize: 1, maxSize: 2, targetMs: 1 })
  const first = await warm.nextIdsAsync(1002)
  await warm.close()
  const n = 150
  const runs = await Promise.all([
    ...[0, 1, 2, 3].map(() => child(['dense', urlOf(file), 'orders', String(n)])),
    ...[0, 1].map(() => thread(['dense', urlOf(file), 'orders', String(n)])),
  ])
  const all = [...Array.from(first, String), ...runs.flatMap(([r]) => r.ids)]
  assert.equal(new Set(all).size, all.length, 'no ID twice')
  assert.equal(all.length, 1002 + 6 * n)
  for (const [r] of runs) assert.ok(r.fetches >= n / 3, `tiny segments: ${r.fetches} fetches for ${n} IDs`)
  const [{ next }] = query(file, "SELECT next FROM shardid_tags WHERE tag = 'orders'")
  assert.ok(all.every((id) => BigInt(id) >= 1n && BigInt(id) < next), 'every ID below the next one the file hands out')
})

test('the dictionary of several processes numbers every string once, its IDs exactly 0..n-1', addonOnly, async (t) => {
  const { Dictionary } = require('./dictionary.js')
  const file = join(scratch(t), 'dict.db')
  const d = new Dictionary(urlOf(file), 'words')
  await d.create()
  await d.create() // again: nothing
  const runs = await Promise.all([1, 2, 3].map((seed) => child(['words', urlOf(file), 'words', String(seed), '15'])))
  const byWord = new Map()
  for (const [r] of runs) {
    for (const [word, id] of Object.entries(r.words)) {
      if (byWord.has(word)) assert.equal(byWord.get(word), id, `${word}: one ID in every process`)
      byWord.set(word, id)
    }
  }
  const ids = [...byWord.values()].map(Number).sort((a, b) => a - b)
  assert.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => i), 'dense from 0, no hole, none twice')
  const [{ next }] = query(file, "SELECT next FROM shardid_topics WHERE topic = 'words'")
  assert.equal(next, BigInt(ids.length))
  // Read back, from the cache and from the file.
  const [word, id] = [...byWord.entries()][7]
  assert.deepEqual(await d.values([BigInt(id), 10n ** 6n]), [word, null])
  assert.deepEqual(await d.lookup([word, 'never-seen']), [BigInt(id), null])
  const stats = d.stats()
  assert.equal(stats.statements, 4n, 'create twice, values, lookup: one statement each as counted elsewhere')
  await d.drop()
  await assert.rejects(d.ids(['brand-new']), { code: 'TOPIC_DROPPED' })
  assert.deepEqual(await d.lookup([word]), [BigInt(id)], 'a dropped topic stays readable')
  await d.close()
  const other = new Dictionary(urlOf(file), 'nobody-made-this')
  await assert.rejects(other.ids(['x']), { code: 'UNKNOWN_TOPIC' })
  await other.close()
})

test('serials of several processes across a scripted midnight are never twice', addonOnly, async (t) => {
  const { createSerial, serials } = require('./segments.js')
  const file = join(scratch(t), 'serials.db')
  const format = 'S-{yyyy}{MM}{dd}-{seq:6}'
  await createSerial(urlOf(file), 'inv', format, { zone: 'UTC' })
  await createSerial(urlOf(file), 'inv', format, { zone: 'UTC' }) // again alike: nothing
  await assert.rejects(createSerial(urlOf(file), 'inv', format, { zone: 'Europe/Paris' }), { code: 'SERIAL_MISMATCH' })
  await assert.rejects(createSerial(urlOf(file), 'inv2', format, { zone: 'UTC' }), { code: 'SERIAL_MISMATCH' }, 'a format another tag prints')
  await assert.rejects(serials({ connectionString: urlOf(file), tag: 'nope', format, zone: 'UTC' }), { code: 'UNKNOWN_TAG' })
  const n = 40
  const runs = await Promise.all([0, 1, 2].map(() => child(['serials', urlOf(file), 'inv', String(n)])))
  const all = runs.flatMap(([r]) => r.serials)
  assert.equal(new Set(all).size, all.length, 'no serial twice')
  const days = new Map()
  for (const s of all) {
    const [, day, number] = s.split('-')
    days.set(day, [...(days.get(day) ?? []), Number(number)])
  }
  assert.deepEqual([...days.keys()].sort(), ['20310501', '20310502'])
  for (const numbers of days.values()) {
    assert.equal(Math.min(...numbers), 1, 'each day starts at 1')
    assert.ok(Math.max(...numbers) <= numbers.length + 9, 'the few numbers given back are few')
  }
})

test('a process SIGKILLed mid-run loses nothing and repeats nothing', addonOnly, async (t) => {
  const { createTag, denseIds } = require('./segments.js')
  const { Dictionary } = require('./dictionary.js')
  const file = join(scratch(t), 'killed.db')
  await createTag(urlOf(file), 'k')
  const d = new Dictionary(urlOf(file), 'kw')
  await d.create()
  const ids = []
  const words = {}
  await new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [worker, 'forever', urlOf(file), 'k', 'kw'], { stdio: ['ignore', 'pipe', 'inherit'] })
    let buffer = ''
    p.stdout.on('data', (chunk) => {
      buffer += chunk
      const lines = buffer.split('\n')
      buffer = lines.pop()
      for (const line of lines) {
        const m = JSON.parse(line)
        if (m.id) ids.push(m.id)
        if (m.words) Object.assign(words, m.words)
      }
      if (ids.length >= 1200) p.kill('SIGKILL') // mid-run: a take or a batch may be under way
    })
    p.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`exited without the kill (${signal})`))))
  })
  assert.equal(new Set(ids).size, ids.length)
  // Another process goes on from the file: above every ID handed out, and the dictionary's
  // numbering dense, each string the child was answered keeping its ID.
  const after = await denseIds({ connectionString: urlOf(file), tag: 'k' })
  const next = await after.nextIdAsync()
  await after.close()
  assert.ok(ids.every((id) => BigInt(id) < next), `the next ID ${next} is above all the killed process's`)
  const rows = query(file, "SELECT s.value, s.id FROM shardid_strings s JOIN shardid_topics t USING (topic_id) WHERE t.topic = 'kw' ORDER BY s.id")
  assert.deepEqual(rows.map((r) => Number(r.id)), rows.map((_, i) => i), 'IDs exactly 0..n-1')
  const [{ next: topicNext }] = query(file, "SELECT next FROM shardid_topics WHERE topic = 'kw'")
  assert.equal(topicNext, BigInt(rows.length))
  const stored = new Map(rows.map((r) => [r.value, String(r.id)]))
  for (const [w, id] of Object.entries(words)) assert.equal(stored.get(w), id, w)
  assert.deepEqual(await d.ids(['after-the-kill']), [BigInt(rows.length)])
  await d.close()
})

test('IDs past 2^53 come back exact, from segments and from the dictionary', addonOnly, async (t) => {
  const { createTag, denseIds } = require('./segments.js')
  const { Dictionary } = require('./dictionary.js')
  const file = join(scratch(t), 'big.db')
  await createTag(urlOf(file), 'big')
  const d = new Dictionary(urlOf(file), 'big')
  await d.create()
  // Odd, past 2^53: a double would round it.
  const start = 2n ** 62n + 1n
  const db = database(file)
  db.prepare("UPDATE shardid_tags SET next = ? WHERE tag = 'big'").run(start)
  db.prepare("UPDATE shardid_topics SET next = ? WHERE topic = 'big'").run(start)
  db.close()
  const ids = await denseIds({ connectionString: urlOf(file), tag: 'big' })
  assert.deepEqual([await ids.nextIdAsync(), await ids.nextIdAsync()], [start, start + 1n])
  await ids.close()
  const [{ next }] = query(file, "SELECT next FROM shardid_tags WHERE tag = 'big'")
  assert.equal(next, start + 2n, 'the unused rest given back, exactly')
  assert.deepEqual(await d.ids(['a', 'b', 'a']), [start, start + 1n, start])
  assert.deepEqual(await d.values([start + 1n, start]), ['b', 'a'])
  assert.deepEqual(await d.lookup(['b']), [start + 1n])
  await d.close()
})

test('a tag whose numbers would pass 2^63 - 1 is SEGMENT_UNAVAILABLE naming TAG_EXHAUSTED, in the core\'s words as Python says it', addonOnly, async (t) => {
  const { createTag, denseIds } = require('./segments.js')
  const file = join(scratch(t), 'exhausted.db')
  await createTag(urlOf(file), 'end')
  const db = database(file)
  db.prepare("UPDATE shardid_tags SET next = ? WHERE tag = 'end'").run(2n ** 63n - 8n)
  db.close()
  await assert.rejects(denseIds({ connectionString: urlOf(file), tag: 'end', waitMs: 300 }), (err) => {
    assert.equal(err.code, 'SEGMENT_UNAVAILABLE')
    assert.match(err.message, /no segment of tag end: TAG_EXHAUSTED: the numbers of the tag would pass 2\^63 - 1: SI002$/)
    return true
  })
})

test('a file that cannot be used is refused with the kind the other databases use', addonOnly, async (t) => {
  const { createTag, denseIds, createSerial } = require('./segments.js')
  const { Dictionary } = require('./dictionary.js')
  const dir = scratch(t)
  // A missing directory: the database cannot be reached.
  const missing = urlOf(join(dir, 'no', 'such', 'x.db'))
  await assert.rejects(createTag(missing, 'a'), { code: 'DATABASE_UNREACHABLE', message: /does not exist/ })
  await assert.rejects(denseIds({ connectionString: missing, tag: 'a' }), { code: 'DATABASE_UNREACHABLE' })
  const lost = new Dictionary(missing, 'a')
  await assert.rejects(lost.ids(['x']), { code: 'DATABASE_UNREACHABLE' })
  await lost.close()
  // A file that is not a SQLite database.
  const junk = join(dir, 'junk.db')
  writeFileSync(junk, 'this is not a database, it is a text file of some length'.repeat(40))
  await assert.rejects(createTag(urlOf(junk), 'a'), (err) => err.code === 'DATABASE_UNREACHABLE' && /not a SQLite database/.test(err.message) && err.cause !== undefined)
  await assert.rejects(createSerial(urlOf(junk), 'a', 'A-{seq:4}', { zone: 'UTC' }), { code: 'DATABASE_UNREACHABLE' })
  // URLs: in-memory, a host, a query string, two files for ticket servers, another schema.
  for (const url of ['sqlite://', 'sqlite:///:memory:', 'sqlite://host/x.db', `${urlOf(junk)}?mode=ro`]) {
    await assert.rejects(createTag(url, 'a'), { code: 'INVALID_ARGUMENT', argument: 'url' }, url)
    assert.throws(() => new Dictionary(url, 'a'), { code: 'INVALID_ARGUMENT', argument: 'connectionString' }, url)
  }
  const ok = urlOf(join(dir, 'ok.db'))
  await assert.rejects(createTag([ok, urlOf(join(dir, 'ok2.db'))], 'a'), { code: 'INVALID_ARGUMENT', message: /no ticket servers/ })
  await assert.rejects(createTag(ok, 'a', { schema: 'seg' }), { code: 'INVALID_ARGUMENT', argument: 'schema' })
  await assert.rejects(require('./postgres.js').lease({ layout: require('./index.js').Layout.TWITTER, connectionString: ok, shards: [0, 4] }), { code: 'INVALID_ARGUMENT', message: /lease from shardid\/sqlite/ })
  await assert.rejects(denseIds({ connectionString: ok, tag: 'never-created' }), { code: 'UNKNOWN_TAG' })
  // `shardid status` reads the file (opened read-only) and a caller's handle: the tag made above
  // is in both reports.
  await createTag(ok, 'seen')
  const status = await require('./status.js').main(['status', ok])
  assert.equal(status.code, 0, status.stderr)
  assert.match(status.stdout, /seen/)
  const tags = (report) => report.tags.rows.map((t) => t.tag)
  assert.ok(tags(await require('./status.js').read(ok)).includes('seen'))
  const handle = database(join(dir, 'ok.db'), { readonly: true })
  assert.ok(tags(await require('./status.js').read(handle)).includes('seen'))
  handle.close()
  // `shardid restored` writes its marks through the same driver (statements with no rows).
  const restored = await require('./status.js').main(['restored', ok])
  assert.equal(restored.code, 0, restored.stderr)
  assert.match(restored.stdout, /marked restored: 1 tag, 0 topics/)
})

test('a read-only file is DATABASE_UNREACHABLE and a lock held past the busy timeout the driver\'s SQLITE_BUSY', addonOnly, async (t) => {
  const { createTag } = require('./segments.js')
  const sqlite = require('./dialects/sqlite.js')
  const dir = scratch(t)
  const file = join(dir, 'ro.db')
  await createTag(urlOf(file), 'a')
  // Read-only: by its mode, or (as root, whom modes do not stop) its immutable flag.
  chmodSync(file, 0o444)
  let writable = true
  try {
    closeSync(openSync(file, 'r+'))
  } catch {
    writable = false
  }
  let immutable = false
  if (writable) {
    try {
      execFileSync('chattr', ['+i', file], { stdio: 'ignore' })
      immutable = true
      writable = false
    } catch {
      // No chattr, or a filesystem without the flag.
    }
  }
  try {
    if (writable) {
      t.diagnostic('the file stays writable here (root without chattr): the read-only case is not run')
    } else {
      await assert.rejects(createTag(urlOf(file), 'b'), (err) => err.code === 'DATABASE_UNREACHABLE' && /read-only/.test(err.message))
    }
  } finally {
    if (immutable) execFileSync('chattr', ['-i', file], { stdio: 'ignore' }) // the scratch directory can go
  }
  // Another connection holds the write lock (BEGIN IMMEDIATE) past a busy timeout of 50 ms.
  const busyFile = join(dir, 'busy.db')
  await createTag(urlOf(busyFile), 'a')
  const holder = database(busyFile)
  holder.exec('BEGIN IMMEDIATE')
  try {
    const conn = await sqlite.opener(urlOf(busyFile), 'test', { timeoutMs: 50 })()
    try {
      // The driver's own error: better-sqlite3's code SQLITE_BUSY; node:sqlite's ERR_SQLITE_ERROR
      // with SQLite's result code in `errcode` (5, SQLITE_BUSY).
      const busy = driverName() === 'better-sqlite3'
        ? (err) => err.code === 'SQLITE_BUSY'
        : (err) => err.code === 'ERR_SQLITE_ERROR' && (err.errcode & 0xff) === 5 && err.errstr === 'database is locked'
      // The core's take run on this connection: the driver's error is its answer, as it was raised.
      const { execute } = require('./dialects/index.js')
      const link = { dialect: sqlite, use: (fn) => fn(conn), run: (text, values) => sqlite.row(conn, text, values) }
      const protocol = new (require('./native.generated.js').SegmentProtocol)('sqlite', 'main', 1)
      const { step, error: err } = await execute(protocol, (p) => p.take('a', '5'), [link], sqlite.segments('main').ready)
      assert.ok(step.step === 'failed' && step.driver && busy(err) && /locked/.test(err.message) && sqlite.code(err) === 'SQLITE_BUSY', err)
    } finally {
      conn.close()
    }
  } finally {
    holder.exec('ROLLBACK')
    holder.close()
  }
})

test('without better-sqlite3 or node:sqlite a sqlite:/// URL says which package to install', addonOnly, async (t) => {
  const dir = scratch(t)
  // A process in which neither driver can be loaded (as in a project that installed neither,
  // on a Node before 22.5).
  const hide = join(dir, 'hide.cjs')
  writeFileSync(hide, `
    const Module = require('node:module')
    // _load, not _resolveFilename: Node 22 loads a node: built-in without resolving it.
    const load = Module._load
    Module._load = function (request, ...rest) {
      if (request === 'better-sqlite3' || request === 'node:sqlite') {
        const err = new Error('Cannot find module ' + request)
        err.code = 'MODULE_NOT_FOUND'
        throw err
      }
      return load.call(this, request, ...rest)
    }
  `)
  const script = `
    const { createTag } = require(${JSON.stringify(require.resolve('./segments.js'))})
    createTag(${JSON.stringify(urlOf(join(dir, 'x.db')))}, 'a').then(
      () => console.log('{}'),
      (err) => console.log(JSON.stringify({ code: err.code, message: err.message })))
  `
  const out = await new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--require', hide, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    p.stdout.on('data', (d) => { text += d })
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text)) : reject(new Error(`exited ${code}`))))
  })
  assert.equal(out.code, 'UNSUPPORTED')
  assert.match(out.message, /npm install better-sqlite3/)
})
