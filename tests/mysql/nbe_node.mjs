// Node's dictionary, dense IDs and serials on MariaDB (mysql2) for test_no_backslash_escapes.py,
// which runs the server under NO_BACKSLASH_ESCAPES: `node nbe_node.mjs <url> <mode> <json>`;
// prints one JSON line.
//   lookup    {schema, topic, values}: the lookup's answer and how long it took (ms)
//   ids       {schema, topic, values}: the IDs of the strings, then the strings of those IDs
//   dense     {schema, tag, n}: the tag created (if missing), then n dense IDs
//   serials   {schema, tag, format, zone, n}: the serial tag registered, then n serials
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Dictionary } = require('./dictionary.js')
const { createTag, denseIds, createSerial, serials } = require('./segments.js')

const [url, mode, json] = process.argv.slice(2)
const o = JSON.parse(json)
const print = (value) => console.log(JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v)))

if (mode === 'lookup' || mode === 'ids') {
  const words = new Dictionary({ connectionString: url, topic: o.topic, schema: o.schema, cacheSize: 0 })
  try {
    if (mode === 'lookup') {
      const start = performance.now()
      const answer = await words.lookup(o.values)
      print({ answer, ms: performance.now() - start })
    } else {
      const ids = await words.ids(o.values)
      print({ ids, values: await words.values(ids) })
    }
  } finally {
    await words.close()
  }
} else if (mode === 'dense') {
  await createTag(url, o.tag, { schema: o.schema })
  const ids = await denseIds({ connectionString: url, tag: o.tag, schema: o.schema, minSize: 10, maxSize: 10 })
  try {
    print({ ids: Array.from(await ids.nextIdsAsync(o.n)) })
  } finally {
    await ids.close()
  }
} else if (mode === 'serials') {
  await createSerial(url, o.tag, o.format, { zone: o.zone, schema: o.schema })
  const s = await serials({ connectionString: url, tag: o.tag, format: o.format, zone: o.zone, schema: o.schema, minSize: 10, maxSize: 10 })
  try {
    const got = []
    for (let i = 0; i < o.n; i++) got.push(await s.nextSerialAsync())
    print({ serials: got })
  } finally {
    await s.close()
  }
} else {
  throw new Error(`unknown mode ${mode}`)
}
