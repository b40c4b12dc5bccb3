// What tests/postgres/lease_node.mjs and tests/mysql/lease_node.mjs run alike on a lease of
// either database (a DatabaseLease): the multi-process probe and the holder that is killed.
import { appendFileSync, writeFileSync } from 'node:fs'

/** Makes `count` IDs of `g` over `seconds`, writes them and the shard to `<out>.ids`, closes. */
export async function probe(g, out, seconds, count) {
  const ids = new BigUint64Array(Number(count) + 1)
  const start = performance.now()
  for (let i = 0; i < Number(count); i++) {
    ids[i] = await g.nextId()
    if (i % 1000 === 999) {
      const due = start + (Number(seconds) * 1000 * i) / Number(count) - performance.now()
      if (due > 0) await new Promise((resolve) => setTimeout(resolve, due))
    }
  }
  ids[Number(count)] = BigInt(g.shard)
  writeFileSync(`${out}.ids`, new Uint8Array(ids.buffer))
  await g.close()
}

/** Appends IDs of `g` to `out` until killed, or until its lease is lost: it then writes
 *  `<out>.lost` (the error's message) and returns. */
export async function hold(g, out) {
  writeFileSync(out, new Uint8Array(0))
  for (;;) {
    let ids
    try {
      ids = await g.nextIds(1000)
    } catch (err) {
      if (err.code !== 'LEASE_LOST') throw err
      writeFileSync(`${out}.lost`, err.message)
      return
    }
    appendFileSync(out, new Uint8Array(ids.buffer))
  }
}
