// Knex on PostgreSQL with shardid, as the README shows it: `node knex_node.mjs <connection
// string>`. The table's id defaults to the database's next_id() (installed from Node with
// ddl()), the application inserts its own IDs, and pg returns int8 as exact bigints
// (int8AsBigInt). Prints one JSON line.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const pg = require('pg')
const knexFactory = require('knex')
const { Generator, Layout } = require('./index.js')
const { ddl, int8AsBigInt } = require('./postgres.js')

const [connectionString] = process.argv.slice(2)
int8AsBigInt(pg.types)
const knex = knexFactory({ client: 'pg', connection: connectionString })
const ids = new Generator({ layout: Layout.TWITTER, shard: 33 })

// Once, in a migration: the database's next_id() on its own shard, then the table.
await knex.raw(ddl({ layout: Layout.TWITTER, shard: 41, schema: 'knex_ids' }))
await knex.schema.dropTableIfExists('knex_events')
await knex.schema.createTable('knex_events', (t) => {
  t.bigInteger('id').primary().defaultTo(knex.raw('knex_ids.next_id()'))
  t.text('source').notNullable()
})

// The application's IDs, made in the process (no round trip), as bigints or strings.
await knex('knex_events').insert(Array.from({ length: 200 }, () => ({ id: ids.nextId(), source: 'app' })))
await knex('knex_events').insert(Array.from({ length: 100 }, () => ({ id: ids.nextIdString(), source: 'app' })))
// Rows without an id get the database's.
await knex('knex_events').insert(Array.from({ length: 300 }, () => ({ source: 'db' })))
const rows = await knex('knex_events').select('id', 'source').orderBy('id')
const one = await knex('knex_events').where({ id: rows[0].id }).first()
await knex.schema.dropTable('knex_events')
await knex.destroy()
console.log(JSON.stringify({
  rows: rows.length,
  distinct: new Set(rows.map((r) => r.id)).size,
  bigints: rows.every((r) => typeof r.id === 'bigint'),
  shards: [...new Set(rows.map((r) => `${r.source} ${Layout.TWITTER.decode(r.id).shard}`))].sort(),
  foundById: one?.id === rows[0].id,
}))
