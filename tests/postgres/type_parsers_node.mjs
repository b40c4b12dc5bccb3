// Node's clients on PostgreSQL under each int8 setting an application may give pg (issue 59,
// item 1): `node type_parsers_node.mjs <connection string> <setting> <run>`, driven by
// test_node_type_parsers.py; prints one JSON line. <setting> is what pg's global parsers of
// int8 and int8[] are set to before anything of shardid runs:
//   default: pg's own (decimal strings)
//   bigint:  int8AsBigInt(pg.types), which node.md recommends
//   number:  JavaScript numbers (what `parseInt` / `Number` parsers give)
// and, for each, the dictionary (through its own connection and a pg.Pool of the caller's),
// dense IDs, serials and a shard lease run on the suite's server. Every failure is printed as
// its class and code: a ShardIdError, or what escaped.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const pg = require('pg')
const { Layout, ShardIdError } = require('./index.js')
const { int8AsBigInt, lease } = require('./postgres.js')
const { Dictionary } = require('./dictionary.js')
const { denseIds, serials, createSerial } = require('./segments.js')

const [connectionString, setting, run] = process.argv.slice(2)
if (setting === 'bigint') int8AsBigInt(pg.types)
if (setting === 'number') {
  const array = pg.types.getTypeParser(1016)
  pg.types.setTypeParser(20, Number)
  pg.types.setTypeParser(1016, (text) => array(text).map((v) => (v === null ? null : Number(v))))
}

const failure = (err) => `${err.constructor.name} ${err instanceof ShardIdError ? err.code : `${err.code} ${err.message}`}`
const attempt = async (f) => {
  try {
    return await f()
  } catch (err) {
    return failure(err)
  }
}
const plain = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))

const out = {}
out.dictionary = await attempt(async () => {
  const words = new Dictionary({ connectionString, topic: 'words', schema: 'dict_tp' })
  const got = {
    ids: await words.ids([`new ${run}`, 'shared', `new ${run}`]),
    lookup: await words.lookup(['shared', 'never']),
    values: await words.values([0n, 999]),
  }
  await words.close()
  return got
})
out.pool = await attempt(async () => {
  const pool = new pg.Pool({ connectionString, max: 1 })
  const words = new Dictionary({ pool, topic: 'words', schema: 'dict_tp', cacheSize: 0 })
  const got = { ids: await words.ids(['shared']), lookup: await words.lookup([`new ${run}`]) }
  await words.close()
  await pool.end()
  return got
})
out.dense = await attempt(async () => {
  const ids = await denseIds({ connectionString, tag: 'tp', schema: 'seg_tp', minSize: 10, maxSize: 10 })
  const got = [ids.nextId(), ids.nextId(), await ids.nextIdAsync()]
  await ids.close()
  return got
})
out.serials = await attempt(async () => {
  const format = 'T-{yyyy}{MM}{dd}-{seq:6}'
  await createSerial({ connectionString, tag: 'tp', format, zone: 'UTC', schema: 'seg_tp' })
  const made = await serials({ connectionString, tag: 'tp', format, zone: 'UTC', schema: 'seg_tp', minSize: 10, maxSize: 10 })
  const got = [await made.nextSerialAsync(), await made.nextSerialAsync()].map((s) => s.slice(-6))
  await made.close()
  return got
})
out.lease = await attempt(async () => {
  const held = await lease({ layout: Layout.TWITTER, connectionString, shards: [0, 4], table: 'tp_leases' })
  const id = await held.nextId()
  await held.close()
  return { shard: held.shard, bigint: typeof id === 'bigint' }
})
// A pool of the caller's whose driver ignores pg's per-query parsers answers what its own
// settings make: numbers are read by the same rule, and one past 2^53 (maybe rounded) refused.
const fake = (ids) => ({ query: async () => ({ rows: [[ids]] }) })
out.numbers = await attempt(async () => new Dictionary({ pool: fake([7, 8]), topic: 'x', cacheSize: 0 }).ids(['a', 'b']))
out.rounded = await attempt(async () => new Dictionary({ pool: fake([2 ** 60]), topic: 'x', cacheSize: 0 }).ids(['a']))
console.log(plain(out))
