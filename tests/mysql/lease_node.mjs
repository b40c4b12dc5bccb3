// Node's shardid/mysql leases (mysql2), driven by test_lease.py and test_galera.py against their
// throwaway servers: `node lease_node.mjs <url> <mode> [args]`; prints one JSON line.
//   probe <out> <table> <seconds> <count> <first> <end>: leases from [first, end] of <table>,
//             makes <count> IDs over <seconds>, writes them and the shard to <out>.ids.
//   hold <out> <table> <ttl>: leases shard 0 of [0, 1] with a time to live of <ttl> ms and
//             appends IDs to <out> until killed, or until its lease is lost: it then writes
//             <out>.lost and exits.
//   takenover: another holder's claim changes the row's token: IDs continue within the
//             recorded ceiling, then LEASE_LOST for good.
//   bad:      the codes of bad tables, an empty range, a range past the layout's shards, bad
//             URLs, a bad kind.
//   session <table>: the code and message of a session lease (UNSUPPORTED on a Galera node).
//   exit <table>: takes a lease and returns: the process must exit on its own.
//   refused <table> <refusals>: leases shard 0 of [0, 1] and asks for one ID, its connection
//             refusing the first <refusals> ceiling records (Galera's 1180): the code and
//             message (or 'no error'), and the refusals left.
import { createRequire } from 'node:module'
import { hold, probe, takenOver } from '../js/lease-modes.mjs'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Layout } = require('./index.js')
const { lease } = require('./mysql.js')

const [url, mode, ...rest] = process.argv.slice(2)
const T0 = 1_700_000_000_000
const take = (table, shards, extra = {}) => lease({ layout: Layout.TWITTER, url, shards, table, ...extra })
const code = async (promise) => promise.then(async (g) => { await g?.close?.(); return 'no error' }, (err) => err.code)

if (mode === 'probe') {
  const [out, table, seconds, count, first, end] = rest
  const g = await take(table, [Number(first), Number(end)], { layout: Layout.INSTAGRAM })
  await probe(g, out, seconds, count)
  console.log(JSON.stringify({ shard: g.shard }))
} else if (mode === 'hold') {
  const [out, table, ttl] = rest
  await hold(await take(table, [0, 1], { ttlMs: Number(ttl) }), out)
} else if (mode === 'takenover') {
  await takenOver(await take('node_taken_over', [0, 1]), T0, async () => {
    const mysql = require('mysql2/promise')
    const u = new URL(url)
    const admin = await mysql.createConnection({ host: u.hostname, port: Number(u.port), user: 'root', database: u.pathname.slice(1) })
    await admin.query("UPDATE node_taken_over SET token = 'someone else' WHERE layout <> ''")
    await admin.end()
  })
} else if (mode === 'bad') {
  const tables = []
  for (const table of ['Leases', 'leases; DROP TABLE x', '1leases', '']) tables.push(await code(take(table, [0, 4])))
  const empty = await code(take('leases', [3, 3]))
  const past = await code(take('leases', [0, 1025]))
  const urls = []
  for (const bad of ['mysql://root@[::1/db', 'mysql://h:99999/db', 'postgresql://h/db', 42]) {
    urls.push(await code(lease({ layout: Layout.TWITTER, url: bad, shards: [0, 1] })))
  }
  const kind = await code(take('leases', [0, 1], { kind: 'advisory' }))
  console.log(JSON.stringify({ tables, empty, past, urls, kind }))
} else if (mode === 'session') {
  const [table] = rest
  const got = await take(table, [0, 4], { kind: 'session' }).then(async (g) => { await g.close(); return { code: 'no error', message: '' } }, (err) => ({ code: err.code, message: err.message }))
  console.log(JSON.stringify(got))
} else if (mode === 'refused') {
  // The lease's connection refuses its first <refusals> ceiling records as a surviving Galera
  // node did while the cluster evicted a killed one (seen in CI): mysql2's error for it. No
  // real server can be made to (a trigger that raised it would hide the statement's last
  // insert ID, by which the lease reads its answers).
  const [table, refusals] = rest
  const g = await take(table, [0, 1])
  const connection = g._connection
  const run = connection.run.bind(connection)
  let left = Number(refusals)
  connection.run = async (text, values) => {
    if (text.startsWith(`UPDATE \`${table}\` SET ceiling = CAST(LAST_INSERT_ID(GREATEST(`) && left > 0) {
      left--
      const message = 'Error while appending streaming replication fragment(provider status: Not connected to Primary Component)'
      throw Object.assign(new Error(message), { code: 'ER_ERROR_DURING_COMMIT', errno: 1180, sqlState: 'HY000', sqlMessage: message })
    }
    return run(text, values)
  }
  const got = await g.nextId().then(() => ({ code: 'no error', message: '' }), (err) => ({ code: err.code, message: err.message }))
  await g.close()
  console.log(JSON.stringify({ ...got, left }))
} else if (mode === 'exit') {
  const [table] = rest
  const g = await take(table, [0, 4])
  await g.nextId()
  console.log(JSON.stringify({ shard: g.shard }))
}
