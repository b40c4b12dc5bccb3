// A process of lease.test.mjs (a child process or a cluster worker): leases a Twitter shard
// from dir and writes IDs to out. mode: a count (one batch), "forever" (until killed), or
// "at" T (1,000 IDs at time T). Arguments from argv, or from SHARDID_LEASE_ARGS (cluster).
import { appendFileSync, writeFileSync } from 'node:fs'

import { shardid } from './load.mjs'

const args = process.env.SHARDID_LEASE_ARGS ? JSON.parse(process.env.SHARDID_LEASE_ARGS) : process.argv.slice(2)
const [dir, out, mode, at] = args
const g = shardid.lease({ layout: shardid.Layout.TWITTER, directory: dir, shards: [0, 64] })
if (mode === 'forever') {
  writeFileSync(out, new Uint8Array(0))
  for (let i = 0; ; i++) {
    const ids = g.nextIds(1000)
    appendFileSync(out, new Uint8Array(ids.buffer))
    if (i === 5) process.send({ shard: g.shard })
  }
} else if (mode === 'at') {
  let last = 0n
  for (let i = 0; i < 1000; i++) last = g.nextIdAt(Number(at) + Math.floor(i / 100))
  process.send({ shard: g.shard, last: String(last) }, () => process.exit(0))
} else {
  const ids = g.nextIds(Number(mode))
  writeFileSync(out, new Uint8Array(ids.buffer))
  process.send({ shard: g.shard }, () => process.exit(0))
}
