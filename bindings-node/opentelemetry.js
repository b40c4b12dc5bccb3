'use strict'
// shardid/opentelemetry: shardid's counters as OpenTelemetry observable instruments
// (@opentelemetry/api is an optional peer dependency, loaded by this entry only):
//
//   const { instrument } = require('shardid/opentelemetry')
//   instrument()          // on metrics.getMeter('shardid'); or instrument(meter)
//
// Every generator of the process (`shardid.ids`, `shardid.waits`, ... with attributes `layout`
// and `shard`) and every dense-ID allocator and dictionary the core reports, named as Python's
// `shardid.opentelemetry` names them (from the core's table, none written here): durations in
// milliseconds (unit `ms`), a histogram's buckets as the counter `<name>.bucket` with an `le`
// attribute in milliseconds and its sum as `<name>.sum`. Read when the SDK collects.

const { statsTable, samples, processValue, labelsOf, requirePeer } = require('./exporters.js')
const { makeError } = require('./errors.js')

const api = requirePeer('@opentelemetry/api', 'shardid/opentelemetry')

/** Creates shardid's observable instruments on `meter` (`metrics.getMeter('shardid')` of
 *  @opentelemetry/api if left out); returns them. */
function instrument (meter = api.metrics.getMeter('shardid')) {
  if (meter === null || typeof meter !== 'object' || typeof meter.createObservableCounter !== 'function') {
    throw makeError('INVALID_ARGUMENT', { argument: 'meter', reason: 'must be an OpenTelemetry Meter (or left out: metrics.getMeter(\'shardid\'))' }, TypeError)
  }
  const instruments = []
  for (const family of statsTable()) {
    // One instrument per OpenTelemetry name: a histogram's buckets share one.
    const grouped = new Map()
    for (const metric of family.metrics) {
      grouped.set(metric.opentelemetry, (grouped.get(metric.opentelemetry) ?? []).concat(metric))
    }
    for (const [name, rows] of grouped) {
      const first = rows[0]
      const options = { description: first.help, unit: first.divideBy === 1000 ? 'ms' : '1' }
      const gauge = first.kind === 'gauge' || first.kind === 'gaugeMax'
      const observable = gauge ? meter.createObservableGauge(name, options) : meter.createObservableCounter(name, options)
      observable.addCallback((result) => {
        const objects = samples().filter((s) => s.family === family.name)
        for (const metric of rows) {
          if (metric.processWide) {
            if (objects.length > 0) result.observe(processValue(objects, metric, 1))
            continue
          }
          for (const object of objects) {
            const attributes = labelsOf(family, object)
            if (metric.kind === 'bucket') attributes.le = metric.leMs === Infinity ? '+Inf' : String(metric.leMs)
            result.observe(Number(object.values[metric.index]), attributes)
          }
        }
      })
      instruments.push(observable)
    }
  }
  return instruments
}

module.exports = { instrument }
