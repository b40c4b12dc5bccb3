// What every runtime and bundle in tests/edge computes with shardid-wasm, the same code
// everywhere (a Worker, Deno, Bun, Node, a page with an import map, a webpack bundle): the
// caller passes the default entry's module and shardid-wasm/public's, and compares the result
// with EXPECTED (the runner, which knows Discord's documented ID and the public ID below).
export const EXPECTED = {
  discord: ['1462015105796', 32, 7],
  increasing: true,
  distinct: 1000,
  shards: [7],
  error: 'INVALID_ID',
  noPublicIdsInDefault: true,
  publicText: 'note_0923h26jsg2d8g',
  publicBack: '4036916263258161152',
  publicShape: 0,
  layoutAcross: '4036916263258161152',
  generatorsAcross: 1500,
}

/** `shardid`: the default entry (`import * as shardid from 'shardid-wasm'`); `pub`: shardid-wasm/public's. */
export function run(shardid, pub) {
  const result = {}
  const { Layout, Generator } = shardid
  const parts = Layout.DISCORD.decode('175928847299117063')
  result.discord = [String(parts.timestampMs), parts.shard, parts.sequence]
  const ids = new Generator({ layout: Layout.INSTAGRAM, shard: 7 }).nextIds(1000)
  result.increasing = ids.every((id, i) => i === 0 || id > ids[i - 1])
  result.distinct = new Set(ids).size
  result.shards = [...new Set(Array.from(ids, (id) => Layout.INSTAGRAM.decode(id).shard))]
  try {
    Layout.TWITTER.decode('12x')
  } catch (err) {
    result.error = err.code
  }
  // The default entry's named exports are what its types say: no public IDs.
  result.noPublicIdsInDefault = !('PublicIds' in shardid) && !('checkPublicId' in shardid) && !('fromUuid' in shardid)
  // public-ids.md's example: the same text as every other language.
  const key = new TextEncoder().encode('0123456789abcdef')
  const notes = new pub.PublicIds({ key, prefix: 'note' })
  result.publicText = notes.encode(4036916263258161152n)
  result.publicBack = String(notes.decode(result.publicText))
  result.publicShape = pub.checkPublicId(result.publicText, { prefix: 'note' })
  // A Layout of the default module given to the public module's PublicIds.
  try {
    const across = new pub.PublicIds({ key, prefix: 'note', layout: Layout.INSTAGRAM })
    result.layoutAcross = String(across.decode(across.encode(4036916263258161152n)))
  } catch (err) {
    result.layoutAcross = `${err.code}: ${err.message}`
  }
  // Generators of both modules on one (layout, shard), one given the other module's Layout: one
  // state for the realm, so no ID twice (two modules' own states repeated each other's IDs).
  try {
    const made = [new Generator({ layout: Layout.INSTAGRAM, shard: 9 }), new pub.Generator({ layout: pub.Layout.INSTAGRAM, shard: 9 }),
      new pub.Generator({ layout: Layout.INSTAGRAM, shard: 9 })]
    const ids = []
    for (let i = 0; i < 500; i++) for (const g of made) ids.push(g.nextId())
    result.generatorsAcross = new Set(ids).size
  } catch (err) {
    result.generatorsAcross = `${err.code}: ${err.message}`
  }
  return result
}
