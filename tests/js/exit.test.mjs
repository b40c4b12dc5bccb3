// Successive short processes on one SQLite file hand out consecutive numbers (issue 59, item 3):
// dense IDs and serials that were never closed give their unused rest back when the process
// ends, on 'beforeExit' and on SIGTERM / SIGINT when the application has no listener of its
// own; a listener of the application's is left to decide. Before, each process skipped the rest
// of its segment (1, 1001, 2001, ...).
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const segments = fileURLToPath(new URL('../../bindings-node/segments.js', import.meta.url))
const addonOnly = { skip: process.env.SHARDID_JS_MODULE ? 'segments are in the Node addon only' : false }

// A script that takes from `url`: one dense ID and one serial, printed, never closed; then
// `after` (JS text) runs.
const script = (url, after = '') => `
const { denseIds, createTag, createSerial, serials } = require(${JSON.stringify(segments)})
;(async () => {
  await createTag(${JSON.stringify(url)}, 'orders')
  await createSerial(${JSON.stringify(url)}, 'invoices', 'INV-{yyyy}-{seq:6}', { zone: 'UTC' })
  const ids = await denseIds({ connectionString: ${JSON.stringify(url)}, tag: 'orders' })
  const made = await serials({ connectionString: ${JSON.stringify(url)}, tag: 'invoices', format: 'INV-{yyyy}-{seq:6}', zone: 'UTC' })
  console.log(JSON.stringify({ id: String(ids.nextId()), serial: (await made.nextSerialAsync()).slice(-6) }))
  ${after}
})()
`

function scratch() {
  const dir = mkdtempSync(join(tmpdir(), 'shardid-exit-'))
  return { url: `sqlite:///${join(dir, 'ids.db')}`, done: () => rmSync(dir, { recursive: true, force: true }) }
}

// Runs `text` in a new node; with `signal`, sends it once the first line is printed.
function run(text, signal) {
  if (!signal) {
    const done = spawnSync(process.execPath, ['-e', text], { encoding: 'utf8', timeout: 20000 })
    assert.equal(done.status, 0, done.stderr)
    return { line: JSON.parse(done.stdout.split('\n')[0]), status: done.status, signal: done.signal, out: done.stdout }
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', text], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`no exit: ${out} ${err}`)) }, 20000)
    child.stdout.on('data', (d) => {
      if (!out.includes('\n') && (out += d).includes('\n')) child.kill(signal)
      else if (out.includes('\n')) out += d
    })
    child.stderr.on('data', (d) => { err += d })
    child.on('exit', (status, sig) => {
      clearTimeout(timer)
      resolve({ line: JSON.parse(out.split('\n')[0]), status, signal: sig, out, err })
    })
  })
}

// The year's serials: `INV-{yyyy}-{seq:6}`, so the test holds on New Year's Eve but one instant.
test('ten successive processes that never close hand out consecutive numbers (beforeExit)', addonOnly, () => {
  const { url, done } = scratch()
  try {
    const got = []
    for (let i = 0; i < 10; i++) got.push(run(script(url)).line)
    assert.deepEqual(got.map((g) => g.id), Array.from({ length: 10 }, (_, i) => String(i + 1)))
    assert.deepEqual(got.map((g) => g.serial), Array.from({ length: 10 }, (_, i) => String(i + 1).padStart(6, '0')))
  } finally {
    done()
  }
})

test('SIGTERM and SIGINT give back and still end the process by the signal; a handler of the application is left alone', addonOnly, async () => {
  const { url, done } = scratch()
  try {
    const idle = 'setInterval(() => {}, 1000)' // a server: never ends by itself
    const term = await run(script(url, idle), 'SIGTERM')
    const int = await run(script(url, idle), 'SIGINT')
    assert.deepEqual([term.signal, int.signal], ['SIGTERM', 'SIGINT']) // ended as the signal ends it
    // The application's own listener runs, and ours does not end the process under it.
    const own = await run(script(url, `${idle}; process.on('SIGTERM', () => { console.log('own handler'); setTimeout(() => process.exit(3), 50) })`), 'SIGTERM')
    assert.equal(own.status, 3, own.err)
    assert.match(own.out, /own handler/)
    const after = run(script(url)).line
    // term gave back (2 next), int gave back (3 next); the application's exit(3) skipped its rest.
    assert.deepEqual([term.line.id, int.line.id, own.line.id], ['1', '2', '3'])
    assert.ok(BigInt(after.id) > 3n && after.id !== '4', `process.exit() in a handler gives nothing back: ${after.id}`)
  } finally {
    done()
  }
})
