// Node's serials (shardid/segments), driven by test_serials.py against its throwaway server:
// `node serials_node.mjs <mode> <connection string> <schema> <tag> <format> <zone> ...`; prints
// one JSON line.
//   basic:  serials from nextSerialAsync (the first of a period waits for its segment) and
//           nextSerial, close() gives the rest back; errors for a tag never registered, one
//           registered otherwise, a bad tag.
//   run:    8 concurrent loops issuing on a scripted clock, as the Python and Rust workers do:
//           prints "ready" once connected, reads the wall-clock start from stdin, then issues
//           for DURATION ms at SCRIPT + (now - start) * SPEED; one serial a line into OUT.
//   insert: N serials inserted into <schema>.orders (the table of the UNIQUE test).
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline'
import { writeFileSync } from 'node:fs'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { serials, createSerial } = require('./segments.js')
const { ShardIdError } = require('./index.js')

const [mode, connectionString, schema, tag, format, zone, ...rest] = process.argv.slice(2)
const code = async (promise) => promise.then(() => 'no error', (err) => (err instanceof ShardIdError ? err.code : String(err)))

if (mode === 'basic') {
  await createSerial({ connectionString, schema, tag, format, zone })
  const s = await serials({ connectionString, schema, tag, format, zone })
  const got = [await s.nextSerialAsync()]
  for (let i = 0; i < 9; i++) got.push(s.nextSerial())
  const numbers = got.map((serial) => s.parse(serial).number)
  await s.close()
  const errors = {
    unknown: await code(serials({ connectionString, schema, tag: 'never_registered', format, zone })),
    mismatch: await code(serials({ connectionString, schema, tag, format, zone: 'UTC' })),
    again: await code(createSerial({ connectionString, schema, tag, format, zone: 'UTC' })),
    badTag: await code(serials({ connectionString, schema, tag: 'a@b', format, zone })),
    badFormat: await code(serials({ connectionString, schema, tag, format: 'X{seq}', zone })),
    closed: await code(Promise.resolve().then(() => s.nextSerial())),
  }
  console.log(JSON.stringify({ serials: got, numbers: numbers.map(String), skipped: String(s.skipped), errors }))
} else if (mode === 'run') {
  const [out, script, duration, speed] = rest
  const s = await serials({ connectionString, schema, tag, format, zone, minSize: 20, maxSize: 2000, targetMs: 200, waitMs: 30000 })
  console.log('ready')
  const lines = createInterface({ input: process.stdin })
  const start = Number((await lines[Symbol.asyncIterator]().next()).value)
  lines.close()
  while (Date.now() < start) await new Promise((resolve) => setTimeout(resolve, 1))
  const got = []
  const loop = async () => {
    for (let elapsed = Date.now() - start; elapsed < Number(duration); elapsed = Date.now() - start) {
      const at = Number(script) + elapsed * Number(speed)
      let serial
      try {
        serial = s.nextSerialAt(at)
      } catch (err) {
        if (err.code !== 'SEGMENT_UNAVAILABLE') throw err
        serial = await s.nextSerialAtAsync(at) // the period's segment is on its way
      }
      got.push(serial)
      if (got.length % 64 === 0) await new Promise((resolve) => setImmediate(resolve)) // let fetches land
    }
  }
  await Promise.all(Array.from({ length: 8 }, loop))
  writeFileSync(out, got.join('\n'))
  await s.close()
  console.log(JSON.stringify({ count: got.length, skipped: Number(s.skipped) }))
} else if (mode === 'insert') {
  const pg = require('pg')
  const s = await serials({ connectionString, schema, tag, format, zone, minSize: 20, maxSize: 50 })
  const client = new pg.Client({ connectionString })
  await client.connect()
  for (let i = 0; i < Number(rest[0]); i++) {
    await client.query(`INSERT INTO ${schema}.orders VALUES ($1, 'node')`, [await s.nextSerialAsync()])
  }
  await client.end()
  await s.close()
  console.log(JSON.stringify({ inserted: Number(rest[0]) }))
} else {
  throw new Error(`unknown mode ${mode}`)
}
