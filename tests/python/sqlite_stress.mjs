// One Node worker process of the SQLite stress test (test_sqlite_stress.py), beside Python and
// Rust workers on the same file: `node sqlite_stress.mjs URL OUT STOP_AT_MS MIDNIGHT_AT_MS
// START_MS`. Four worker threads, each with its own dense IDs, serials and dictionary (tiny
// segments), append each item to OUT the moment they have it (one write per line, so a
// SIGKILLed process's last items count): `d ID`, `w STRING ID`, `s SERIAL`. Serials are taken
// on a scripted clock that passes midnight (UTC) at MIDNIGHT_AT_MS; the strings are a window
// over one list every worker shares (`w{k}`, k from the time since START_MS), so the same new
// strings race. Exits 0 at STOP_AT_MS, after closing everything.
import { createRequire } from 'node:module'
import { closeSync, openSync, writeSync } from 'node:fs'
import { Worker, isMainThread, workerData } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const MIDNIGHT_MS = Date.UTC(2031, 4, 2) // as every worker of the test has it
const MAX_ITEMS = 400 // per thread: bounded in count as well as in time

const args = isMainThread ? process.argv.slice(2) : workerData
const [url, out] = args
const [stopAt, midnightAt, start] = args.slice(2).map(Number)

if (isMainThread) {
  const threads = [0, 1, 2, 3].map((k) => new Worker(fileURLToPath(import.meta.url), { workerData: [...args, k] }))
  const codes = await Promise.all(threads.map((w) => new Promise((resolve, reject) => {
    w.on('error', reject)
    w.on('exit', resolve)
  })))
  if (codes.some((c) => c !== 0)) throw new Error(`a thread exited with ${codes}`)
} else {
  const { denseIds, serials } = require('./segments.js')
  const { Dictionary } = require('./dictionary.js')
  const ids = await denseIds({ connectionString: url, tag: 'stress', minSize: 1, maxSize: 5, targetMs: 1 })
  const format = 'S-{yyyy}{MM}{dd}-{seq:6}'
  const serial = await serials({ connectionString: url, tag: 'inv', format, zone: 'UTC', minSize: 1, maxSize: 3, targetMs: 1 })
  const words = new Dictionary(url, 'words', { cacheSize: 64 })
  const fd = openSync(out, 'a')
  const say = (line) => writeSync(fd, line + '\n')
  for (let i = 0; i < MAX_ITEMS; i++) {
    const now = Date.now()
    if (now >= stopAt) break
    say(`d ${await ids.nextIdAsync()}`)
    const word = `w${Math.floor((now - start) / 5) + Math.floor(Math.random() * 20)}`
    const [id] = await words.ids([word])
    say(`w ${word} ${id}`)
    say(`s ${await serial.nextSerialAsync(MIDNIGHT_MS + now - midnightAt)}`)
  }
  await ids.close()
  await serial.close()
  await words.close()
  closeSync(fd)
}
