// Node's shardid/postgres leases, driven by test_lease_postgres.py against its throwaway
// server: `node lease_node.mjs <connection string> <mode> [file]`; prints one JSON line.
//   distinct: four leases (four sessions) hold four shards; a fifth gets NO_FREE_SHARD.
//   hold:     leases shard 0 of [0, 1] of table <file's 2nd arg> with a time to live of <3rd arg>
//             ms and appends IDs to <file> until killed, or until its lease is lost: it then
//             writes <file>.lost and exits.
//   probe:    the 4-process probe of test_lease_pooled.py: leases from [0, 4] of <table>, makes
//             <count> IDs over <seconds>, writes them and the shard to <out>.ids.
//   takenover: another holder's claim changes the row's token: IDs continue within the
//             recorded ceiling, then LEASE_LOST for good.
//   clock:    a holder issues at T0 and goes; its successor is set back 5 s and 400 ms.
//   badtable: the codes of leases on tables that are not plain identifiers, then the code and
//             message of a lease on an empty range of shards.
//   lost:     the server ends a session lease's session: IDs continue within the recorded
//             ceiling, then LEASE_LOST, and the process lives on.
//   stats:    leases table <file> with a time to live of 600 ms, makes IDs for 0.6 s, idles
//             0.7 s, closes, and prints its stats(); test_lease_stats.py compares them with
//             what the server logged. Then a lease with `retake` is taken over: one loss, and
//             one more acquisition at the next ID.
//   closed:   a held shard refuses another session; closed, it is taken again at once and the
//             closed lease makes no ID.
//   skew:     test_lease_skew.py's: run 3 s fast, a lease is refused (code, aheadMs, maxMs).
//   skewrenew: test_lease_skew.py's: <file> is libfaketime's timestamp file; after the claim
//             this host runs 3 s fast, and the next ID after a renewal is refused (code, aheadMs).
//   owner:    test_lease_owner.py's: a lease in schema `app` (its table's schema, then an ID),
//             the search path's table of another role refused (code, argument, message), and a
//             schema that is not a plain name.
import { createRequire } from 'node:module'
import { hold, probe, takenOver } from '../js/lease-modes.mjs'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Layout } = require('./index.js')
const { lease } = require('./postgres.js')

const [connectionString, mode, file, ...rest] = process.argv.slice(2)
const T0 = 1_700_000_000_000
const take = (table, shards, extra = {}) => lease({ layout: Layout.TWITTER, connectionString, shards, table, ...extra })
const code = async (promise) => promise.then(() => 'no error', (err) => err.code)

if (mode === 'badtable') {
  const codes = []
  for (const table of ['Leases', 'leases; DROP TABLE x', '1leases', '']) codes.push(await code(take(table, [0, 4])))
  const empty = await take('leases', [3, 3]).then(() => 'no error', (err) => `${err.code} ${err.message}`)
  console.log(JSON.stringify({ codes, empty }))
} else if (mode === 'lost') {
  const held = await take('node_lost', [0, 1], { kind: 'session' })
  await held.nextIdAt(T0)
  const pg = require('pg')
  const admin = new pg.Client({ connectionString })
  await admin.connect()
  await admin.query('SELECT pg_terminate_backend($1)', [held._connection._conn.processID])
  await admin.end()
  await new Promise((resolve) => setTimeout(resolve, 200))
  const within = await code(held.nextIdAt(T0 + 50))
  const past = await code(held.nextIdAt(T0 + 1000))
  console.log(JSON.stringify({ within, past }))
  await held.close().catch(() => {})
} else if (mode === 'skew') {
  // Run 3 s fast (libfaketime): the claim is refused.
  const refused = await lease({ layout: Layout.TWITTER, connectionString, shards: [0, 1], table: 'node_skew' })
    .then(() => ({ code: 'no error' }), (err) => ({ code: err.code, aheadMs: Number(err.aheadMs), maxMs: Number(err.maxMs) }))
  console.log(JSON.stringify(refused))
} else if (mode === 'skewrenew') {
  // Under libfaketime's timestamp file <file>: claimed in time, then 3 s fast; a renewal stops
  // the lease, and the next ID says why.
  const held = await lease({ layout: Layout.TWITTER, connectionString, shards: [0, 1], table: 'node_skew_renew', ttlMs: 600 })
  await held.nextId()
  require('node:fs').writeFileSync(file, '+3')
  await new Promise((resolve) => setTimeout(resolve, 2500))
  const after = await held.nextId().then(() => ({ code: 'no error' }), (err) => ({ code: err.code, aheadMs: Number(err.aheadMs) }))
  console.log(JSON.stringify(after))
  await held.close().catch(() => {})
} else if (mode === 'owner') {
  const held = await lease({ layout: Layout.TWITTER, connectionString, shards: [0, 1], schema: 'app', table: 'node_owned' })
  const id = String(await held.nextId())
  const schema = held.schema
  await held.close()
  const refused = await lease({ layout: Layout.TWITTER, connectionString, shards: [0, 1] })
    .then(() => 'no error', (err) => `${err.code} ${err.argument} ${err.message}`)
  const badName = await code(lease({ layout: Layout.TWITTER, connectionString, shards: [0, 1], schema: 'App' }))
  console.log(JSON.stringify({ schema, id: id.length > 0, refused, badName }))
} else if (mode === 'closed') {
  const held = await take('node_closed', [0, 1])
  await held.nextId()
  const before = await code(take('node_closed', [0, 1]))
  await held.close()
  const again = await take('node_closed', [0, 1])
  const afterClose = await code(held.nextId())
  await held.close()
  console.log(JSON.stringify({ before, after: again.shard, afterClose }))
  await again.close()
} else if (mode === 'distinct') {
  const held = await Promise.all([0, 1, 2, 3].map(() => take('node_distinct', [0, 4])))
  const fifth = await code(take('node_distinct', [0, 4]))
  const ids = new Set()
  for (const g of held) for (const id of await g.nextIds(10_000)) ids.add(id)
  console.log(JSON.stringify({ shards: held.map((g) => g.shard).sort(), fifth, unique: ids.size }))
  await Promise.all(held.map((g) => g.close()))
} else if (mode === 'hold') {
  const [table, ttl] = rest
  await hold(await take(table, [0, 1], { ttlMs: Number(ttl) }), file)
} else if (mode === 'probe') {
  const [table, seconds, count] = rest
  await probe(await take(table, [0, 4], { layout: Layout.INSTAGRAM }), file, seconds, count)
} else if (mode === 'takenover') {
  await takenOver(await take('node_taken_over', [0, 1]), T0, async () => {
    const pg = require('pg')
    const admin = new pg.Client({ connectionString })
    await admin.connect()
    await admin.query("UPDATE node_taken_over SET token = 'someone else' WHERE layout <> ''")
    await admin.end()
  })
} else if (mode === 'stats') {
  const numbers = (stats) => Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, Number(v)]))
  const held = await take(file, [0, 1], { ttlMs: 600 })
  const types = Object.values(held.stats()).every((v) => typeof v === 'bigint')
  const end = Date.now() + 600
  while (Date.now() < end) await held.nextIds(100)
  await new Promise((resolve) => setTimeout(resolve, 700))
  await held.close()
  const first = numbers(held.stats())
  const again = await take(file, [0, 1], { ttlMs: 600, retake: true })
  await again.nextId()
  const pg = require('pg')
  const admin = new pg.Client({ connectionString })
  await admin.connect()
  await admin.query(`UPDATE ${file} SET token = 'intruder', expires_at = now() - interval '1 second' WHERE layout <> ''`)
  await admin.end()
  const until = Date.now() + 3000
  while (again.stats().held === 1n && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10))
  const lost = numbers(again.stats())
  await again.nextId()
  const retaken = numbers(again.stats())
  await again.close()
  console.log(JSON.stringify({ types, first, lost, retaken, closed: numbers(again.stats()) }))
} else if (mode === 'clock') {
  const first = await take('node_clock', [0, 1])
  let last = 0n
  for (let i = 0; i < 1000; i++) last = await first.nextIdAt(T0 + Math.floor(i / 100))
  await first.close()
  const again = await take('node_clock', [0, 1])
  const back5s = await code(again.nextIdAt(T0 - 5000))
  const back400ms = await code(again.nextIdAt(T0 - 400))
  const later = await again.nextIdAt(T0 + 200)
  console.log(JSON.stringify({ back5s, back400ms, above: later > last }))
  await again.close()
}
