// The `shardid` package as an ES module: the same objects as the CommonJS entry.
import { createRequire } from 'node:module'

const shardid = createRequire(import.meta.url)('./index.js')

export const { Layout, Generator, LeasedGenerator, lease, shardFromOrdinal, Parts, PublicIds, checkPublicId, fromUuid, ShardIdError, jsonReplacer, jsonReviver, nowMs, version, threadsShareState } = shardid
export default shardid
