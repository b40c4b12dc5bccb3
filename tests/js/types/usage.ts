// Compiled by `tsc --noEmit --strict` in tests/js/run.sh: the public types fit real use.
import shardid, { Generator, Layout, lease, ShardIdError, jsonReplacer, jsonReviver, type LeasedGenerator, type Parts, type ErrorCode } from 'shardid'
import { lease as leaseMysql, type MysqlLease } from 'shardid/mysql'
import { lease as leasePostgres, int8AsBigInt, ddl as postgresDdl, type PostgresLease } from 'shardid/postgres'
import { denseIds, type DenseIds, SerialFormat, serials, createSerial, createTag, type Serials, type ParsedSerial } from 'shardid/segments'
import { Dictionary, ddl, serverFor } from 'shardid/dictionary'
import { read as readStatus, type StatusReport } from 'shardid/status'

const gen: Generator = new Generator({ layout: Layout.INSTAGRAM, shard: 5 })
const id: bigint = gen.nextId()
const asJson: string = gen.nextIdString()
const waits: bigint = gen.stats().waits
console.log(waits)
const batch: BigUint64Array = gen.nextIds(100)
const later: Promise<BigUint64Array> = gen.nextIdsAsync(1_000_000)
console.log(later)
const parts: Parts = Layout.INSTAGRAM.decode(id)
const when: Date = parts.date
const fields: number = parts.timestampMs + parts.shard + parts.sequence
const fromString: Parts = shardid.Layout.DISCORD.decode('175928847299117063')
const custom = new Layout({ epochMs: 1_293_840_000_000, timeBits: 41, shardBits: 13, sequenceBits: 10 })
const range: [bigint, bigint] = [custom.minIdAt(new Date()), custom.maxIdAt(Date.now())]
const shard: number = custom.shardForKey(31_341n, 2000)
const at: bigint = new Generator({ layout: custom, shard: 1n, maxBorrowUnits: 2 }).nextIdAt(new Date())
try {
  Layout.TWITTER.decode(-1n)
} catch (err) {
  const code = (err as { code: ErrorCode }).code
  console.log(code)
  // instanceof narrows to the union of every kind; the code narrows to one kind's fields.
  if (err instanceof ShardIdError) {
    const message: string = err.message
    if (err.code === 'SEQUENCE_EXHAUSTED') {
      const retryAt: bigint = err.retryAtMs
      console.log(message, retryAt)
    } else if (err.code === 'INVALID_LAYOUT') {
      const reason: string = err.reason
      console.log(reason)
    }
  }
}
// @ts-expect-error: a layout is required
new Generator({ shard: 1 })
// @ts-expect-error: IDs are not booleans
Layout.TWITTER.decode(true)
const leased: LeasedGenerator = lease({ layout: Layout.TWITTER, directory: '/tmp/shards', shards: [0, 64] })
const leasedShard: number = leased.shard
const leasedIds: BigUint64Array = leased.nextIds(10)
console.log(leasedShard, leasedIds)
async function fromDatabase(): Promise<bigint> {
  const db: PostgresLease = await leasePostgres({ layout: Layout.INSTAGRAM, connectionString: 'postgresql://app@db/app', shards: [0, 64] })
  const next: bigint = await db.nextId()
  const held: boolean = db.held
  const late: bigint = db.stats().lateRenewals
  const writes: bigint = db.stats().ceilingWrites
  // @ts-expect-error: the counts are camelCase in JavaScript
  db.stats().late_renewals
  console.log(late, writes)
  await db.close()
  // Behind a pooler or not; a session lease for a direct connection.
  const pooled = await leasePostgres({ layout: Layout.INSTAGRAM, connectionString: 'postgresql://app@pooler:6543/app', shards: [0, 64], ttlMs: 5000, retake: true })
  const session = await leasePostgres({ layout: Layout.INSTAGRAM, connectionString: 'postgresql://app@db/app', shards: [0, 64], kind: 'session' })
  // @ts-expect-error: only two kinds
  await leasePostgres({ layout: Layout.INSTAGRAM, connectionString: 'postgresql://app@db/app', shards: [0, 64], kind: 'advisory' })
  await pooled.close()
  await session.close()
  console.log(held)
  return next
}
void fromDatabase
// The book's MySQL lease (docs/src/databases/mysql.md), typed.
async function fromMysql(): Promise<bigint> {
  const server: string = 'mysql://app@db'   // the book reads process.env.MYSQL_URL
  const ids: MysqlLease = await leaseMysql({ layout: Layout.INSTAGRAM, url: `${server}/app`, shards: [0, 64] })
  const next: bigint = await ids.nextId()
  const renewals: bigint = ids.stats().lateRenewals
  // @ts-expect-error: a MySQL lease takes a url, not pg's connectionString
  await leaseMysql({ layout: Layout.INSTAGRAM, connectionString: 'mysql://app@db/app', shards: [0, 64] })
  await ids.close()
  console.log(renewals)
  return next
}
void fromMysql
console.log(asJson, batch, when, fields, fromString, range, shard, at, shardid.version)

// Dense IDs from segments: a synchronous bigint, async batches, several ticket servers.
async function orders(): Promise<bigint> {
  const ids: DenseIds = await denseIds({ connectionString: ['postgresql://a/db', 'postgresql://b/db'], tag: 'orders' })
  const batch: BigUint64Array = await ids.nextIdsAsync(10)
  const skipped: bigint = ids.skipped
  const fetches: bigint = ids.stats().fetches + ids.stats().fetchLatencyLeInf
  console.log(fetches)
  await ids.close()
  console.log(batch, skipped)
  // @ts-expect-error: a tag is required
  await denseIds({ connectionString: 'postgresql://a/db' })
  return ids.nextId()
}
console.log(orders)

// Business serial numbers: strings out, bigint numbers when parsed back.
async function invoices(): Promise<string> {
  await createSerial({ connectionString: 'postgresql://a/db', tag: 'invoices', format: 'INV-{yyyy}{MM}-{seq:6}', zone: 'Asia/Shanghai' })
  // The same entry points whatever the URL's database.
  await createSerial('postgresql://a/db', 'invoices', 'INV-{yyyy}{MM}-{seq:6}', { zone: 'Asia/Shanghai', maxGap: 10 })
  await createTag('mysql://a/seg', 'orders')
  await createTag(['postgresql://a/db', 'postgresql://b/db'], 'orders', { schema: 'seg' })
  const topic: Dictionary = new Dictionary('mysql://a/dict', 'urls', { cacheSize: 10 })
  await topic.create()
  const s: Serials = await serials({ connectionString: 'postgresql://a/db', tag: 'invoices', format: 'INV-{yyyy}{MM}-{seq:6}', zone: 'Asia/Shanghai' })
  const first: string = await s.nextSerialAsync()
  const parsed: ParsedSerial = s.parse(first)
  const n: bigint = parsed.number
  const hour: number | null = parsed.hour
  const f = new SerialFormat('ORD-{yyyy}{MM}{dd}-{seq:6}', 'UTC')
  const replay: string = f.render(123n, 1_795_536_000_000) + f.periodAt(1_795_536_000_000) + f.reset
  console.log(n, hour, replay, f.maxNumber + 1n)
  // @ts-expect-error: a zone is required
  await serials({ connectionString: 'postgresql://a/db', tag: 'invoices', format: 'INV-{seq:6}' })
  await s.close()
  return s.nextSerial()
}
console.log(invoices)

// The string <-> ID dictionary: bigints out, null for the unknown.
async function urls(): Promise<string | null> {
  const words = new Dictionary({ connectionString: ['postgresql://a/db', 'postgresql://b/db'], topic: 'urls', cacheSize: 1000 })
  const id: bigint = await words.id('https://example.com/')
  const misses: bigint = words.stats().idMisses + words.stats().retries
  const ids: bigint[] = await words.ids(['/a', '/b'])
  const known: (bigint | null)[] = await words.lookup(new Set(['/a']))
  const strings: (string | null)[] = await words.values([0n, 1])
  const server: number = serverFor('urls', 2) + words.server + words.cache.size
  console.log(id, ids, known, strings, server, ddl('dict').length, misses)
  // @ts-expect-error: strings in, not numbers
  await words.id(5)
  await words.close()
  return words.value(id)
}
console.log(urls)

// IDs through JSON and pg.
const jsonText: string = JSON.stringify({ id: 1n }, jsonReplacer)
const revived: unknown = JSON.parse(jsonText, jsonReviver(['id'], Layout.TWITTER))
const pgTypes = { setTypeParser(_oid: number, _parse: (text: string) => unknown): void {}, getTypeParser(_oid: number) { return (text: string) => text } }
const sameTypes: typeof pgTypes = int8AsBigInt(pgTypes)
void revived
void sameTypes
void shardid.jsonReviver
const installSql: string = postgresDdl({ layout: Layout.INSTAGRAM, shard: 5, schema: 'insta5' })
void installSql

// Public IDs.
import { PublicIds, checkPublicId, type EncodingName } from 'shardid'
import { publicIdsDdl } from 'shardid/postgres'
const notes: PublicIds = new PublicIds({ key: new Uint8Array(16), prefix: 'note', encoding: 'base58', keyVersion: 2, oldKeys: { 1: new Uint8Array(16) } })
const text: string = notes.encode(id)
const back: bigint = notes.decode(text)
const version: number = notes.check(text) + checkPublicId(text, { prefix: 'note', encoding: 'base58' })
const encoding: EncodingName = notes.encoding
const fromEnv: PublicIds = PublicIds.fromKeys('00112233445566778899aabbccddeeff', { prefix: 'user', layout: Layout.DISCORD })
const body: string = JSON.stringify({ id }, notes.jsonReplacer(['id']))
const parsed: unknown = JSON.parse(body, fromEnv.jsonReviver(['id']))
const sql: string = publicIdsDdl({ schema: 'app' })
console.log(back, version, encoding, parsed, sql, notes.keyVersions.length, notes.pattern, notes.textLength)

// shardid status for programs: bigint IDs, Dates, null for "never".
async function status(): Promise<void> {
  const report: StatusReport = await readStatus('postgresql://app@db/app', { schema: 'app', layout: Layout.TWITTER })
  const next: bigint | undefined = report.tags.rows[0]?.next
  const left: number | null | undefined = report.tags.rows[0]?.yearsLeft
  const warned: boolean = report.warnings.length > 0 || report.layouts.some((l) => l.warning)
  console.log(next, left, warned, report.now.toISOString(), report.leases.present)
}
void status
// Exporters: prom-client and OpenTelemetry.
import { register as registerMetrics, metrics as shardidMetrics, type ShardIdMetric } from 'shardid/prometheus'
import { instrument } from 'shardid/opentelemetry'
import { Registry } from 'prom-client'
import { metrics as otelMetrics } from '@opentelemetry/api'
const families: ShardIdMetric[] = registerMetrics(new Registry())
const unregistered: string[] = shardidMetrics().map((m) => `${m.name} ${m.type} ${m.help}`)
void registerMetrics()
const instruments = instrument(otelMetrics.getMeter('app'))
instruments.forEach((i) => i.addCallback((result) => result.observe(1)))
void instrument()
console.log(families.length, unregistered, instruments.length)

// shardid/sqlite's UUIDv7 bridge, registered on any connection with SQLite's function().
import { uuidFunctions, UUID_FUNCTIONS } from 'shardid/sqlite'
const registered: string[] = []
uuidFunctions({ function: (name: string, _options: object, _fn: (...args: any[]) => unknown) => registered.push(name) }, Layout.INSTAGRAM)
const toUuidName: 'shardid_to_uuid' = UUID_FUNCTIONS[0]
void toUuidName

// shardid/redis's shard lease (docs/src/databases/redis.md), typed.
import { lease as leaseRedis, DEFAULT_TTL_MS, type RedisLease, type RedisLeaseOptions } from 'shardid/redis'
async function fromRedis(): Promise<bigint> {
  const options: RedisLeaseOptions = { layout: Layout.INSTAGRAM, url: 'redis://cache:6379/0', shards: [0, 64], ttlMs: DEFAULT_TTL_MS, retake: true }
  const held: RedisLease = await leaseRedis(options)
  const next: bigint = await held.nextId()
  const text: string = await held.nextIdString()
  const batch: BigUint64Array = await held.nextIds(10)
  const token: bigint = held.fencingToken
  const shard: number = held.shard
  const kept: boolean = held.held
  const ceilings: bigint = held.stats().ceilingWrites
  // The SQL leases' class: its table is the lease hash's key.
  const hash: string = held.table === held.key ? held.table : held.key
  const at: bigint = await held.nextIdAt(new Date())
  // @ts-expect-error: a lease on Redis expires; there is no session lease
  await leaseRedis({ layout: Layout.INSTAGRAM, url: 'redis://cache:6379/0', shards: [0, 64], kind: 'session' })
  // @ts-expect-error: the time to live is ttlMs, in milliseconds, as the SQL leases'
  await leaseRedis({ layout: Layout.INSTAGRAM, url: 'redis://cache:6379/0', shards: [0, 64], ttl: 5000 })
  // @ts-expect-error: a Redis lease takes a url, not pg's connectionString
  await leaseRedis({ layout: Layout.INSTAGRAM, connectionString: 'redis://cache:6379/0', shards: [0, 64] })
  await held.close()
  console.log(text, batch.length, token, shard, kept, ceilings, hash, at)
  return next
}
void fromRedis
