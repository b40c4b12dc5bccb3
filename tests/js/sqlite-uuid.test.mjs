// The UUIDv7 bridge in SQLite's SQL (issue 62): shardid/sqlite's uuidFunctions(db, layout)
// registers shardid_to_uuid (16 bytes, a BLOB), shardid_to_uuid_text and shardid_from_uuid on a
// better-sqlite3 Database or a node:sqlite DatabaseSync (sqlite-driver.mjs's). Every case of
// uuid.json a connection can be asked gives the library's bytes, text, ID or ShardIdError; BLOB
// and TEXT columns sort as the IDs. tests/python/test_sqlite_uuid.py does the same in Python.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

import { vectors, layoutFromSpec, outcome } from './load.mjs'
import { database } from './sqlite-driver.mjs'

const addonOnly = { skip: process.env.SHARDID_JS_MODULE ? 'SQLite is in the Node addon only' : false }
const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const I64_MAX = 2n ** 63n - 1n

function connection(layout) {
  const { uuidFunctions } = require('./sqlite.js')
  const db = database(':memory:')
  uuidFunctions(db, layout)
  return db
}

/** The first column of `sql`'s one row with `value` bound, integers as bigints. */
function one(db, sql, value) {
  const statement = db.prepare(sql)
  if (typeof statement.safeIntegers === 'function') statement.safeIntegers(true)
  else statement.setReadBigInts(true)
  return Object.values(statement.get(value))[0]
}

const bytesOf = (text) => Buffer.from(text.replace(/-/g, ''), 'hex')
const isUuidText = (text) => /^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$/.test(text)

test('every case of uuid.json a SQLite connection can be asked', addonOnly, () => {
  const layouts = new Map(vectors('layouts.json').layouts.map((l) => [l.name, layoutFromSpec(l.spec)]))
  // A connection's functions are of one layout; SQLite's INTEGER is signed 64-bit.
  const cases = vectors('uuid.json').cases.filter(
    (c) => c.layout !== null && BigInt(c.args.id ?? 0) <= I64_MAX && (c.op === 'to_uuid' || BigInt(c.expect.ok ?? 0) <= I64_MAX),
  )
  assert.ok(cases.length > 60)
  let checked = 0
  for (const c of cases) {
    const db = connection(layouts.get(c.layout))
    if (c.op === 'to_uuid') {
      const id = BigInt(c.args.id)
      assert.deepEqual(outcome(() => one(db, 'SELECT shardid_to_uuid_text(?)', id)), c.expect, c.name)
      const blob = outcome(() => Buffer.from(one(db, 'SELECT shardid_to_uuid(?)', id)).toString('hex'))
      assert.deepEqual(blob, c.expect.ok === undefined ? c.expect : { ok: c.expect.ok.replace(/-/g, '') }, `${c.name} (bytes)`)
    } else {
      assert.deepEqual(outcome(() => one(db, 'SELECT shardid_from_uuid(?)', c.args.uuid)), c.expect, c.name)
      if (isUuidText(c.args.uuid)) {
        assert.deepEqual(outcome(() => one(db, 'SELECT shardid_from_uuid(?)', bytesOf(c.args.uuid))), c.expect, `${c.name} (bytes)`)
      }
    }
    checked += 1
    db.close()
  }
  assert.equal(checked, cases.length)
})

test('NULL gives NULL; another layout, another version, a wrong length are refused', addonOnly, () => {
  const { Layout } = require('./index.js')
  const twitter = connection(Layout.TWITTER)
  assert.equal(one(twitter, 'SELECT shardid_from_uuid(?)', null), null)
  assert.equal(one(twitter, 'SELECT shardid_to_uuid(?)', null), null)
  assert.equal(one(twitter, 'SELECT shardid_to_uuid_text(?)', null), null)
  const made = one(connection(Layout.INSTAGRAM), 'SELECT shardid_to_uuid(?)', 2n ** 40n)
  assert.throws(() => one(twitter, 'SELECT shardid_from_uuid(?)', made), { code: 'INVALID_ARGUMENT', message: 'uuid was made for another layout' })
  assert.throws(() => one(twitter, 'SELECT shardid_from_uuid(?)', '0b7c6e2a-59d1-4c3e-9f1a-2d8e4b6a7c90'), { code: 'INVALID_ARGUMENT', message: 'uuid is not a UUIDv7' })
  assert.throws(() => one(twitter, 'SELECT shardid_from_uuid(?)', Buffer.alloc(15, 1)), { code: 'INVALID_ARGUMENT', message: 'uuid must be 16 bytes' })
  assert.throws(() => connection('twitter'), { code: 'INVALID_ARGUMENT' })
})

test('BLOB and TEXT columns sort as the IDs, IDs past 2^53 exact', addonOnly, () => {
  const { Generator, Layout } = require('./index.js')
  for (const layout of [Layout.INSTAGRAM, Layout.TWITTER, Layout.DISCORD, Layout.SONYFLAKE]) {
    const g = new Generator({ layout, shard: 3 })
    const ids = Array.from({ length: 2000 }, () => g.nextId())
    const db = connection(layout)
    db.exec('CREATE TABLE t (id INTEGER, b BLOB, s TEXT)')
    const insert = db.prepare('INSERT INTO t (id) VALUES (?)')
    for (const id of [...ids].reverse()) insert.run(id)
    db.exec('UPDATE t SET b = shardid_to_uuid(id), s = shardid_to_uuid_text(id)')
    db.exec('CREATE INDEX t_b ON t (shardid_to_uuid(id))') // deterministic: an index may use it
    const column = (sql) => {
      const statement = db.prepare(sql)
      if (typeof statement.safeIntegers === 'function') statement.safeIntegers(true)
      else statement.setReadBigInts(true)
      return statement.all().map((r) => Object.values(r))
    }
    assert.deepEqual(column('SELECT id FROM t ORDER BY b').flat(), ids)
    assert.deepEqual(column('SELECT id FROM t ORDER BY s').flat(), ids)
    for (const [id, b, s, fromB, fromS] of column('SELECT id, b, s, shardid_from_uuid(b), shardid_from_uuid(s) FROM t')) {
      assert.deepEqual([Buffer.from(b), s, fromB, fromS], [layout.toUuidBytes(id), layout.toUuid(id), id, id])
    }
    db.close()
  }
})
