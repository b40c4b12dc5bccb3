// Node's database clients when things go wrong or are done, for test_errors.py:
// `node errors_node.mjs <mode> <args>`; prints one JSON line.
//   unreachable <postgres url> <mysql url>: both name ports nothing listens on; what the
//             dictionary, dense IDs and the lease reject with (code, class, cause's code).
//   closed <url>: each object used after close() (the tag `errors_node` and the topic
//             `errors_node` exist in the schemas err_seg and err_dict).
//   exits <url> <what>: opens `dense`, `dictionary`, `lease` or `all`, uses it, never closes it,
//             and prints "done": the process should then exit on its own.
import { createRequire } from 'node:module'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Layout, ShardIdError } = require('./index.js')
const { denseIds } = require('./segments.js')
const { Dictionary } = require('./dictionary.js')
const { lease } = require('./postgres.js')

const print = (value) => console.log(JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v)))
// What a call rejects (or throws) with: its class, code and fields, and its cause's code.
const outcome = async (f) => {
  try {
    await f()
    return { ok: true }
  } catch (err) {
    return {
      class: err.constructor.name,
      ours: err instanceof ShardIdError,
      code: err.code,
      what: err.what,
      reason: err.reason,
      message: err.message,
      cause: err.cause?.code ?? err.cause?.constructor?.name,
      causeCause: err.cause?.cause?.code,
      enumerableCause: Object.keys(err).includes('cause'),
    }
  }
}

const [mode, url, ...rest] = process.argv.slice(2)
if (mode === 'unreachable') {
  const [mysqlUrl] = rest
  const started = Date.now()
  const out = {
    dictionary: await outcome(() => new Dictionary({ connectionString: url, topic: 't' }).id('a')),
    dense: await outcome(() => denseIds({ connectionString: url, tag: 't', waitMs: 300 })),
    lease: await outcome(() => lease({ layout: Layout.TWITTER, connectionString: url, shards: [0, 4] })),
    mysqlDictionary: await outcome(() => new Dictionary({ connectionString: mysqlUrl, topic: 't' }).id('a')),
    mysqlDense: await outcome(() => denseIds({ connectionString: mysqlUrl, tag: 't', waitMs: 300 })),
  }
  out.ms = Date.now() - started
  print(out)
} else if (mode === 'closed') {
  const words = new Dictionary({ connectionString: url, topic: 'errors_node', schema: 'err_dict' })
  await words.id('cached')
  await words.close()
  const orders = await denseIds({ connectionString: url, tag: 'errors_node', schema: 'err_seg' })
  orders.nextId()
  await orders.close()
  const held = await lease({ layout: Layout.TWITTER, connectionString: url, shards: [0, 4], table: 'errors_node' })
  await held.nextId()
  await held.close()
  print({
    dictionaryCached: await outcome(() => words.id('cached')),
    dictionaryMiss: await outcome(() => words.id('never seen')),
    dictionaryCreate: await outcome(() => words.create()),
    denseSync: await outcome(() => orders.nextId()),
    denseAsync: await outcome(() => orders.nextIdAsync()),
    denseBatch: await outcome(() => orders.nextIdsAsync(5)),
    lease: await outcome(() => held.nextId()),
    closeAgain: await outcome(async () => { await words.close(); await orders.close(); await held.close() }),
  })
} else if (mode === 'exits') {
  const [what] = rest
  const made = []
  if (what === 'dense' || what === 'all') {
    const orders = await denseIds({ connectionString: url, tag: 'errors_node', schema: 'err_seg', minSize: 10, maxSize: 10 })
    for (let i = 0; i < 25; i++) made.push(await orders.nextIdAsync()) // a prefetch or two on the way
  }
  if (what === 'dictionary' || what === 'all') {
    const words = new Dictionary({ connectionString: url, topic: 'errors_node', schema: 'err_dict' })
    made.push(await words.id(`exits ${process.pid}`))
  }
  if (what === 'lease' || what === 'all') {
    const held = await lease({ layout: Layout.TWITTER, connectionString: url, shards: [8, 16], table: 'errors_node_exits' })
    made.push(await held.nextId())
  }
  print({ done: made.length })
} else {
  throw new Error(`unknown mode ${mode}`)
}
