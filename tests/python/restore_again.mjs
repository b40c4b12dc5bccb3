// Node's part of issue 54's check after a restore (restore_checks.created_after_backup): on the
// restored database, the next day's serials, the tag made again and the topic made again, taken
// by Node: `node restore_again.mjs URL WORDS_URL SCHEMA DICT_SCHEMA DAY_MS FORMAT N PREFIX`.
// Prints one JSON line: {"serials": [...], "dense": ["1", ...], "ids": {"PREFIX0": "7", ...}}.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { serials, denseIds, createTag } = require('./segments.js')
const { Dictionary } = require('./dictionary.js')

const [url, wordsUrl, schema, dictSchema, dayMs, format, n, prefix] = process.argv.slice(2)
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

console.log(JSON.stringify({ serials: got, dense, ids: Object.fromEntries(values.map((v, i) => [v, String(ids[i])])) }))
