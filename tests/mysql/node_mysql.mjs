// Node's shardid/segments, shardid/dictionary and shardid/mysql on MariaDB (mysql2), driven by
// test_node.py against its throwaway server: `node node_mysql.mjs <url> <mode> [args]`; prints
// one JSON line.
import { createRequire } from 'node:module'
import { appendFileSync } from 'node:fs'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { denseIds } = require('./segments.js')
const { Dictionary } = require('./dictionary.js')
const mysql = require('./mysql.js')
const { ShardIdError, Layout } = require('./index.js')

const [url, mode, ...args] = process.argv.slice(2)
const code = async (promise) => promise.then(() => 'no error', (err) => (err instanceof ShardIdError ? err.code : `${err.code}: ${err.message}`))
const print = (value) => console.log(JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v)))
// The lines of a prom-client registry's text (shardid/prometheus) of `metric` with `label`.
const registry = new (require('prom-client').Registry)()
require('./prometheus.js').register(registry)
const exported = async (metric, label) => (await registry.metrics()).split('\n').filter((line) => line.startsWith(`${metric}{`) && line.includes(label))

if (mode === 'seg_order') {
  const open = (more) => denseIds({ connectionString: url, tag: 'n_order', schema: 'seg_node', ...more })
  const ids = await open({ minSize: 100, maxSize: 100 })
  const got = []
  for (let i = 0; i < 50; i++) got.push(ids.nextId())
  got.push(...(await ids.nextIdsAsync(200)))
  for (let i = 0; i < 50; i++) got.push(await ids.nextIdAsync())
  await ids.close()
  const again = await open()
  const next = again.nextId()
  await again.close()
  const dense = got.every((id, i) => id === BigInt(i + 1))
  print({ count: got.length, dense, next, skipped: ids.skipped, closed: await code(Promise.resolve().then(() => ids.nextId())) })
} else if (mode === 'seg_burst') {
  const ids = await denseIds({ connectionString: url, tag: 'n_burst', schema: 'seg_node' })
  const got = await Promise.all(Array.from({ length: 64 }, () => ids.nextIdAsync()))
  // Reported while open (its stats(), under schema and tag), not once closed.
  const open = await exported('shardid_segment_fetches_total', 'tag="n_burst"')
  const counted = ids.stats().fetches
  await ids.close()
  const closed = await exported('shardid_segment_fetches_total', 'tag="n_burst"')
  print({ unique: new Set(got).size, fetches: ids.fetches, min: got.reduce((a, b) => (a < b ? a : b)), exported: { open, counted, closed } })
} else if (mode === 'seg_errors') {
  const codes = {
    unknown: await code(denseIds({ connectionString: url, tag: 'never_created', schema: 'seg_node' })),
    tag: await code(denseIds({ connectionString: url, tag: '', schema: 'seg_node' })),
    schema: await code(denseIds({ connectionString: url, tag: 'a', schema: 'Seg' })),
    url: await code(denseIds({ connectionString: 'mysql://h:99999/seg', tag: 'a', schema: 'seg_node' })),
    mixed: await code(denseIds({ connectionString: [url, 'postgresql://h/d'], tag: 'a', schema: 'seg_node' })),
    down: await code(denseIds({ connectionString: 'mysql://root@127.0.0.1:1/seg_node', tag: 'n_order', schema: 'seg_node', waitMs: 500 })),
  }
  print(codes)
} else if (mode === 'seg_many') {
  // IDs of one tag from this process, written to a file for the test to check with others'.
  const [tag, out, n] = args
  const ids = await denseIds({ connectionString: url, tag, schema: 'seg_mixed', minSize: 20, maxSize: 500, targetMs: 100, waitMs: 60000 })
  const got = await ids.nextIdsAsync(Number(n))
  appendFileSync(out, Buffer.from(new BigInt64Array(got.map((v) => BigInt.asIntN(64, v))).buffer))
  await ids.close()
  print({ count: got.length })
} else if (mode === 'first') {
  // The first ID of a new client of <tag> in <schema> (segments of 100).
  const [schema, tag] = args
  const ids = await denseIds({ connectionString: url, tag, schema, minSize: 100, maxSize: 100 })
  const first = ids.nextId()
  await ids.close()
  print({ first })
} else if (mode === 'id') {
  // The ID of one string of <topic> in <schema>.
  const [schema, topic, value] = args
  const words = new Dictionary({ connectionString: url, topic, schema, cacheSize: 0 })
  const id = await words.id(value)
  await words.close()
  print({ id })
} else if (mode === 'not_mysql') {
  const started = Date.now()
  const segments = await code(denseIds({ connectionString: url, tag: 'a', schema: 'seg_node' }))
  const words = new Dictionary({ connectionString: url, topic: 't', schema: 'dict_node' })
  const dictionary = await code(words.ids(['a']))
  await words.close()
  print({ segments, dictionary, fast: Date.now() - started < 10_000 })
} else if (mode === 'entry') {
  // createTag, createSerial and new Dictionary(...).create(), as on PostgreSQL (tests/js/entry-points.mjs).
  const { entryPoints } = await import('../js/entry-points.mjs')
  print(await entryPoints(url, { seg: 'seg_entry', dict: 'dict_entry' }))
} else if (mode === 'dict_basic') {
  const words = new Dictionary({ connectionString: url, topic: 'n_words', schema: 'dict_node', cacheSize: 0 })
  await words.create()
  const folded = ['a', 'A', 'a ', 'á', "x'); DROP TABLE dict_node.shardid_strings; --", '😀'.repeat(512)]
  const ids = await words.ids([...folded, 'a'])
  const lookup = await words.lookup(['A', 'never'])
  const values = await words.values([...ids.slice(0, 6), 99n])
  const nope = new Dictionary({ connectionString: url, topic: 'nope', schema: 'dict_node' })
  const unknown = await code(nope.ids(['a']))
  await nope.close()
  const bad = await code(words.ids(['fine', '']))
  // Concurrent calls on one connection: each waits for the one before (a call may be a
  // transaction).
  const together = await Promise.all([words.ids(['c1', 'c2']), words.lookup(['c1']), words.ids(['c2', 'c3'])])
  await words.drop()
  const dropped = await code(words.ids(['brand new']))
  const still = await words.ids(['a'])
  const open = await exported('shardid_dictionary_statements_total', 'topic="n_words"')
  const counted = words.stats().statements
  await words.close()
  const closed = await exported('shardid_dictionary_statements_total', 'topic="n_words"')
  print({ exported: { open, counted, closed }, ids, lookup, same: values.slice(0, 6).every((v, i) => v === folded[i]), missing: values[6], unknown, bad, together, dropped, still })
} else if (mode === 'dict_writer') {
  // Batches of overlapping strings, each batch's [values, ids] a line of the output file.
  const [topic, out, seed, batches] = args
  let state = Number(seed) + 1
  const rand = (n) => { state = (state * 1103515245 + 12345) % 2147483648; return state % n }
  const words = new Dictionary({ connectionString: url, topic, schema: 'dict_mixed', cacheSize: Number(seed) % 2 * 1000 })
  for (let b = 0; b < Number(batches); b++) {
    const values = Array.from({ length: 1 + rand(59) }, () => `s${rand(3000)}`)
    const ids = await words.ids(values)
    appendFileSync(out, JSON.stringify([topic, values, ids.map(String)]) + '\n')
  }
  await words.close()
  print({ batches: Number(batches) })
} else if (mode === 'ddl') {
  print({
    nextId: mysql.ddl({ layout: Layout.INSTAGRAM, shard: 5, schema: 'insta5' }),
    segments: mysql.segmentsDdl('seg', { servers: 2, index: 1 }),
    dictionary: mysql.dictionaryDdl('dict'),
    statements: mysql.statements(mysql.segmentsDdl('seg')).length,
    bad: await code(Promise.resolve().then(() => mysql.ddl({ layout: Layout.INSTAGRAM, shard: 5, schema: 'x; DROP' }))),
  })
} else if (mode === 'bigints') {
  const mysql2 = require('mysql2/promise')
  const u = mysql.parseUrl(url)
  const plain = await mysql2.createConnection({ host: u.host, port: u.port, user: u.user })
  const exact = await mysql2.createConnection({ host: u.host, port: u.port, user: u.user, ...mysql.exactBigints })
  const sql = 'SELECT 9007199254740993 AS id'
  const [[a]] = await plain.query(sql)
  const [[b]] = await exact.query(sql)
  await plain.end()
  await exact.end()
  print({ plain: String(a.id), exact: BigInt(b.id) })
}
