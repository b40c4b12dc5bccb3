// A process (or worker thread) of sqlite.test.mjs on one SQLite file: `dense URL TAG N`
// prints N dense IDs taken with tiny segments; `serials URL TAG N` N serials; `words URL TOPIC
// SEED N` the dictionary's IDs of N batches of words (some shared with the other workers);
// `forever URL TAG TOPIC` takes IDs and numbers new words until killed, printing each as it
// is handed out. Output: one JSON line per result.
import { createRequire } from 'node:module'
import { isMainThread, parentPort, workerData } from 'node:worker_threads'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { denseIds, serials } = require('./segments.js')
const { Dictionary } = require('./dictionary.js')

const args = isMainThread ? process.argv.slice(2) : workerData
const say = (value) => (isMainThread ? process.stdout.write(JSON.stringify(value) + '\n') : parentPort.postMessage(value))
const [mode, url, name] = args

if (mode === 'dense') {
  const ids = await denseIds({ connectionString: url, tag: name, minSize: 1, maxSize: 3, targetMs: 1 })
  const out = []
  for (let i = 0; i < Number(args[3]); i++) out.push(String(await ids.nextIdAsync()))
  await ids.close()
  say({ ids: out, fetches: Number(ids.stats().fetches) })
} else if (mode === 'serials') {
  const s = await serials({ connectionString: url, tag: name, format: 'S-{yyyy}{MM}{dd}-{seq:6}', zone: 'UTC', minSize: 1, maxSize: 3, targetMs: 1 })
  const out = []
  // Across a scripted midnight: the first half on one day, the rest on the next.
  const midnight = Date.UTC(2031, 4, 2)
  const n = Number(args[3])
  for (let i = 0; i < n; i++) out.push(await s.nextSerialAsync(midnight - n + 2 * i))
  await s.close()
  say({ serials: out })
} else if (mode === 'words') {
  const d = new Dictionary(url, name)
  const seed = Number(args[3])
  const out = {}
  for (let b = 0; b < Number(args[4]); b++) {
    // Words 0..59 are shared by every worker, the others this worker's own.
    const words = Array.from({ length: 8 }, (_, i) => ((b * 8 + i) % 3 === 0 ? `shared-${(b * 8 + i) % 60}` : `w${seed}-${b}-${i}`))
    const ids = await d.ids(words)
    words.forEach((w, i) => { out[w] = String(ids[i]) })
  }
  await d.close()
  say({ words: out })
} else if (mode === 'forever') {
  const ids = await denseIds({ connectionString: url, tag: name, minSize: 1, maxSize: 3, targetMs: 1 })
  const d = new Dictionary(url, args[3])
  for (let i = 0; ; i++) {
    const id = await ids.nextIdAsync()
    say({ id: String(id) })
    if (i % 4 === 0) {
      const words = [`k${i}-a`, `k${i}-b`, `k${i}-c`]
      const got = await d.ids(words)
      say({ words: Object.fromEntries(words.map((w, j) => [w, String(got[j])])) })
    }
  }
}
