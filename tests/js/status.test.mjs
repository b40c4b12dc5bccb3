// shardid/status's read() for programs: a URL of another scheme is refused by the core's rule
// (the one `shardid status` uses), before any driver is loaded (the Node addon).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

import { shardid, modulePath } from './load.mjs'

const isWasm = !shardid.threadsShareState

test('read() refuses a URL of another scheme: INVALID_ARGUMENT naming the database', { skip: isWasm }, async () => {
  const { read } = createRequire(join(dirname(modulePath), 'package.json'))('./status.js')
  for (const [url, why] of [['redis://h', '"redis" is not a database URL'], ['nonsense', 'not a database URL']]) {
    await assert.rejects(read(url), (err) => err.code === 'INVALID_ARGUMENT' && err.argument === 'database' && err.message.includes(why))
  }
})
