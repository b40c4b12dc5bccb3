// Knex on MySQL and MariaDB with shardid, as the README shows it: `node knex_node.mjs <mysql://
// URL>`. Knex's mysql2 client with exactBigints, the database's next_id() installed from Node
// one statement at a time (ddl() and statements()) and made the id's default by a BEFORE INSERT
// trigger (MySQL takes no stored function as a column DEFAULT), the application's own IDs beside
// it. Prints one JSON line.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const knexFactory = require('knex')
const { Generator, Layout } = require('./index.js')
const { ddl, statements, exactBigints, parseUrl } = require('./mysql.js')

const [url] = process.argv.slice(2)
const u = parseUrl(url)
const knex = knexFactory({
  client: 'mysql2',
  connection: { host: u.host, port: u.port, user: u.user, password: u.password ?? undefined, database: u.database, ...exactBigints },
})
const ids = new Generator({ layout: Layout.TWITTER, shard: 33 })

// Once, in a migration: the database's next_id() on its own shard, then the table and trigger.
for (const statement of statements(ddl({ layout: Layout.TWITTER, shard: 41, schema: 'knex_ids' }))) {
  await knex.raw(statement)
}
await knex.schema.dropTableIfExists('knex_events')
await knex.schema.createTable('knex_events', (t) => {
  t.bigInteger('id').notNullable().defaultTo(0).primary()
  t.string('source').notNullable()
})
await knex.raw('CREATE TRIGGER knex_events_id BEFORE INSERT ON knex_events FOR EACH ROW ' +
  'SET NEW.id = IF(NEW.id IS NULL OR NEW.id = 0, knex_ids.next_id(), NEW.id)')

// The application's IDs, made in the process (no round trip), as bigints or strings.
await knex('knex_events').insert(Array.from({ length: 200 }, () => ({ id: ids.nextId(), source: 'app' })))
await knex('knex_events').insert(Array.from({ length: 100 }, () => ({ id: ids.nextIdString(), source: 'app' })))
// Rows without an id get the database's.
await knex('knex_events').insert(Array.from({ length: 300 }, () => ({ source: 'db' })))
const rows = (await knex('knex_events').select('id', 'source').orderBy('id')).map((r) => ({ ...r, id: BigInt(r.id) }))
const one = await knex('knex_events').where({ id: rows[0].id }).first()
await knex.schema.dropTable('knex_events')
await knex.destroy()
console.log(JSON.stringify({
  rows: rows.length,
  distinct: new Set(rows.map((r) => r.id)).size,
  // Above 2^53 (Twitter's IDs are): exact only as strings from mysql2 (exactBigints).
  aboveSafeInteger: rows.every((r) => r.id > BigInt(Number.MAX_SAFE_INTEGER)),
  shards: [...new Set(rows.map((r) => `${r.source} ${Layout.TWITTER.decode(r.id).shard}`))].sort(),
  foundById: BigInt(one?.id) === rows[0].id,
}))
