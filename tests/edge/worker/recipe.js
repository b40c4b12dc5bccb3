// The book's recipe for Workers without the `workerd` condition (wasm.md): shardid-wasm/web,
// its .wasm imported (wrangler and workerd hand it over compiled) and given to init().
import init from 'shardid-wasm/web'
import wasm from 'shardid-wasm/web/shardid_wasm_bg.wasm'

export default {
  async fetch() {
    const { Layout, Generator } = await init({ module_or_path: wasm })
    const ids = new Generator({ layout: Layout.INSTAGRAM, shard: 3 }).nextIds(10)
    return Response.json({
      web: String(Layout.DISCORD.decode('175928847299117063').shard),
      shards: [...new Set(Array.from(ids, (id) => Layout.INSTAGRAM.decode(id).shard))],
      // init() with the module alone (not wasm-bindgen's { module_or_path }): the same classes.
      again: (await init(wasm)).Layout === Layout,
    })
  },
}
