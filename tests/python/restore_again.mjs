// Node's part of issue 54's checks after a restore (restore_checks.py), run on the restored
// database:
// - created_after_backup: the next day's serials, the tag made again and the topic made again,
//   taken by Node: `node restore_again.mjs URL WORDS_URL SCHEMA DICT_SCHEMA DAY_MS FORMAT N PREFIX`
//   prints one JSON line: {"serials": [...], "dense": ["1", ...], "ids": {"PREFIX0": "7", ...}}.
// - lease_created_after_backup: a new holder of a shard whose row the backup lacks asks for IDs
//   of the lost holder's time: `node restore_again.mjs lease URL TABLE SHARD AT_MS N` prints
//   {"ids": ["...", ...]} or, refused (behind the new row's ceiling, as it should be),
//   {"refused": "CODE"}.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))

/** The lease entry point of the database `url` names, and its option naming the URL. */
function leaseOf(url) {
  if (url.startsWith('sqlite:')) return [require('./sqlite.js').lease, 'url']
  if (url.startsWith('mysql:') || url.startsWith('mariadb:')) return [require('./mysql.js').lease, 'url']
  return [require('./postgres.js').lease, 'connectionString']
}

async function leaseAgain([url, table, shard, atMs, n]) {
  const { Layout } = require('./index.js')
  const [lease, option] = leaseOf(url)
  const first = Number(shard)
  const deadline = Date.now() + 30_000
  let held
  for (;;) {
    try {
      held = await lease({ layout: Layout.SONYFLAKE, [option]: url, shards: [first, first + 1], table, ttlMs: 1_000 })
      break
    } catch (e) {
      // The restored row's holder, until its time to live ends.
      if (e.code !== 'NO_FREE_SHARD' || Date.now() > deadline) throw e
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  try {
    if (held.shard !== first) throw new Error(`leased shard ${held.shard}, not ${first}`)
    const ids = []
    for (let i = 0; i < Number(n); i++) ids.push(String(await held.nextIdAt(Number(atMs))))
    return { ids }
  } catch (e) {
    if (typeof e.code !== 'string') throw e
    return { refused: e.code }
  } finally {
    await held.close()
  }
}

async function takeAgain([url, wordsUrl, schema, dictSchema, dayMs, format, n, prefix]) {
  const { serials, denseIds, createTag } = require('./segments.js')
  const { Dictionary } = require('./dictionary.js')
  const count = Number(n)

  const s = await serials({ connectionString: url, schema, tag: 'rst', format, zone: 'UTC', minSize: 10, maxSize: 10 })
  const got = []
  for (let i = 0; i < count; i++) got.push(await s.nextSerialAtAsync(Number(dayMs)))
  await s.close()

  await createTag(url, 'fresh', { schema })
  const d = await denseIds({ connectionString: url, schema, tag: 'fresh', minSize: 10, maxSize: 10 })
  const dense = []
  for (let i = 0; i < count; i++) dense.push(String(await d.nextIdAsync()))
  await d.close()

  const words = new Dictionary({ connectionString: wordsUrl, schema: dictSchema, topic: 'fresh', cacheSize: 0 })
  await words.create()
  const values = Array.from({ length: count }, (_, i) => `${prefix}${i}`)
  const ids = await words.ids(values)
  await words.close()
  return { serials: got, dense, ids: Object.fromEntries(values.map((v, i) => [v, String(ids[i])])) }
}

const args = process.argv.slice(2)
const out = args[0] === 'lease' ? await leaseAgain(args.slice(1)) : await takeAgain(args)
console.log(JSON.stringify(out))
