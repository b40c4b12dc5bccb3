// No password is ever shown (issue 60, finding 6): every way a password is written in a
// connection string, given to `npx shardid status` and `restored` and to each client, with a
// server that cannot be reached (a closed port on 127.0.0.1: every driver fails at connect
// time, where drivers quote what they were given). Everything the process prints — stdout,
// stderr, each error's message, `util.inspect` (its stack, its fields, its cause) — is searched
// for the password, as written and as the driver reads it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'

import { shardid, modulePath } from './load.mjs'

const isWasm = !shardid.threadsShareState
const root = dirname(modulePath)

async function closedPort() {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

// [URL, what must not be printed: the password as written, as read, and its pieces]
const forms = (port) => [
  [`postgresql://alice:Pq@ss1x@127.0.0.1:${port}/app`, ['Pq@ss1x', 'ss1x']],
  [`postgresql://alice:Pw%40rd2z@127.0.0.1:${port}/app`, ['Pw%40rd2z', 'Pw@rd2z', 'rd2z']],
  [`postgresql://alice@127.0.0.1:${port}/app?password=Qu3ryPw`, ['Qu3ryPw']],
  [`host=127.0.0.1 port=${port} dbname=app user=alice password = C0nnInfoPw`, ['C0nnInfoPw']],
  [`host=127.0.0.1 port=${port} dbname=app user=alice password='Qu0ted Pw9'`, ['Qu0ted', 'Pw9']],
  [`postgresql://alice:Bad%zzTok3@127.0.0.1:${port}/app`, ['Bad%zzTok3', 'zzTok3']],
  [`mysql://root:My@Pw9x@127.0.0.1:${port}/app`, ['My@Pw9x', 'Pw9x']],
  [`mariadb://root:Ma%40Pw7y@127.0.0.1:${port}/app`, ['Ma%40Pw7y', 'Ma@Pw7y', 'Pw7y']],
]

// Each client made on the URL and used once: its error's message and util.inspect (stack,
// fields, cause) on stdout, warnings and debug output on stderr.
const CLIENTS = `
const { inspect } = require('node:util')
const { Layout } = require('./index.js')
const { denseIds, serials, createSerial, createTag } = require('./segments.js')
const { Dictionary } = require('./dictionary.js')
const status = require('./status.js')
const url = process.argv[1]
const mysql = /^(mysql|mariadb):/.test(url)
const { lease } = require(mysql ? './mysql.js' : './postgres.js')
const target = mysql ? { url } : { connectionString: url }
const FORMAT = 'C-{yyyy}{MM}{dd}-{seq:6}'
const cases = {
  'status.read': () => status.read(url),
  denseIds: async () => { const ids = await denseIds({ connectionString: url, tag: 'd', waitMs: 300 }); console.log(inspect(ids)); return ids.nextId() },
  serials: () => serials({ connectionString: url, tag: 'c', format: FORMAT, zone: 'UTC', waitMs: 300 }),
  createSerial: () => createSerial({ connectionString: url, tag: 'c', format: FORMAT, zone: 'UTC' }),
  createTag: () => createTag(url, 'd'),
  dictionary: () => { const d = new Dictionary({ connectionString: url, topic: 't' }); console.log(inspect(d)); return d.id('a') },
  lease: () => lease({ layout: Layout.TWITTER, ...target, shards: [0, 4] }),
}
;(async () => {
  for (const [name, f] of Object.entries(cases)) {
    try {
      await f()
      console.log(name, 'did not fail')
    } catch (err) {
      console.log(name, 'FAILED', String(err), err.message, inspect(err, { depth: 8, showHidden: true }))
    }
  }
})()
`

test('no password form is printed by status, restored or any client', { skip: isWasm, timeout: 120000 }, async () => {
  const port = await closedPort()
  for (const [url, secrets] of forms(port)) {
    const printed = []
    for (const command of ['status', 'restored']) {
      const done = spawnSync(process.execPath, [join(root, 'cli.js'), command, url], { encoding: 'utf8', timeout: 60000 })
      assert.equal(done.status, 2, `${command} ${url}: ${done.stderr}`)
      // The URL as its server only.
      assert.ok(done.stderr.startsWith(`shardid: ${command}: 127.0.0.1:${port}/app: `), done.stderr)
      printed.push(done.stdout + done.stderr)
    }
    const done = spawnSync(process.execPath, ['-e', CLIENTS, url], { cwd: root, encoding: 'utf8', timeout: 90000 })
    assert.equal(done.status, 0, done.stderr)
    assert.doesNotMatch(done.stdout, /did not fail/, done.stdout)
    // Every client failed (at connect time, or refusing the URL at once), and its error was shown.
    assert.equal(done.stdout.match(/ FAILED /g)?.length, 7, done.stdout)
    printed.push(done.stdout + done.stderr)
    for (const text of printed) {
      for (const secret of secrets) assert.ok(!text.includes(secret), `${url}: ${secret} printed:\n${text}`)
    }
  }
})

// pg and mysql2 quoted no password in the forms above; libpq and the postgres crate do (see
// core/src/sql/url.rs), and a driver's next version may: what the openers call on a driver's
// error takes the password out of everything util.inspect shows of it.
test('redact() takes the password out of an error, its stack, fields, causes and errors', { skip: isWasm }, async () => {
  const { inspect } = await import('node:util')
  const { createRequire } = await import('node:module')
  const { redact } = createRequire(join(root, 'package.json'))('./dialects/index.js')
  const url = 'postgresql://alice:Pq@ss1x@db/app'
  const inner = new Error('invalid percent-encoded token: "Pq@ss1x"')
  inner.hostname = 'ss1x@db'
  const err = new AggregateError([new Error('could not translate host name "ss1x@db"'), inner], 'connect failed for Pq@ss1x')
  err.cause = new Error('password "Pq@ss1x" refused')
  assert.equal(redact(err, url), err)
  const shown = inspect(err, { depth: 8, showHidden: true }) + err.message + err.stack
  assert.ok(!shown.includes('ss1x'), shown)
  assert.ok(shown.includes('translate host name "***@db"'), shown)
  assert.equal(inner.message, 'invalid percent-encoded token: "***"')
})
