// The database dialects' own rules, without a server (the addon only): what a connection
// learns of its server before any statement of a system runs.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const addonOnly = { skip: process.env.SHARDID_JS_MODULE ? 'the database dialects are in the Node addon only' : false }
const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))

test("a MySQL connection's dialect is the core's statement and rule: MariaDB answers, MySQL refuses with 1193, any other error is the driver's", addonOnly, async () => {
  const { detect } = require('./dialects/mysql.js')
  const refusal = (errno, message) => Object.assign(new Error(message), { errno })
  const cases = [
    [null, 'mariadb'],
    [refusal(1193, "Unknown system variable 'wsrep_on'"), 'mysql'],
    [refusal(1045, 'Access denied'), null],
    [refusal(2 ** 40, 'a number no server sends'), null],
    [Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST' }), null],
  ]
  for (const [error, dialect] of cases) {
    const sent = []
    const connection = { async query(sql) { sent.push(sql); if (error) throw error; return [[{ wsrep_on: 0 }]] } }
    if (dialect === null) await assert.rejects(detect(connection), (thrown) => thrown === error)
    else assert.equal(await detect(connection), dialect)
    assert.deepEqual(sent, ['SELECT @@global.wsrep_on'])
  }
})

test("the MySQL dialect writes a value into its statement as hex digits every SQL mode reads alike, never with mysql2's backslash escaping (NO_BACKSLASH_ESCAPES, issue 60)", addonOnly, async () => {
  const { Dictionary, Segments } = require('./dialects/mysql.js')
  const sent = []
  const connection = {
    shardidDialect: 'mariadb',
    async query(statement, values) {
      sent.push({ sql: typeof statement === 'string' ? statement : statement.sql, values: values ?? statement.values })
      // The find's answer: the topic's row and no string found.
      return [[[1, null, null]]]
    },
  }
  const value = "') OR SLEEP(2) -- \\'"
  const words = new Dictionary('dict', 'words')
  assert.deepEqual(await words.lookup(connection, [value, 'é']), [null, null])
  const [{ sql, values }] = sent
  assert.equal(values, undefined) // nothing left for mysql2 to escape
  const hex = (s) => `_utf8mb4 X'${Buffer.from(s, 'utf8').toString('hex')}'`
  assert.ok(sql.includes(hex(value)) && sql.includes(hex('é')) && sql.includes(hex('words')), sql)
  assert.ok(!sql.includes('SLEEP') && !sql.includes('\\') && !sql.includes('?'), sql)
  // The core's segment protocol's integers as integer literals (exact past 2^53, where a
  // string would be compared as a DOUBLE), its texts as hex; the count of values checked.
  sent.length = 0
  const taking = { ...connection, async query(statement) { sent.push(statement.sql); return [{ affectedRows: 1, insertId: 11 }] } }
  assert.equal(await new Segments('seg').giveBack(taking, "t'\\", '9007199254740993', '9007199254740995'), true)
  assert.ok(!sent[0].includes("t'") && sent[0].includes(hex("t'\\")), sent[0])
  assert.ok(sent[0].includes('SET next = 9007199254740993,') && sent[0].includes('AND next = 9007199254740995 '), sent[0])
})
