// A worker of test_redis.py: takes dense IDs of a tag on a Redis server with the Node client
// (bindings-node/segments.js over ioredis). Each line on stdin is a number of milliseconds to
// take for, about one ID a millisecond, after which it prints `done`; an error (the server down
// or restarting) is counted and the next call tried 20 ms later. At the end of stdin it closes
// and writes `<unix ms> <id>` lines to OUT. Between lines it waits with nothing in flight, as
// an idle service does: the events of a connection the server ended are handled then.
//
//     node redis_worker.mjs URL TAG OUT SIZE
import { createRequire } from 'node:module'
import { writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'

const require = createRequire(import.meta.url)
const { denseIds } = require('../../bindings-node/segments.js')
const [url, tag, out, size] = process.argv.slice(2)
const ids = await denseIds({ connectionString: url, tag, minSize: Number(size), maxSize: Number(size), waitMs: 2000 })
const lines = []
let errors = 0
for await (const phase of createInterface({ input: process.stdin })) {
  const end = Date.now() + Number(phase)
  while (Date.now() < end) {
    try {
      lines.push(`${Date.now()} ${await ids.nextIdAsync()}`)
    } catch {
      errors += 1
      await sleep(20)
    }
    await sleep(1)
  }
  console.log('done')
}
await ids.close().catch(() => {})
writeFileSync(out, lines.map((line) => line + '\n').join(''))
console.error(`node worker: ${lines.length} IDs, ${errors} errors`)
