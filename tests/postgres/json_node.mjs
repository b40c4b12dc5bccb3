// Node's pg with shardid's int8AsBigInt, against the tests' server: `node json_node.mjs
// <connection string>`. An ID above 2^53 goes in as a bigint and comes back as the same bigint,
// alone and in an array, and out as JSON through jsonReplacer / jsonReviver; prints one JSON line.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const pg = require('pg')
const { Generator, Layout, jsonReplacer, jsonReviver } = require('./index.js')
const { int8AsBigInt, ddl } = require('./postgres.js')

const [connectionString] = process.argv.slice(2)
const client = new pg.Client({ connectionString })
await client.connect()
const before = (await client.query('SELECT 4036916263258161153::int8 AS id')).rows[0].id
int8AsBigInt(pg.types)
const ids = new Generator({ layout: Layout.INSTAGRAM, shard: 21 }).nextIds(3)
await client.query('CREATE TEMP TABLE notes (id bigint PRIMARY KEY, parent bigint)')
await client.query('INSERT INTO notes SELECT unnest($1::bigint[]), NULL', [[...ids].map(String)])
const rows = (await client.query('SELECT id, parent FROM notes ORDER BY id')).rows
const array = (await client.query('SELECT array_agg(id ORDER BY id) AS ids FROM notes')).rows[0].ids
const body = JSON.stringify(rows, jsonReplacer)
// The DDL from Node, installed and used: next_id() makes IDs of shard 77 in the database.
const sql = ddl({ layout: Layout.TWITTER, shard: 77, schema: 'from_node' })
await client.query(sql)
const made = (await client.query('SELECT from_node.next_id() AS id FROM generate_series(1, 3)')).rows.map((r) => r.id)
const back = JSON.parse(body, jsonReviver(['id', 'parent'], Layout.INSTAGRAM))
await client.end()
console.log(JSON.stringify({
  without: typeof before,
  types: rows.map((r) => typeof r.id),
  exact: rows.every((r, i) => r.id === ids[i]) && array.every((v, i) => v === ids[i]),
  json: back.every((r, i) => r.id === ids[i] && r.parent === null),
  body: body.includes(`"id":"${ids[0]}"`),
  ddl: sql,
  madeShards: made.map((id) => Layout.TWITTER.decode(id).shard),
  madeDistinct: new Set(made).size,
}))
