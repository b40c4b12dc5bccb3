// shardid/prometheus and shardid/opentelemetry (the Node addon): the exposition text of a real
// prom-client registry parses and says what the objects' stats() say, with the names, help
// texts, types and labels of Python's exporter; OpenTelemetry readings through the SDK's
// reader; a clear error when the optional peer package is missing.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'

import { shardid, modulePath } from './load.mjs'

const { Layout, Generator } = shardid
// The exporters are the Node package's: the WebAssembly module has no counters.
const isWasm = !shardid.threadsShareState
const skip = isWasm && 'the WebAssembly module has no counters and no exporters'
const pkg = dirname(modulePath)
const requirePkg = createRequire(join(pkg, 'package.json'))
const load = (name) => (isWasm ? null : requirePkg(name))
const promClient = load('prom-client')
const otel = load('@opentelemetry/sdk-metrics')
const prometheus = load('./prometheus.js')
const opentelemetry = load('./opentelemetry.js')
const exporters = load('./exporters.js')
const native = load('./native.generated.js')

// A layout of 2 IDs per 10 ms unit: a loop of nextId() calls waits for the next unit.
const SLOW = isWasm ? null : new Layout({ epochMs: 1_700_000_000_000n, unitMs: 10n, timeBits: 41, shardBits: 21, sequenceBits: 1 })
const SLOW_LABEL = 'epoch_ms=1700000000000 unit_ms=10 bits=41/21/1'

/** The text exposition format (0.0.4), parsed strictly: every line is a HELP, a TYPE, a
 *  sample of the family last typed, or empty; anything else fails the test. */
function parse (text) {
  const families = new Map()
  let current = null
  const unescape = (s) => s.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c))
  for (const line of text.split('\n')) {
    if (line === '') continue
    let m
    if ((m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line))) {
      assert.ok(!families.has(m[1]), `${m[1]} described twice`)
      current = { name: m[1], help: unescape(m[2]), type: null, samples: [] }
      families.set(m[1], current)
    } else if ((m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line))) {
      assert.equal(m[1], current?.name, `TYPE of ${m[1]} without its HELP`)
      current.type = m[2]
    } else if ((m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line))) {
      const [, name, labelText = '', value] = m
      const own = current.type === 'histogram' ? [`${current.name}_bucket`, `${current.name}_sum`, `${current.name}_count`] : [current.name]
      assert.ok(own.includes(name), `sample ${name} under family ${current.name}`)
      const labels = {}
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y
      let at = 0
      while (at < labelText.length) {
        re.lastIndex = at
        const l = re.exec(labelText)
        assert.ok(l, `labels of: ${line}`)
        labels[l[1]] = unescape(l[2])
        at = re.lastIndex
      }
      assert.ok(value === '+Inf' || /^-?[0-9.e+-]+$/.test(value), `value of: ${line}`)
      current.samples.push({ name, labels, value: Number(value) })
    } else {
      assert.fail(`not exposition text: ${JSON.stringify(line)}`)
    }
  }
  return families
}

async function scrape (registry) {
  return parse(await registry.metrics())
}

/** A family's sample for one (layout, shard). */
function sampleOf (family, layout, shard, name = family.name) {
  const found = family.samples.filter((s) => s.name === name && s.labels.layout === layout && s.labels.shard === String(shard))
  assert.equal(found.length, 1, `${name}{layout=${layout},shard=${shard}}: ${JSON.stringify(family.samples)}`)
  return found[0].value
}

test('the Prometheus text of a prom-client registry parses and equals stats(), waits included', { skip }, async () => {
  const g = new Generator({ layout: Layout.DISCORD, shard: 1003 })
  g.nextIds(1234)
  const slow = new Generator({ layout: SLOW, shard: 61 })
  for (let i = 0; i < 10; i++) slow.nextId() // 5 units of 2 IDs: it waits for the next unit
  const registry = new promClient.Registry()
  const registered = prometheus.register(registry)
  assert.equal(registered.length, registry.getMetricsAsArray().length)
  const families = await scrape(registry)

  const ids = families.get('shardid_ids_total')
  assert.equal(ids.type, 'counter')
  assert.equal(ids.help, 'IDs handed out')
  assert.equal(sampleOf(ids, 'DISCORD', 1003), 1234)
  assert.equal(BigInt(sampleOf(ids, 'DISCORD', 1003)), g.stats().ids)
  const stats = slow.stats()
  assert.equal(stats.ids, 10n)
  assert.ok(stats.waits >= 1n, `a 10 ms unit holds 2 IDs: 10 IDs wait (${stats.waits})`)
  assert.equal(BigInt(sampleOf(ids, SLOW_LABEL, 61)), stats.ids)
  assert.equal(BigInt(sampleOf(families.get('shardid_waits_total'), SLOW_LABEL, 61)), stats.waits)
  for (const name of ['shardid_waits_total', 'shardid_borrowed_units_total', 'shardid_clock_backwards_total', 'shardid_clock_backwards_refused_total']) {
    assert.equal(families.get(name)?.type, 'counter', name)
    assert.deepEqual(Object.keys(families.get(name).samples[0].labels), ['layout', 'shard'], name)
  }
  // One figure for the process, without labels: the most any generator reports.
  const ticker = families.get('shardid_ticker_starts_total')
  assert.equal(ticker.samples.length, 1)
  assert.deepEqual(ticker.samples[0].labels, {})
  assert.ok(ticker.samples[0].value >= 1, 'the loop of nextId() started the ticker')
  assert.equal(BigInt(ticker.samples[0].value), slow.stats().tickerStarts)

  // Read at scrape time, not at registration.
  g.nextIds(766)
  assert.equal(sampleOf((await scrape(registry)).get('shardid_ids_total'), 'DISCORD', 1003), 2000)
  // prom-client's JSON reads the same families.
  const json = await registry.getMetricsAsJSON()
  assert.deepEqual(json.map((m) => m.name), [...families.keys()])
})

test('every figure of the core\'s table is a family with its help, and the names are Python\'s', { skip }, async () => {
  const registry = new promClient.Registry()
  prometheus.register(registry)
  const families = await scrape(registry)
  const types = { counter: 'counter', gauge: 'gauge', gaugeMax: 'gauge', bucket: 'histogram', sum: 'histogram' }
  const table = native.statsTable()
  for (const family of table) {
    for (const metric of family.metrics) {
      const got = families.get(metric.prometheus)
      assert.ok(got, `${family.name}.${metric.name}: ${metric.prometheus} missing`)
      assert.equal(got.type, types[metric.kind], metric.prometheus)
      if (metric.kind !== 'bucket' && metric.kind !== 'sum') assert.equal(got.help, metric.help, metric.prometheus)
    }
  }
  const names = new Set(table.flatMap((f) => f.metrics.map((m) => m.prometheus)))
  assert.deepEqual([...families.keys()].sort(), [...names].sort(), 'nothing but the core\'s figures')
  // Python's shardid.prometheus prints these (tests/python/test_stats.py,
  // tests/postgres/test_segments.py): the same names from the same table.
  for (const [name, type] of [
    ['shardid_ids_total', 'counter'], ['shardid_waits_total', 'counter'], ['shardid_ticker_starts_total', 'counter'],
    ['shardid_segment_fetches_total', 'counter'], ['shardid_segment_fetch_latency_seconds', 'histogram'],
    ['shardid_segment_fetch_latency_last_seconds', 'gauge'], ['shardid_segment_remaining', 'gauge'],
    ['shardid_dictionary_id_hits_total', 'counter'], ['shardid_dictionary_retries_total', 'counter'],
  ]) {
    assert.equal(families.get(name)?.type, type, name)
  }
  // Help texts name no unit (the name says seconds here, OpenTelemetry's unit says ms).
  assert.equal(families.get('shardid_segment_fetch_latency_seconds').help, 'How long the fetches took, added up (failed ones too)')
  assert.equal(families.get('shardid_segment_fetch_latency_last_seconds').help, 'How long the last fetch took')
  // In OpenMetrics, prom-client writes counters as `<name>_total` under the family's base name.
  const open = new promClient.Registry(promClient.Registry.OPENMETRICS_CONTENT_TYPE)
  prometheus.register(open)
  const text = await open.metrics()
  assert.match(text, /^# TYPE shardid_ids counter$/m)
  assert.match(text, /^shardid_ids_total\{layout="DISCORD",shard="1003"\} \d+$/m)
  assert.match(text, /# EOF\n$/)
})

/** Samples from a script: a dense-ID allocator, a dictionary and two generators of one
 *  process, their values set by name from the core's table. */
function scripted (figures) {
  const table = native.statsTable()
  return figures.map(({ family, labels, values }) => {
    const spec = table.find((f) => f.name === family)
    const out = new Array(Math.max(...spec.metrics.map((m) => m.index)) + 1).fill(0n)
    for (const [name, v] of Object.entries(values)) {
      const metric = spec.metrics.find((m) => m.name === name)
      assert.ok(metric, `${family}.${name} is not in the core's table`)
      out[metric.index] = v
    }
    return { family, labels, values: out }
  })
}

const SCRIPT = [
  { family: 'generator', labels: ['TWITTER', '1'], values: { ids: 10n, tickerStarts: 3n } },
  { family: 'generator', labels: ['TWITTER', '2'], values: { ids: 20n, tickerStarts: 3n } },
  {
    family: 'segments',
    labels: ['seg', 'orders'],
    values: {
      fetches: 7n, failedFetches: 2n, fetchLatencyLastMs: 250n, fetchLatencyMaxMs: 1500n,
      fetchLatencyLe1ms: 1n, fetchLatencyLe5ms: 2n, fetchLatencyLe10ms: 3n, fetchLatencyLe50ms: 4n,
      fetchLatencyLe100ms: 5n, fetchLatencyLe500ms: 6n, fetchLatencyLe1000ms: 7n, fetchLatencyLe5000ms: 8n,
      fetchLatencyLeInf: 9n, fetchLatencySumMs: 3456n, emptyWaits: 1n, skipped: 40n, remaining: 960n,
    },
  },
  { family: 'dictionary', labels: ['dict', 'tags'], values: { idHits: 5n, idMisses: 3n, statements: 4n, retries: 1n } },
]

test('a dense-ID allocator\'s latency is a histogram in seconds; milliseconds are seconds', { skip }, async (t) => {
  exporters.setSource(() => scripted(SCRIPT))
  t.after(() => exporters.setSource(null))
  const registry = new promClient.Registry()
  prometheus.register(registry)
  const families = await scrape(registry)
  const latency = families.get('shardid_segment_fetch_latency_seconds')
  const labels = { schema: 'seg', tag: 'orders' }
  const buckets = latency.samples.filter((s) => s.name.endsWith('_bucket'))
  assert.deepEqual(buckets.map((s) => s.labels), ['0.001', '0.005', '0.01', '0.05', '0.1', '0.5', '1', '5', '+Inf'].map((le) => ({ ...labels, le })))
  assert.deepEqual(buckets.map((s) => s.value), [1, 2, 3, 4, 5, 6, 7, 8, 9])
  assert.deepEqual(latency.samples.filter((s) => !s.name.endsWith('_bucket')).map((s) => [s.name, s.labels, s.value]), [
    ['shardid_segment_fetch_latency_seconds_sum', labels, 3.456],
    ['shardid_segment_fetch_latency_seconds_count', labels, 9],
  ])
  const one = (name) => {
    const f = families.get(name)
    assert.equal(f.samples.length, 1, name)
    assert.deepEqual(f.samples[0].labels, f.samples[0].labels.topic ? { schema: 'dict', topic: 'tags' } : labels, name)
    return f.samples[0].value
  }
  assert.equal(one('shardid_segment_fetch_latency_last_seconds'), 0.25)
  assert.equal(one('shardid_segment_fetch_latency_max_seconds'), 1.5)
  assert.equal(one('shardid_segment_fetches_total'), 7)
  assert.equal(one('shardid_segment_failed_fetches_total'), 2)
  assert.equal(one('shardid_segment_empty_waits_total'), 1)
  assert.equal(one('shardid_segment_skipped_total'), 40)
  assert.equal(one('shardid_segment_remaining'), 960)
  assert.equal(one('shardid_dictionary_id_hits_total'), 5)
  assert.equal(one('shardid_dictionary_id_misses_total'), 3)
  assert.equal(one('shardid_dictionary_value_hits_total'), 0)
  assert.equal(one('shardid_dictionary_statements_total'), 4)
  assert.equal(one('shardid_dictionary_retries_total'), 1)
  assert.deepEqual(families.get('shardid_ids_total').samples.map((s) => [s.labels.shard, s.value]), [['1', 10], ['2', 20]])
  assert.deepEqual(families.get('shardid_ticker_starts_total').samples, [{ name: 'shardid_ticker_starts_total', labels: {}, value: 3 }])
  assert.equal(families.get('shardid_segment_fetch_latency_max_seconds').type, 'gauge')
  assert.deepEqual(registry.getSingleMetric('shardid_segment_fetch_latency_max_seconds').aggregator, 'max')
})

/** A pg.Client stand-in for denseIds({ client }): segments of `count` from a counter, one
 *  row per statement, as take_segment answers; give_back says yes. */
function scriptedClient (count) {
  let next = 1
  return {
    connect: async () => {},
    end: async () => {},
    on () {},
    query: async ({ text, values }) => {
      if (/give_back/.test(text)) return { rows: [[true]] }
      const first = next
      next += count
      assert.ok(/take_segment/.test(text), text)
      assert.equal(values.length, 2)
      return { rows: [[String(first), String(count), '1']] }
    },
  }
}

/** A pg.Pool stand-in for new Dictionary({ pool }): topic IDs from 0 in the order strings
 *  arrive, values of IDs it gave. */
function scriptedPool () {
  const ids = new Map()
  return {
    query: async ({ text, values: [, batch] }) => {
      if (/\.dict_values\(/.test(text)) {
        const byId = new Map([...ids].map(([v, id]) => [String(id), v]))
        return { rows: [[batch.map((id) => byId.get(id) ?? null)]] }
      }
      assert.match(text, /\.dict_ids\(/)
      for (const v of batch) if (!ids.has(v)) ids.set(v, ids.size)
      return { rows: [[batch.map((v) => String(ids.get(v)))]] }
    },
  }
}

/** One family's samples with `labels`, by sample name. */
function withLabels (families, name, labels) {
  const family = families.get(name)
  return family.samples.filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
}

test('a Node dense-ID allocator is reported while open: its stats(), under schema and tag; closed, it is gone', { skip }, async () => {
  const { denseIds } = requirePkg('./segments.js')
  const registry = new promClient.Registry()
  prometheus.register(registry)
  const labels = { schema: 'seg_exp', tag: 'exported' }
  const ids = await denseIds({ client: scriptedClient(10), tag: 'exported', schema: 'seg_exp', minSize: 10, maxSize: 10 })
  for (let i = 0; i < 25; i++) await ids.nextIdAsync() // crosses segments: several fetches
  const stats = ids.stats()
  assert.ok(stats.fetches >= 3n, `25 IDs from segments of 10: ${stats.fetches} fetches`)
  let families = await scrape(registry)
  const fetches = withLabels(families, 'shardid_segment_fetches_total', labels)
  assert.deepEqual(fetches.map((s) => BigInt(s.value)), [stats.fetches])
  assert.deepEqual(fetches[0].labels, labels, 'exactly the labels schema and tag')
  assert.deepEqual(withLabels(families, 'shardid_segment_remaining', labels).map((s) => BigInt(s.value)), [stats.remaining])
  const count = withLabels(families, 'shardid_segment_fetch_latency_seconds', labels).find((s) => s.name.endsWith('_count'))
  assert.equal(BigInt(count.value), stats.fetchLatencyLeInf)
  // OpenTelemetry reads the same objects.
  const reader = new TestReader()
  const provider = new otel.MeterProvider({ readers: [reader] })
  opentelemetry.instrument(provider.getMeter('shardid-test'))
  const points = (await readOtel(reader)).get('shardid.segment.fetches').dataPoints.filter((p) => p.attributes.tag === 'exported')
  assert.deepEqual(points.map((p) => [p.attributes, BigInt(p.value)]), [[labels, stats.fetches]])
  await ids.close()
  families = await scrape(registry)
  assert.deepEqual(withLabels(families, 'shardid_segment_fetches_total', labels), [], 'closed: no longer reported')
  assert.deepEqual(withLabels(families, 'shardid_segment_fetch_latency_seconds', labels), [])
  await provider.shutdown()
  // (A reader that saw it keeps its last point, as the SDK does for any attribute set that is
  // no longer observed: a new one does not see it.)
  const fresh = new TestReader()
  const later = new otel.MeterProvider({ readers: [fresh] })
  opentelemetry.instrument(later.getMeter('shardid-test'))
  assert.equal((await readOtel(fresh)).get('shardid.segment.fetches')?.dataPoints.filter((p) => p.attributes.tag === 'exported').length ?? 0, 0)
  await later.shutdown()
  // A start that failed (no segment) is never reported either.
  const failing = { ...scriptedClient(10), query: async () => { throw Object.assign(new Error('no such tag'), { code: 'P0001' }) } }
  await assert.rejects(denseIds({ client: failing, tag: 'never_started', schema: 'seg_exp', waitMs: 50 }))
  assert.deepEqual(withLabels(await scrape(registry), 'shardid_segment_failed_fetches_total', { tag: 'never_started' }), [])
})

test('a Node serials allocator is reported while open: its segments\' stats(), under schema and its serial tag; closed, it is gone', { skip }, async (t) => {
  const { createSerial, serials } = requirePkg('./segments.js')
  const dir = mkdtempSync(join(tmpdir(), 'shardid-exporters-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const url = `sqlite:///${join(dir, 'serials.db')}`
  await createSerial(url, 'exported_ser', 'E-{yyyy}-{seq:6}', { zone: 'UTC' })
  const registry = new promClient.Registry()
  prometheus.register(registry)
  const labels = { schema: 'main', tag: 'exported_ser' }
  const orders = await serials({ connectionString: url, tag: 'exported_ser', format: 'E-{yyyy}-{seq:6}', zone: 'UTC', minSize: 2, maxSize: 2 })
  for (let i = 0; i < 7; i++) await orders.nextSerialAsync() // segments of 2: several fetches
  const stats = orders.stats()
  assert.ok(stats.fetches >= 3n, `7 serials from segments of 2: ${stats.fetches} fetches`)
  const fetches = withLabels(await scrape(registry), 'shardid_segment_fetches_total', labels)
  assert.deepEqual(fetches.map((s) => [s.labels, BigInt(s.value)]), [[labels, stats.fetches]])
  await orders.close()
  assert.deepEqual(withLabels(await scrape(registry), 'shardid_segment_fetches_total', labels), [], 'closed: no longer reported')
})

test('a Node serials allocator\'s holes are counted once, by the core: skipped, stats() and the exporters say the same', { skip }, async (t) => {
  const { createSerial, serials } = requirePkg('./segments.js')
  const dir = mkdtempSync(join(tmpdir(), 'shardid-exporters-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const url = `sqlite:///${join(dir, 'holes.db')}`
  const format = 'H-{yyyy}{MM}{dd}-{seq:6}'
  const day = 1_764_028_800_000 // 2025-11-25 00:00 UTC
  await createSerial(url, 'holes_js', format, { zone: 'UTC' })
  const registry = new promClient.Registry()
  prometheus.register(registry)
  const open = () => serials({ connectionString: url, tag: 'holes_js', format, zone: 'UTC', minSize: 2, maxSize: 2 })
  const [a, b] = [await open(), await open()]
  assert.equal(await a.nextSerialAtAsync(day), 'H-20251125-000001')
  await b.nextSerialAtAsync(day) // takes after a: a's rest can no longer go back
  await a.nextSerialAtAsync(day + 86_400_000) // a's day ends: its rest is a hole
  await a._givingBack // the day's rest is given back (or counted) off the call
  assert.ok(a.skipped > 0n, `a hole: ${a.skipped}`)
  assert.equal(a.stats().skipped, a.skipped)
  const exported = withLabels(await scrape(registry), 'shardid_segment_skipped_total', { schema: 'main', tag: 'holes_js' })
  assert.deepEqual(exported.map((s) => BigInt(s.value)), [a.skipped + b.skipped])
  await a.close()
  await b.close()
})

test('a Node Dictionary is reported while open: its hits and misses, under schema and topic; closed, it is gone', { skip }, async () => {
  const { Dictionary } = requirePkg('./dictionary.js')
  const registry = new promClient.Registry()
  prometheus.register(registry)
  const labels = { schema: 'dict_exp', topic: 'exported' }
  const dictionary = new Dictionary({ pool: scriptedPool(), topic: 'exported', schema: 'dict_exp' })
  assert.deepEqual(await dictionary.ids(['a', 'b', 'a']), [0n, 1n, 0n])
  assert.equal(await dictionary.id('a'), 0n) // a hit
  assert.equal(await dictionary.id('c'), 2n) // a miss
  assert.equal(await dictionary.value(1n), 'b') // a hit: the cache holds both ways
  const stats = dictionary.stats()
  assert.equal(stats.idHits, 1n)
  assert.ok(stats.idMisses >= 2n, `${stats.idMisses}`)
  const families = await scrape(registry)
  for (const [name, figure] of [['id_hits', 'idHits'], ['id_misses', 'idMisses'], ['value_hits', 'valueHits'], ['value_misses', 'valueMisses'], ['statements', 'statements']]) {
    const got = withLabels(families, `shardid_dictionary_${name}_total`, labels)
    assert.deepEqual(got.map((s) => [s.labels, BigInt(s.value)]), [[labels, stats[figure]]], name)
  }
  await dictionary.close()
  const after = await scrape(registry)
  for (const name of ['id_hits', 'id_misses', 'statements']) {
    assert.deepEqual(withLabels(after, `shardid_dictionary_${name}_total`, labels), [], `${name}: closed, no longer reported`)
  }
  // A Dictionary whose constructor refused never reports.
  assert.throws(() => new Dictionary({ connectionString: [], topic: 'refused', schema: 'dict_exp' }), (err) => err.code === 'INVALID_ARGUMENT')
  assert.deepEqual(withLabels(await scrape(registry), 'shardid_dictionary_statements_total', { topic: 'refused' }), [])
})

test('register() takes a registry, all or nothing', { skip }, async () => {
  assert.throws(() => prometheus.register({}), (err) => err instanceof TypeError && err.code === 'INVALID_ARGUMENT' && err.argument === 'registry' && /^registry must be a prom-client Registry/.test(err.message))
  const registry = new promClient.Registry()
  new promClient.Counter({ name: 'shardid_waits_total', help: 'taken', registers: [registry] })
  assert.throws(() => prometheus.register(registry), /shardid_waits_total has already been registered/)
  assert.deepEqual(registry.getMetricsAsArray().map((m) => m.name), ['shardid_waits_total'], 'none of shardid\'s added')
  // The default registry, when none is given.
  const added = prometheus.register()
  try {
    assert.match(await promClient.register.metrics(), /^# TYPE shardid_ids_total counter$/m)
  } finally {
    for (const m of added) promClient.register.removeSingleMetric(m.name)
  }
})

class TestReader extends (otel?.MetricReader ?? Object) {
  async onForceFlush () {}
  async onShutdown () {}
}

/** Every metric the SDK's reader collected, by name. */
async function readOtel (reader) {
  const { resourceMetrics, errors } = await reader.collect()
  assert.deepEqual(errors, [])
  return new Map(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).map((m) => [m.descriptor.name, m]))
}

test('OpenTelemetry observable instruments read through the SDK', { skip }, async () => {
  const reader = new TestReader()
  const provider = new otel.MeterProvider({ readers: [reader] })
  const instruments = opentelemetry.instrument(provider.getMeter('shardid-test'))
  const g = new Generator({ layout: Layout.INSTAGRAM, shard: 1004 })
  g.nextIds(321)
  const slow = new Generator({ layout: SLOW, shard: 62 })
  for (let i = 0; i < 10; i++) slow.nextId()
  const metrics = await readOtel(reader)
  const ids = metrics.get('shardid.ids')
  assert.equal(ids.descriptor.description, 'IDs handed out')
  assert.equal(ids.descriptor.type, otel.InstrumentType.OBSERVABLE_COUNTER)
  assert.equal(ids.isMonotonic, true)
  const point = (m, layout, shard) => {
    const found = m.dataPoints.filter((p) => p.attributes.layout === layout && p.attributes.shard === String(shard))
    assert.equal(found.length, 1, `${m.descriptor.name} ${layout} ${shard}`)
    return found[0].value
  }
  assert.equal(point(ids, 'INSTAGRAM', 1004), 321)
  const stats = slow.stats()
  assert.ok(stats.waits >= 1n)
  assert.equal(BigInt(point(metrics.get('shardid.waits'), SLOW_LABEL, 62)), stats.waits)
  const ticker = metrics.get('shardid.ticker_starts')
  assert.equal(ticker.dataPoints.length, 1)
  assert.deepEqual(ticker.dataPoints[0].attributes, {})
  // One instrument per name of the core's table (a histogram's buckets share one).
  const table = native.statsTable()
  // The names Python's shardid.opentelemetry documents.
  const otelNames = new Set(table.flatMap((f) => f.metrics.map((m) => m.opentelemetry)))
  assert.equal(instruments.length, otelNames.size)
  for (const name of ['shardid.ids', 'shardid.waits', 'shardid.segment.fetch_latency_last', 'shardid.segment.fetch_latency.bucket', 'shardid.segment.fetch_latency.sum', 'shardid.dictionary.id_hits']) {
    assert.ok(otelNames.has(name), name)
  }
  // Read again: the counts of now.
  g.nextIds(79)
  assert.equal(point((await readOtel(reader)).get('shardid.ids'), 'INSTAGRAM', 1004), 400)
  await provider.shutdown()
})

test('OpenTelemetry: buckets by `le` in milliseconds, gauges in ms, through an exporter', { skip }, async (t) => {
  exporters.setSource(() => scripted(SCRIPT))
  t.after(() => exporters.setSource(null))
  const exporter = new otel.InMemoryMetricExporter(otel.AggregationTemporality.CUMULATIVE)
  const reader = new otel.PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  const provider = new otel.MeterProvider({ readers: [reader] })
  opentelemetry.instrument(provider.getMeter('shardid-test'))
  await reader.forceFlush()
  const metrics = new Map(exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics)).map((m) => [m.descriptor.name, m]))
  const buckets = metrics.get('shardid.segment.fetch_latency.bucket')
  assert.equal(buckets.descriptor.unit, 'ms')
  assert.equal(buckets.descriptor.description, 'Fetches (failed ones too) that took at most the bucket\'s bound, `le`')
  assert.equal(metrics.get('shardid.segment.fetch_latency.sum').descriptor.description, 'How long the fetches took, added up (failed ones too)')
  assert.deepEqual(buckets.dataPoints.map((p) => [p.attributes.le, p.value]),
    [['1', 1], ['5', 2], ['10', 3], ['50', 4], ['100', 5], ['500', 6], ['1000', 7], ['5000', 8], ['+Inf', 9]])
  assert.deepEqual(buckets.dataPoints[0].attributes, { schema: 'seg', tag: 'orders', le: '1' })
  assert.equal(metrics.get('shardid.segment.fetch_latency.sum').dataPoints[0].value, 3456)
  const last = metrics.get('shardid.segment.fetch_latency_last')
  assert.equal(last.descriptor.type, otel.InstrumentType.OBSERVABLE_GAUGE)
  assert.equal(last.descriptor.unit, 'ms')
  assert.equal(last.dataPoints[0].value, 250)
  assert.equal(metrics.get('shardid.segment.remaining').dataPoints[0].value, 960)
  assert.equal(metrics.get('shardid.segment.remaining').descriptor.unit, '1')
  assert.deepEqual(metrics.get('shardid.dictionary.statements').dataPoints.map((p) => [p.attributes, p.value]), [[{ schema: 'dict', topic: 'tags' }, 4]])
  assert.deepEqual(metrics.get('shardid.ticker_starts').dataPoints.map((p) => p.value), [3])
  assert.throws(() => opentelemetry.instrument({}), (err) => err instanceof TypeError && err.code === 'INVALID_ARGUMENT' && err.argument === 'meter')
  await provider.shutdown()
})

test('without prom-client or @opentelemetry/api installed: shardid works, the entries say what to install', { skip }, () => {
  // The package as npm installs it (its `files`, the addon), in a project without the peers.
  const project = mkdtempSync(join(tmpdir(), 'shardid-peers-'))
  try {
    const into = join(project, 'node_modules', 'shardid')
    mkdirSync(into, { recursive: true })
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'))
    for (const file of [...manifest.files, 'package.json', ...readdirSync(pkg).filter((f) => f.endsWith('.node'))]) {
      try {
        cpSync(join(pkg, file), join(into, file))
      } catch (err) {
        if (!(err.code === 'ENOENT' && /^(README|LICENSE)/.test(file))) throw err
      }
    }
    // Installed from the tarballs (tests/packaging), the addon is a package of its own beside it.
    if (basename(dirname(pkg)) === 'node_modules') {
      for (const name of readdirSync(dirname(pkg)).filter((n) => n.startsWith('shardid-'))) {
        cpSync(join(dirname(pkg), name), join(project, 'node_modules', name), { recursive: true })
      }
    }
    writeFileSync(join(project, 'package.json'), '{ "private": true }\n')
    const script = `
      const out = {}
      const { Generator, Layout } = require('shardid')
      new Generator({ layout: Layout.TWITTER, shard: 3 }).nextIds(5)
      out.loaded = Object.keys(require.cache).filter((f) => /prom-client|@opentelemetry/.test(f))
      for (const entry of ['shardid/prometheus', 'shardid/opentelemetry']) {
        try { require(entry); out[entry] = 'loaded' } catch (err) {
          out[entry] = { code: err.code, dependency: err.dependency, message: err.message, cause: err.cause?.code }
        }
      }
      console.log(JSON.stringify(out))`
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: project, encoding: 'utf8' }))
    assert.deepEqual(out.loaded, [], 'shardid itself loads neither')
    assert.deepEqual(out['shardid/prometheus'], {
      code: 'MISSING_PEER_DEPENDENCY',
      dependency: 'prom-client',
      message: 'shardid/prometheus needs the package prom-client, an optional peer dependency of shardid that is not installed: npm install prom-client',
      cause: 'MODULE_NOT_FOUND',
    })
    assert.equal(out['shardid/opentelemetry'].code, 'MISSING_PEER_DEPENDENCY')
    assert.equal(out['shardid/opentelemetry'].dependency, '@opentelemetry/api')
    assert.match(out['shardid/opentelemetry'].message, /npm install @opentelemetry\/api$/)
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
})

test("installed from a folder (npm install ../shardid, npm link): register() fills the application's prom-client, not shardid's own", { skip }, () => {
  // The application's node_modules: shardid as a link to the package's folder (which holds its
  // own development copy of prom-client), and a copy of prom-client of its own.
  const project = mkdtempSync(join(tmpdir(), 'shardid-linked-'))
  try {
    const modules = join(project, 'node_modules')
    mkdirSync(modules, { recursive: true })
    symlinkSync(pkg, join(modules, 'shardid'), 'dir')
    const copy = (name) => {
      if (existsSync(join(modules, name))) return
      const from = join(pkg, 'node_modules', name)
      cpSync(from, join(modules, name), { recursive: true })
      for (const dep of Object.keys(JSON.parse(readFileSync(join(from, 'package.json'), 'utf8')).dependencies ?? {})) copy(dep)
    }
    copy('prom-client')
    writeFileSync(join(project, 'package.json'), '{ "private": true }\n')
    const script = (load) => `
      ${load}
      const { Generator, Layout } = shardid
      prometheus.register()
      new Generator({ layout: Layout.TWITTER, shard: 3 }).nextIds(5)
      const own = require.resolve('prom-client').startsWith(${JSON.stringify(modules)})
      promClient.register.metrics().then((text) => console.log(JSON.stringify({ own, families: (text.match(/^# TYPE shardid_/gm) ?? []).length })))`
    const common = script(`const promClient = require('prom-client'), shardid = require('shardid'), prometheus = require('shardid/prometheus')`)
    writeFileSync(join(project, 'main.js'), common)
    for (const args of [['main.js'], ['-e', common]]) {
      // A script (require.main), and code with no main script (the working directory).
      const out = JSON.parse(execFileSync(process.execPath, args, { cwd: project, encoding: 'utf8' }))
      assert.equal(out.own, true)
      assert.ok(out.families > 5, `${args[0]}: the application's registry has ${out.families} shardid families`)
    }
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
})
