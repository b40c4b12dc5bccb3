// Node's side of test_contract.py: `node contract_node.mjs <mode> <url> [schema]`; prints one
// JSON line of what each call rejected with ({ code, message, ms }) or returned.
//   unreachable <url> <wait ms>: url names a server that is down: dense IDs, serials, createSerial.
//   badurl <url>: a URL no driver takes: every client, before any connection.
//   closed <url> <schema>: serials used after close() (serial tag `c`).
//   unknown <url> <schema>: serials of a tag never registered.
//   stats <url>: a lease from shardid/postgres, 5 IDs, then the process's live figures.
//   group <json>: one (database, system) group of the contract on every database
//            ({ database, system, url, schema, down: { case: url }, waitMs }): prints
//            { down: { case: outcome }, closed, unknown, stats }.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Layout } = require('./index.js')
const { denseIds, serials, createSerial, createTag } = require('./segments.js')
const { Dictionary } = require('./dictionary.js')
const { lease } = require('./postgres.js')
const mysql = require('./mysql.js')
const sqlite = require('./sqlite.js')
const postgres = require('./postgres.js')
const native = require('./native.generated.js')

const FORMAT = 'C-{yyyy}{MM}{dd}-{seq:6}'
const print = (value) => console.log(JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v)))
const outcome = async (f) => {
  const started = Date.now()
  try {
    const value = await f()
    return { ok: true, value: typeof value === 'string' ? value : undefined }
  } catch (err) {
    return { code: err.code, message: err.message, ms: Date.now() - started }
  }
}

const [mode, url, schema] = process.argv.slice(2)
if (mode === 'unreachable') {
  const waitMs = Number(schema) // the third argument: the clients' wait
  print({
    dense: await outcome(() => denseIds({ connectionString: url, tag: 'd', waitMs })),
    serials: await outcome(() => serials({ connectionString: url, tag: 'c', format: FORMAT, zone: 'UTC', waitMs })),
    createSerial: await outcome(() => createSerial({ connectionString: url, tag: 'c', format: FORMAT, zone: 'UTC' })),
  })
} else if (mode === 'badurl') {
  print({
    dense: await outcome(() => denseIds({ connectionString: url, tag: 'd' })),
    serials: await outcome(() => serials({ connectionString: url, tag: 'c', format: FORMAT, zone: 'UTC' })),
    dictionary: await outcome(() => new Dictionary({ connectionString: url, topic: 't' }).id('a')),
    lease: await outcome(() => lease({ layout: Layout.TWITTER, connectionString: url, shards: [0, 4] })),
    mysqlLease: await outcome(() => mysql.lease({ layout: Layout.TWITTER, url, shards: [0, 4] })),
    sqliteLease: await outcome(() => sqlite.lease({ layout: Layout.TWITTER, url, shards: [0, 4] })),
    createTag: await outcome(() => createTag(url, 'd')),
    createSerial: await outcome(() => createSerial({ connectionString: url, tag: 'c', format: FORMAT, zone: 'UTC' })),
  })
} else if (mode === 'closed') {
  const s = await serials({ connectionString: url, tag: 'c', format: FORMAT, zone: 'UTC', schema })
  await s.nextSerialAsync()
  await s.close()
  print({ sync: await outcome(() => s.nextSerial()), async: await outcome(() => s.nextSerialAsync()) })
} else if (mode === 'unknown') {
  print({ serials: await outcome(() => serials({ connectionString: url, tag: 'never_created', format: FORMAT, zone: 'UTC', schema })) })
} else if (mode === 'stats') {
  const held = await lease({ layout: Layout.SONYFLAKE, connectionString: url, shards: [0, 4], table: 'contract_node' })
  for (let i = 0; i < 5; i++) await held.nextId()
  const own = held.stats()
  const samples = native.collectStats().filter((s) => s.family === 'generator' && s.labels[0] === 'SONYFLAKE' && s.labels[1] === String(held.shard))
  print({ shard: held.shard, ceilingWrites: Number(own.ceilingWrites), ids: samples.map((s) => Number(s.values[0])) })
  await held.close()
} else if (mode === 'group') {
  print(await group(JSON.parse(url)))
} else {
  throw new Error(`unknown mode ${mode}`)
}

// The lease of each database: its module and the name of its URL option.
function leaseOf(database) {
  if (database === 'mariadb') return (url, o) => mysql.lease({ ...o, url })
  if (database === 'sqlite') return (url, o) => sqlite.lease({ ...o, url })
  return (url, o) => postgres.lease({ ...o, connectionString: url })
}

async function each(down, call) {
  const out = {}
  for (const [name, u] of Object.entries(down)) out[name] = await outcome(() => call(u))
  return out
}

async function group({ database, system, url, schema, down, waitMs }) {
  const out = {}
  if (system === 'dense') {
    out.down = {}
    for (const [name, u] of Object.entries(down)) {
      out.down[name] = await outcome(async () => (await denseIds({ connectionString: u, tag: 'd', schema, waitMs })).nextIdAsync())
      out.down[`${name}-create`] = await outcome(() => createTag(u, 'd', { schema }))
    }
    const ids = await denseIds({ connectionString: url, tag: 'd', schema })
    await ids.nextIdsAsync(5)
    const stats = ids.stats()
    out.stats = { fetches: Number(stats.fetches), remaining: stats.remaining === undefined ? null : Number(stats.remaining) }
    await ids.close()
    out.closed = await outcome(() => ids.nextIdAsync())
    out.unknown = await outcome(async () => (await denseIds({ connectionString: url, tag: 'never_created', schema, waitMs })).nextIdAsync())
  } else if (system === 'serials') {
    out.down = {}
    for (const [name, u] of Object.entries(down)) {
      out.down[name] = await outcome(() => serials({ connectionString: u, tag: 'c', format: FORMAT, zone: 'UTC', schema, waitMs }))
      out.down[`${name}-create`] = await outcome(() => createSerial({ connectionString: u, tag: 'c', format: FORMAT, zone: 'UTC', schema }))
    }
    const s = await serials({ connectionString: url, tag: 'c', format: FORMAT, zone: 'UTC', schema })
    await s.nextSerialAsync()
    const stats = s.stats()
    out.stats = { fetches: Number(stats.fetches), remaining: stats.remaining === undefined ? null : Number(stats.remaining) }
    await s.close()
    out.closed = await outcome(() => s.nextSerialAsync())
    out.unknown = await outcome(() => serials({ connectionString: url, tag: 'never_created', format: FORMAT, zone: 'UTC', schema }))
  } else if (system === 'dictionary') {
    out.down = {}
    for (const [name, u] of Object.entries(down)) {
      out.down[name] = await outcome(() => new Dictionary(u, 't', { schema }).id('a'))
      out.down[`${name}-create`] = await outcome(() => new Dictionary(u, 't', { schema }).create())
    }
    const d = new Dictionary(url, 't', { schema })
    await d.ids(['a', 'b'])
    await d.id('a')
    const stats = d.stats()
    out.stats = { calls: Number(stats.idHits) + Number(stats.idMisses) }
    await d.close()
    out.closed = await outcome(() => d.id('c'))
    out.unknown = await outcome(() => new Dictionary(url, 'never_created', { schema }).id('a'))
  } else {
    const take = leaseOf(database)
    const table = 'contract_node'
    out.down = await each(down, (u) => take(u, { layout: Layout.TWITTER, shards: [0, 4], table }))
    const before = generatorIds()
    const held = await take(url, { layout: Layout.SONYFLAKE, shards: [8, 12], table })
    for (let i = 0; i < 5; i++) await held.nextId()
    const key = `SONYFLAKE/${held.shard}`
    out.stats = { present: held.stats() != null, ids: (generatorIds()[key] ?? 0) - (before[key] ?? 0) }
    await held.close()
    out.closed = await outcome(() => held.nextId())
  }
  return out
}

// `shardid_ids_total` of each layout/shard in this process's live figures.
function generatorIds() {
  const out = {}
  for (const s of native.collectStats()) {
    if (s.family === 'generator') out[`${s.labels[0]}/${s.labels[1]}`] = Number(s.values[0])
  }
  return out
}
