'use strict'
// shardid/prometheus: shardid's counters in a prom-client registry (prom-client is an optional
// peer dependency, loaded by this entry only):
//
//   const { register } = require('shardid/prometheus')
//   register()            // prom-client's default registry; or register(myRegistry)
//
// Every generator of the process (`shardid_ids_total{layout,shard}`, `shardid_waits_total`,
// ...) and every dense-ID allocator and dictionary the core reports, with the names, help
// texts, types and labels of Python's `shardid.prometheus` (all from the core's table, none
// written here): milliseconds as seconds, the fetch latency as a histogram. The figures are
// read from the live objects when the registry is scraped.

const { statsTable, samples, value, processValue, labelsOf, requirePeer } = require('./exporters.js')
const { makeError } = require('./errors.js')

const promClient = requirePeer('prom-client', 'shardid/prometheus')

/** One Prometheus metric family of shardid, in the shape prom-client's registry reads
 *  (`name`, `help`, `type`, `aggregator`, `get()`, `reset()`), read at each scrape. */
class ShardIdMetric {
  constructor (name, help, type, aggregator, read) {
    this.name = name
    this.help = help
    this.type = type
    this.aggregator = aggregator
    this._read = read
  }

  /** The family as prom-client's `metrics()` and `getMetricsAsJSON()` read it. */
  async get () {
    return { name: this.name, help: this.help, type: this.type, values: this._read(), aggregator: this.aggregator }
  }

  /** Nothing: the figures are the objects' own (`registry.resetMetrics()` calls it). */
  reset () {}
}

/** A counter's or gauge's values: one per object, or one for the process. */
function single (family, metric, rows) {
  if (metric.processWide) {
    return rows.length === 0 ? [] : [{ labels: {}, value: processValue(rows, metric, metric.divideBy) }]
  }
  return rows.map((row) => ({ labels: labelsOf(family, row), value: value(row.values, metric) }))
}

/** A histogram's values from its bucket and sum rows: cumulative buckets (`le` in seconds),
 *  the sum in seconds, the count (the `+Inf` bucket). */
function histogram (name, family, parts, rows) {
  const out = []
  for (const row of rows) {
    const labels = labelsOf(family, row)
    let count = 0
    let sum = 0
    for (const metric of parts) {
      if (metric.kind === 'sum') {
        sum = value(row.values, metric)
        continue
      }
      const n = value(row.values, metric, 1)
      const le = metric.leMs === Infinity ? '+Inf' : String(metric.leMs / 1000)
      if (metric.leMs === Infinity) count = n
      out.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: n })
    }
    out.push({ metricName: `${name}_sum`, labels, value: sum })
    out.push({ metricName: `${name}_count`, labels, value: count })
  }
  return out
}

/** shardid's metric families, one per Prometheus name of the core's table, in its order
 *  (each family's counters and gauges, then its histograms). */
function metrics () {
  const out = []
  for (const family of statsTable()) {
    const rows = () => samples().filter((s) => s.family === family.name)
    const histograms = new Map()
    for (const metric of family.metrics) {
      if (metric.kind === 'bucket' || metric.kind === 'sum') {
        const parts = histograms.get(metric.prometheus) ?? []
        histograms.set(metric.prometheus, parts.concat(metric))
        continue
      }
      const type = metric.kind === 'counter' ? 'counter' : 'gauge'
      const aggregator = metric.kind === 'gaugeMax' ? 'max' : 'sum'
      out.push(new ShardIdMetric(metric.prometheus, metric.help, type, aggregator, () => single(family, metric, rows())))
    }
    for (const [name, parts] of histograms) {
      // The help of its sum, as Python's exporter (else its first bucket's).
      const help = (parts.find((m) => m.kind === 'sum') ?? parts[0]).help
      out.push(new ShardIdMetric(name, help, 'histogram', 'sum', () => histogram(name, family, parts, rows())))
    }
  }
  return out
}

/** Adds shardid's metric families to `registry` (prom-client's default one if left out);
 *  returns them (`registry.removeSingleMetric(m.name)` takes one out again). */
function register (registry = promClient.register) {
  if (registry === null || typeof registry !== 'object' || typeof registry.registerMetric !== 'function') {
    throw makeError('INVALID_ARGUMENT', { argument: 'registry', reason: "must be a prom-client Registry (or left out: prom-client's default one)" }, TypeError)
  }
  const out = metrics()
  const added = []
  try {
    for (const metric of out) {
      registry.registerMetric(metric)
      added.push(metric)
    }
  } catch (err) {
    // All or nothing: a name already taken leaves the registry as it was.
    for (const metric of added) registry.removeSingleMetric?.(metric.name)
    throw err
  }
  return out
}

module.exports = { register, metrics }
