// shardid/dictionary without a database (the addon only; the PostgreSQL side is
// tests/postgres/test_dictionary.py): the shared server-choice vectors, the core's cache through
// the addon, and bad input.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { vectors } from './load.mjs'

const addonOnly = { skip: process.env.SHARDID_JS_MODULE ? 'the dictionary is in the Node addon only' : false }
const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))

test('serverFor agrees with the shared vectors', addonOnly, () => {
  const { serverFor } = require('./dictionary.js')
  const cases = vectors('dictionary.json').server_for
  assert.ok(cases.length >= 20)
  for (const c of cases) assert.equal(serverFor(c.topic, c.servers), c.server, JSON.stringify(c))
})

test('the cache plans a batch, sends each miss once and merges in order', addonOnly, () => {
  const { DictCache } = require('./native.generated.js')
  const cache = new DictCache(1000)
  const values = ['b', 'a', 'c', 'b']
  let plan = cache.planIds(values)
  assert.deepEqual(plan.ids, [null, null, null, null])
  assert.deepEqual(plan.misses, ['b', 'a', 'c'])
  // pg gives int8[] as decimal strings.
  assert.deepEqual(cache.completeIds(values, plan.ids, plan.misses, ['7', '8', null]), [7n, 8n, null, 7n])
  assert.equal(cache.id('a'), 8n)
  assert.equal(cache.value(7n), 'b')
  assert.equal(cache.id('c'), null, 'an unknown string is not cached')
  assert.equal(cache.size, 2)
  plan = cache.planIds(['a', 'b'])
  assert.deepEqual(plan, { ids: [8n, 7n], misses: [] })
  const byId = cache.planValues([7n, 9, 7n])
  assert.deepEqual(byId.misses, ['9'])
  assert.deepEqual(cache.completeValues(byId.ids, byId.values, byId.misses, ['nine']), ['b', 'nine', 'b'])
  assert.equal(cache.id('nine'), 9n)
  assert.throws(() => cache.completeIds(['x'], [null], ['x'], ['1', '2']), { code: 'INVALID_ARGUMENT', argument: 'answers' })
  const none = new DictCache(0)
  none.completeIds(['x'], [null], ['x'], ['1'])
  assert.equal(none.id('x'), null, 'capacity 0 caches nothing')
})

test('bad input is refused before anything is sent', addonOnly, () => {
  const { Dictionary, ddl, DEFAULT_CACHE } = require('./dictionary.js')
  const { DictCache } = require('./native.generated.js')
  const cache = new DictCache()
  assert.equal(cache.capacity, DEFAULT_CACHE)
  const refused = (f, cls, argument, words) =>
    assert.throws(f, (err) => err instanceof cls && err.code === 'INVALID_ARGUMENT' && err.argument === argument && err.message.includes(words))
  refused(() => cache.id(''), RangeError, 'value', '1 to 2048 bytes')
  refused(() => cache.id('a\0'), RangeError, 'value', 'without NUL')
  refused(() => cache.id('x'.repeat(2049)), RangeError, 'value', '2048')
  refused(() => cache.id('é'.repeat(1025)), RangeError, 'value', '2048') // 2,050 bytes of UTF-8
  assert.equal(cache.id('é'.repeat(1024)), null, '2,048 bytes are allowed')
  refused(() => cache.planIds(['ok', '\udc00x']), RangeError, 'values[1]', 'lone surrogate')
  refused(() => cache.planIds(['ok', 1]), TypeError, 'values[1]', 'must be a string, not a number')
  refused(() => cache.planIds(new Array(100001).fill('a')), RangeError, 'values', 'at most 100000')
  refused(() => cache.value(2n ** 63n), RangeError, 'id', '0..=9223372036854775807')
  refused(() => new Dictionary({ connectionString: 'postgresql://x/y', topic: '' }), RangeError, 'topic', '1 to 200 bytes')
  refused(() => new Dictionary({ connectionString: 'postgresql://x/y', topic: 't', schema: 'Bad' }), RangeError, 'schema', 'only a-z')
  refused(() => new Dictionary({ topic: 't' }), TypeError, 'connectionString', 'non-empty list')
  assert.match(ddl(), /CREATE OR REPLACE FUNCTION dict\.dict_ids\(topic text, "values" text\[\]\) RETURNS bigint\[\]/)
  assert.match(ddl('words'), /CREATE TABLE IF NOT EXISTS words\.shardid_strings/)
})
