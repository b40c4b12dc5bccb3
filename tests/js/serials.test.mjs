// shardid/segments' serial formats without a database (the addon only; the PostgreSQL side is
// tests/postgres/test_serials.py): the shared vectors, errors included, and bad arguments.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { vectors } from './load.mjs'

const addonOnly = { skip: process.env.SHARDID_JS_MODULE ? 'serial numbers are in the Node addon only' : false }
const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))

function checkError(fn, expect) {
  assert.throws(fn, (err) => {
    assert.equal(err.code, expect.error)
    assert.equal(err.message, expect.message)
    for (const [name, value] of Object.entries(expect)) {
      if (name === 'error' || name === 'message') continue
      const camel = name.replace(/_([a-z])/g, (_, c) => c.toUpperCase())
      assert.equal(String(err[camel]), value, name)
    }
    assert.ok(err instanceof (expect.error === 'SERIAL_OVERFLOW' ? Error : RangeError))
    return true
  })
}

test('every serial vector renders and parses as the core says', addonOnly, () => {
  const { SerialFormat } = require('./segments.js')
  const file = vectors('serials.json')
  let count = 0
  for (const c of file.formats) {
    const f = new SerialFormat(c.format, c.zone)
    assert.deepEqual([f.canonical, f.zone, f.reset, f.width, f.length, f.maxNumber], [c.canonical, c.zone_canonical, c.reset, c.width, c.length, BigInt(c.max_number)])
    for (const r of c.render) {
      if ('ok' in r.expect) {
        assert.equal(f.render(BigInt(r.number), BigInt(r.unix_ms)), r.expect.ok, JSON.stringify(r))
        assert.equal(f.periodAt(BigInt(r.unix_ms)), r.period)
      } else {
        checkError(() => f.render(BigInt(r.number), BigInt(r.unix_ms)), r.expect)
      }
      count++
    }
    for (const p of c.parse) {
      if ('ok' in p.expect) {
        const got = f.parse(p.serial)
        const ok = p.expect.ok
        assert.deepEqual(got, { number: BigInt(ok.number), period: ok.period, year: ok.year, month: ok.month, day: ok.day, hour: ok.hour, week: ok.week })
      } else {
        checkError(() => f.parse(p.serial), p.expect)
      }
      count++
    }
  }
  for (const c of file.invalid) {
    checkError(() => new SerialFormat(c.format, c.zone), c.expect)
    count++
  }
  assert.ok(count > 300, `${count} cases`)
})

test('bad arguments are refused with a code', addonOnly, () => {
  const { SerialFormat } = require('./segments.js')
  const f = new SerialFormat('ORD-{yyyy}{MM}{dd}-{seq:6}', 'Asia/Shanghai')
  assert.equal(f.render(123, 1795536000000), 'ORD-20261125-000123')
  assert.throws(() => f.render('123', 1795536000000), (err) => err.code === 'INVALID_ARGUMENT' && err instanceof TypeError)
  for (const [number, ms] of [[-1, 1795536000000], [1, -5], [2n ** 64n, 1], [1.5, 1795536000000]]) {
    assert.throws(() => f.render(number, ms), (err) => err.code === 'INVALID_ARGUMENT')
  }
  assert.throws(() => new SerialFormat(5, 'UTC'), (err) => err.code === 'INVALID_ARGUMENT' && err instanceof TypeError)
  assert.throws(() => f.parse(5), (err) => err.code === 'INVALID_ARGUMENT' && err instanceof TypeError)
  // Longer than the stack buffer the addon reads a serial into: read whole, for the length.
  assert.throws(() => f.parse('x'.repeat(500)), (err) => err.code === 'INVALID_SERIAL' && /it is 500 characters long/.test(err.message))
  assert.equal(f.parse('ORD-20261125-000123').number, 123n)
  assert.ok(Object.isFrozen(f))
})
