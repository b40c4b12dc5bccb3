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
