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
  const back = JSON.parse(text, jsonReviver(['id', 'ids', 'parentId'], Layout.INSTAGRAM))
  assert.equal(back.id, ids[0])
  assert.deepEqual(back.ids, [...ids])
  assert.equal(back.other, '5')
  assert.equal(back.parentId, null)
  // What JSON.parse alone does to the same ID as a number: it rounds it.
  assert.notEqual(BigInt(JSON.parse(`{"id":${BIG + 1n}}`).id), BIG + 1n)
})

test('jsonReviver refuses what is not an ID of its layout, with the core codes', () => {
  const parse = (text, layout = Layout.INSTAGRAM) => JSON.parse(text, jsonReviver(['id'], layout))
  assert.equal(parse('{"id":5}').id, 5n) // a safe integer is exact
  for (const bad of [`${BIG + 1n}`, '-5', '1.5', '"+5"', '" 5"', '"9223372036854775808"', 'true', '{}']) {
    assert.throws(() => parse(`{"id":${bad}}`), (e) => ['INVALID_ID', 'INVALID_ARGUMENT'].includes(e.code), bad)
  }
  assert.equal(parse('{"id":"9223372036854775808"}', Layout.DISCORD).id, 9223372036854775808n)
  assert.throws(() => jsonReviver('id'), (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT')
  assert.throws(() => jsonReviver(['id'], 'discord'), (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT')
})

test('jsonReviver needs the layout of the IDs: it never guesses one', () => {
  // A Discord ID above 2^63 is no Instagram ID, and a Twitter ID decodes to another time under
  // Instagram's layout: a reviver that assumed a layout would refuse the one or misread the other.
  assert.throws(() => jsonReviver(['id']), (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT' && /layout/.test(e.message))
  assert.throws(() => jsonReviver(['id'], undefined), (e) => e.code === 'INVALID_ARGUMENT')
  const discord = '{"id":"18446744073709551615"}'
  assert.equal(JSON.parse(discord, jsonReviver(['id'], Layout.DISCORD)).id, 18446744073709551615n)
  assert.throws(() => JSON.parse(discord, jsonReviver(['id'], Layout.INSTAGRAM)), (e) => e.code === 'INVALID_ID')
})

test('a layout and the parts of an ID go through JSON.stringify, and a layout comes back', () => {
  const custom = new Layout({ epochMs: 1_600_000_000_000, unitMs: 10, timeBits: 39, shardBits: 16, sequenceBits: 8, order: 'time_sequence_shard' })
  for (const layout of [Layout.INSTAGRAM, Layout.TWITTER, Layout.DISCORD, Layout.SONYFLAKE, custom]) {
    const text = JSON.stringify(layout) // threw "Do not know how to serialize a BigInt" (maxId)
    const back = new Layout(JSON.parse(text))
    assert.ok(back.equals(layout), text)
    assert.equal(back.maxId, layout.maxId)
  }
  assert.deepEqual(JSON.parse(JSON.stringify(Layout.INSTAGRAM)), {
    epochMs: 1314220021721, unitMs: 1, timeBits: 41, shardBits: 13, sequenceBits: 10, order: 'time_shard_sequence', signed: true,
  })
  // The parts keep their date, as the ISO string JSON makes of a Date.
  const id = Layout.INSTAGRAM.compose(Date.UTC(2026, 0, 2, 3, 4, 5, 678), 9, 1)
  const parts = JSON.parse(JSON.stringify({ parts: Layout.INSTAGRAM.decode(id) }, jsonReplacer)).parts
  assert.deepEqual(parts, { timestampMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678), shard: 9, sequence: 1, date: '2026-01-02T03:04:05.678Z' })
})
