'use strict'
// What shardid/prometheus and shardid/opentelemetry share: the core's table of counters and the
// process's live figures, both read from the addon (`statsTable()`, `collectStats()`), so that
// no name, help text or kind is written here; and the loading of the optional peer packages.

const path = require('node:path')
const native = require('./native.generated.js')

let table = null
/** The core's table: `[{ name, labels, metrics: [{ name, index, kind, help, prometheus,
 *  opentelemetry, leMs, divideBy, processWide }] }]` (see src/stats.rs). */
function statsTable () {
  if (table === null) table = native.statsTable()
  return table
}

// Where the figures come from: the addon; tests put scripted samples in its place.
let source = () => native.collectStats()
let snapshot = null

/** The live objects' figures, `[{ family, labels, values }]`, read once per scrape: an
 *  exporter's metrics ask one after another within one turn of the event loop, and see one
 *  snapshot (a histogram's buckets and count agree). */
function samples () {
  if (snapshot === null) {
    snapshot = source()
    queueMicrotask(() => { snapshot = null })
  }
  return snapshot
}

/** For tests: figures from `fn` instead of the addon (`null`: the addon again). */
function setSource (fn) {
  source = fn ?? (() => native.collectStats())
  snapshot = null
}

/** `values[i]` as a JS number in base units (`divideBy` 1,000 turns milliseconds into seconds). */
function value (values, metric, divideBy = metric.divideBy) {
  return Number(values[metric.index]) / divideBy
}

/** The largest of a process-wide figure over `rows` (every object reports the same one). */
function processValue (rows, metric, divideBy) {
  let max = 0n
  for (const row of rows) if (row.values[metric.index] > max) max = row.values[metric.index]
  return Number(max) / divideBy
}

/** `{ label: value }` of a sample. */
function labelsOf (family, row) {
  const out = {}
  family.labels.forEach((name, i) => { out[name] = row.labels[i] })
  return out
}

/** Where the application's own packages are found: beside its main script (CommonJS), and
 *  from its working directory (an ES module has no `require.main`). */
function applicationDirs () {
  const dirs = []
  if (typeof require.main?.filename === 'string') dirs.push(path.dirname(require.main.filename))
  if (typeof process === 'object' && typeof process.cwd === 'function') dirs.push(process.cwd())
  return dirs
}

/** The package `name`, which `entry` needs: the application's copy first, whatever way shardid
 *  was installed (`npm install ../shardid` and `npm link` leave shardid in its own folder,
 *  where a plain `require` finds its own development copy, and the application's registry
 *  would stay empty), then the one beside shardid; an error with `code`
 *  `MISSING_PEER_DEPENDENCY` that says how to install it when neither is installed. */
function requirePeer (name, entry) {
  for (const dir of applicationDirs()) {
    let found
    try {
      found = require.resolve(name, { paths: [dir] })
    } catch (err) {
      if (err?.code === 'MODULE_NOT_FOUND') continue
      throw err
    }
    return require(found)
  }
  try {
    return require(name)
  } catch (err) {
    // Only the package itself missing: a broken install of it is reported as it is.
    if (err?.code !== 'MODULE_NOT_FOUND' || !String(err.message).startsWith(`Cannot find module '${name}'`)) throw err
    const error = new Error(
      `${entry} needs the package ${name}, an optional peer dependency of shardid that is not installed: npm install ${name}`
    )
    error.code = 'MISSING_PEER_DEPENDENCY'
    error.dependency = name
    error.cause = err
    throw error
  }
}

module.exports = { statsTable, samples, setSource, value, processValue, labelsOf, requirePeer }
