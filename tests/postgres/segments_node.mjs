// Node's shardid/segments, driven by test_segments.py against its throwaway server:
// `node segments_node.mjs <connection string> <mode>`; prints one JSON line.
//   order:   IDs from nextId / nextIds / the async forms increase and are dense; close() gives
//            the rest back, so a new allocator continues at the next number.
//   burst:   64 nextIdAsync() at once on a fresh tag: one fetch, no error.
//   unknown: a tag never created rejects with UNKNOWN_TAG.
//   bad:     a bad tag and a bad schema name are INVALID_ARGUMENT.
//   down:    (the server stops while this runs) SEGMENT_UNAVAILABLE, then IDs again.
//   ddl:     the DDL from Node (ddl() of shardid/segments), plain and for ticket server 1 of 2.
//   two:     <connection string> is a JSON list of two ticket servers (server 0 and 1 of 2):
//            IDs from both, none twice; a third list entry that is down costs nothing.
//   entry:   createTag, createSerial and new Dictionary(...).create() (tests/js/entry-points.mjs),
//            schemas seg_entry and dict_entry.
//   exported: a prom-client registry's text (shardid/prometheus) shows the allocator's fetches
//            under {schema, tag} while it is open, and nothing of it once closed.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { denseIds, ddl } = require('./segments.js')
const { ShardIdError } = require('./index.js')

const [connectionString, mode] = process.argv.slice(2)
const code = async (promise) => promise.then(() => 'no error', (err) => (err instanceof ShardIdError ? err.code : String(err)))
const open = (tag, more) => denseIds({ connectionString, tag, schema: 'seg_node', ...more })

if (mode === 'order') {
  const ids = await open('n_order', { minSize: 100, maxSize: 100 })
  const got = []
  // Segments of 100 (the row remembers it): the synchronous calls stay within the first, the
  // async ones cross several, waiting for each fetch.
  for (let i = 0; i < 50; i++) got.push(ids.nextId())
  got.push(...(await ids.nextIdsAsync(200)))
  for (let i = 0; i < 50; i++) got.push(await ids.nextIdAsync())
  await ids.close()
  const stats = ids.stats() // after close: a prefetch under way is counted too
  const again = await open('n_order')
  const next = again.nextId()
  await again.close()
  const dense = got.every((id, i) => id === BigInt(i + 1))
  console.log(JSON.stringify({ count: got.length, dense, next: String(next), skipped: String(ids.skipped), closed: await code(Promise.resolve().then(() => ids.nextId())), stats: Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : 'not a bigint'])), fetches: ids.fetches }))
} else if (mode === 'burst') {
  const ids = await open('n_burst')
  const got = await Promise.all(Array.from({ length: 64 }, () => ids.nextIdAsync()))
  console.log(JSON.stringify({ unique: new Set(got).size, fetches: ids.fetches, counted: Number(ids.stats().fetches) }))
  await ids.close()
} else if (mode === 'unknown') {
  console.log(JSON.stringify({ code: await code(open('never_created')) }))
} else if (mode === 'bad') {
  const codes = [await code(open('')), await code(denseIds({ connectionString, tag: 'a', schema: 'Seg' }))]
  console.log(JSON.stringify({ codes }))
} else if (mode === 'ddl') {
  console.log(JSON.stringify({ plain: ddl('seg_from_node'), ticket: ddl('seg_ticket', { servers: 2, index: 1 }), default: ddl() }))
} else if (mode === 'two') {
  const servers = JSON.parse(connectionString)
  const ids = await denseIds({ connectionString: servers, tag: 'n_two', schema: 'seg_two', minSize: 50, maxSize: 50 })
  const got = await ids.nextIdsAsync(3000)
  await ids.close()
  const residues = [...new Set(Array.from(got, (id) => Number(id % 2n)))].sort()
  console.log(JSON.stringify({ unique: new Set(got).size, residues, fetches: ids.fetches > 10 }))
} else if (mode === 'entry') {
  const { entryPoints } = await import('../js/entry-points.mjs')
  console.log(JSON.stringify(await entryPoints(connectionString, { seg: 'seg_entry', dict: 'dict_entry' })))
} else if (mode === 'exported') {
  const promClient = require('prom-client')
  const registry = new promClient.Registry()
  require('./prometheus.js').register(registry)
  const scraped = async () => (await registry.metrics()).split('\n').filter((line) => line.startsWith('shardid_segment_fetches_total{') && line.includes('tag="n_export"'))
  const ids = await open('n_export', { minSize: 10, maxSize: 10 })
  const got = await ids.nextIdsAsync(45) // segments of 10: several fetches
  const open_ = await scraped()
  const stats = ids.stats()
  await ids.close()
  console.log(JSON.stringify({ ids: got.length, fetches: Number(stats.fetches), open: open_, closed: await scraped() }))
} else if (mode === 'down') {
  const ids = await open('n_down', { minSize: 10, maxSize: 10, waitMs: 300 })
  process.stdout.write('ready\n')
  // The test stops the server now; use IDs until the segments run out.
  let down = 'none'
  const started = Date.now()
  while (Date.now() - started < 20_000) {
    try {
      ids.nextId()
    } catch (err) {
      if (err.code === 'SEGMENT_UNAVAILABLE') { down = err.code; break }
      throw err
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  process.stdout.write(`${down}\n`)
  // The test starts the server again: IDs resume without a restart.
  ids.waitMs = 20_000
  const later = await ids.nextIdsAsync(30)
  process.stdout.write(JSON.stringify({ down, resumed: later.length, increasing: later.every((v, i) => i === 0 || v > later[i - 1]) }) + '\n')
  await ids.close()
}
