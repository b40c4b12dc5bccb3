// IDs through JSON, in both builds: jsonReplacer writes bigints as decimal strings, and
// jsonReviver reads the named keys back as checked bigint IDs (an unsafe number has already
// been rounded by JSON.parse and is refused).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { shardid } from './load.mjs'

const { Layout, Generator, jsonReplacer, jsonReviver } = shardid
const BIG = 4036916263258161152n // above 2^53

test('jsonReplacer writes bigints as decimal strings, anywhere in the value', () => {
  assert.throws(() => JSON.stringify({ id: BIG }), TypeError) // what JSON.stringify does alone
  assert.equal(JSON.stringify({ id: BIG, n: 5, ids: [BIG, 1n] }, jsonReplacer), `{"id":"${BIG}","n":5,"ids":["${BIG}","1"]}`)
})

test('jsonReviver reads the named keys back exactly, and only those', () => {
  const ids = new Generator({ layout: Layout.INSTAGRAM, shard: 12 }).nextIds(1000)
  const text = JSON.stringify({ id: ids[0], ids: [...ids], other: '5', parentId: null }, jsonReplacer)
  const back = JSON.parse(text, jsonReviver(['id', 'ids', 'parentId']))
  assert.equal(back.id, ids[0])
  assert.deepEqual(back.ids, [...ids])
  assert.equal(back.other, '5')
  assert.equal(back.parentId, null)
  // What JSON.parse alone does to the same ID as a number: it rounds it.
  assert.notEqual(BigInt(JSON.parse(`{"id":${BIG + 1n}}`).id), BIG + 1n)
})

test('jsonReviver refuses what is not an ID of its layout, with the core codes', () => {
  const parse = (text, layout) => JSON.parse(text, jsonReviver(['id'], layout))
  assert.equal(parse('{"id":5}').id, 5n) // a safe integer is exact
  for (const bad of [`${BIG + 1n}`, '-5', '1.5', '"+5"', '" 5"', '"9223372036854775808"', 'true', '{}']) {
    assert.throws(() => parse(`{"id":${bad}}`), (e) => ['INVALID_ID', 'INVALID_ARGUMENT'].includes(e.code), bad)
  }
  assert.equal(parse('{"id":"9223372036854775808"}', Layout.DISCORD).id, 9223372036854775808n)
  assert.throws(() => jsonReviver('id'), (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT')
  assert.throws(() => jsonReviver(['id'], 'discord'), (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT')
})
