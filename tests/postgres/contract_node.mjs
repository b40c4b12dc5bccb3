// Node's side of test_contract.py: `node contract_node.mjs <mode> <url> [schema]`; prints one
// JSON line of what each call rejected with ({ code, message, ms }) or returned.
//   unreachable <url> <wait ms>: url names a server that is down: dense IDs, serials, createSerial.
//   badurl <url>: a URL no driver takes: every client, before any connection.
//   closed <url> <schema>: serials used after close() (serial tag `c`).
//   unknown <url> <schema>: serials of a tag never registered.
//   stats <url>: a lease from shardid/postgres, 5 IDs, then the process's live figures.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Layout } = require('./index.js')
const { denseIds, serials, createSerial } = require('./segments.js')
const { Dictionary } = require('./dictionary.js')
const { lease } = require('./postgres.js')
const mysql = require('./mysql.js')
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
} else {
  throw new Error(`unknown mode ${mode}`)
}
