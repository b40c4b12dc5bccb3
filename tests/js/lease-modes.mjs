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

/** What a holder `g` (its first ID made at `t0`) does once another holder's claim has changed
 *  its row's token (`takeOver()` does that): IDs within its recorded ceiling, then LEASE_LOST
 *  for good. Prints them as one JSON line and closes. */
export async function takenOver(g, t0, takeOver) {
  await g.nextIdAt(t0)
  await takeOver()
  const code = (promise) => promise.then(() => 'no error', (err) => err.code)
  const within = await code(g.nextIdAt(t0 + 50))
  const past = await code(g.nextIdAt(t0 + 1000))
  const again = await code(g.nextIdAt(t0 + 10))
  console.log(JSON.stringify({ within, past, again, held: g.held }))
  await g.close()
}
