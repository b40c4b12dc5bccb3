// Drizzle ORM on PostgreSQL with shardid, as the README shows it: `node drizzle_node.mjs
// <connection string>`. The schema's id is made by the application ($defaultFn) for rows
// Drizzle inserts, and by the database's next_id() (the column default, installed from Node
// with ddl()) for rows inserted by anything else; `mode: 'bigint'` reads them back exactly.
// Prints one JSON line.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const pg = require('pg')
const { drizzle } = require('drizzle-orm/node-postgres')
const { bigint, pgTable, text } = require('drizzle-orm/pg-core')
const { asc, eq, sql } = require('drizzle-orm')
const { Generator, Layout } = require('./index.js')
const { ddl } = require('./postgres.js')

const [connectionString] = process.argv.slice(2)
const ids = new Generator({ layout: Layout.INSTAGRAM, shard: 12 })

// The schema, as in the application's schema.ts.
const events = pgTable('drizzle_events', {
  id: bigint('id', { mode: 'bigint' })
    .primaryKey()
    .$defaultFn(() => ids.nextId())
    .default(sql`drizzle_ids.next_id()`),
  source: text('source').notNull(),
})

const pool = new pg.Pool({ connectionString })
const db = drizzle(pool)

// Once, in a migration (drizzle-kit generate --custom): the database's next_id() on its own
// shard, before the table whose default calls it.
await db.execute(sql.raw(ddl({ layout: Layout.INSTAGRAM, shard: 8191, schema: 'drizzle_ids' })))
await db.execute(sql`DROP TABLE IF EXISTS drizzle_events`)
await db.execute(sql`CREATE TABLE drizzle_events (id bigint PRIMARY KEY DEFAULT drizzle_ids.next_id(), source text NOT NULL)`)

// Drizzle's inserts: the application's IDs, made in the process.
const inserted = await db.insert(events).values(Array.from({ length: 300 }, () => ({ source: 'app' }))).returning({ id: events.id })
// An ID given explicitly (from a string, as an API receives it).
await db.insert(events).values({ id: BigInt(ids.nextIdString()), source: 'given' })
// Rows inserted by SQL without an id get the database's.
await db.execute(sql`INSERT INTO drizzle_events (source) SELECT 'db' FROM generate_series(1, 300)`)

const rows = await db.select().from(events).orderBy(asc(events.id))
const [found] = await db.select().from(events).where(eq(events.id, inserted[0].id))
await db.execute(sql`DROP TABLE drizzle_events`)
await pool.end()
console.log(JSON.stringify({
  rows: rows.length,
  distinct: new Set(rows.map((r) => r.id)).size,
  bigints: rows.every((r) => typeof r.id === 'bigint'),
  returnedBigints: inserted.every((r) => typeof r.id === 'bigint'),
  shards: [...new Set(rows.map((r) => `${r.source} ${Layout.INSTAGRAM.decode(r.id).shard}`))].sort(),
  foundById: found?.id === inserted[0].id,
  aboveSafeInteger: rows.every((r) => r.id > BigInt(Number.MAX_SAFE_INTEGER)),
}))
