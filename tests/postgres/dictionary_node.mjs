// Node's shardid/dictionary, driven by test_dictionary.py against its throwaway server:
// `node dictionary_node.mjs <connection string> <mode> [args]`; prints one JSON line.
//   contract: ids / id / lookup / value / values against the schema dict_node, and the same
//             strings as Python assigned (the mapping is the server's, not the client's).
//   writer:   <seed> <batches>: overlapping batches of shared strings on topic "shared" of
//             dict_load_mixed (Python writers run at the same time); prints every pair.
//   stats:    on topic "counted" of dict_node, the calls of Python's cache test (ids, id,
//             lookup, values), then stats() (bigints, printed as numbers).
//   bad:      every bad input's class and code.
//   cached:   (the server is stopped after "warm" is printed) cached reads still answer.
//   servers:  <JSON list of two connection strings>: the topics land where serverFor says.
import { createRequire } from 'node:module'
import readline from 'node:readline'

const require = createRequire(new URL('../../bindings-node/package.json', import.meta.url))
const { Dictionary, ddl, serverFor } = require('./dictionary.js')
const { ShardIdError } = require('./index.js')

const [connectionString, mode, ...rest] = process.argv.slice(2)
const print = (value) => console.log(JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? Number(v) : v)))
const outcome = async (f) => {
  try {
    await f()
    return 'no error'
  } catch (err) {
    return `${err.constructor.name} ${err instanceof ShardIdError ? err.code : err.message}`
  }
}

if (mode === 'contract') {
  const words = new Dictionary({ connectionString, topic: 'mixed', schema: 'dict_node' })
  const out = {
    ids: await words.ids(['from node', 'from python', 'from node']),
    id: await words.id('from python'),
    lookup: await words.lookup(['from node', 'never']),
    value: await words.value(0n),
    values: await words.values([1, 0n, 99]),
    cached: words.cache.size,
    iterable: await words.ids(new Set(['from node'])),
  }
  await words.close()
  print(out)
} else if (mode === 'stats') {
  const words = new Dictionary({ connectionString, topic: 'counted', schema: 'dict_node' })
  await words.ids(['b', 'a', 'b'])
  await words.id('c')
  await words.lookup(['a', 'never'])
  await words.values([2, 0, 77])
  const stats = words.stats()
  await words.close()
  print({ bigints: Object.values(stats).every((v) => typeof v === 'bigint'), stats })
} else if (mode === 'writer') {
  const [seed, batches] = rest.map(Number)
  let state = seed + 1
  const random = (n) => { state = (state * 1103515245 + 12345) % 2147483648; return state % n }
  const words = new Dictionary({ connectionString, topic: 'shared', schema: 'dict_load_mixed', cacheSize: seed % 2 ? 1000 : 0 })
  const pairs = []
  for (let b = 0; b < batches; b++) {
    const values = Array.from({ length: 1 + random(59) }, () => `s${random(3000)}`)
    const ids = await words.ids(values)
    values.forEach((v, i) => pairs.push([v, Number(ids[i])]))
  }
  await words.close()
  print(pairs)
} else if (mode === 'bad') {
  const words = new Dictionary({ connectionString, topic: 'mixed', schema: 'dict_node' })
  const out = {
    empty: await outcome(() => words.id('')),
    nul: await outcome(() => words.id('a\0b')),
    long: await outcome(() => words.id('x'.repeat(2049))),
    surrogate: await outcome(() => words.ids(['ok', 'a\ud800'])),
    notString: await outcome(() => words.ids(['ok', 5])),
    oneString: await outcome(() => words.ids('abc')),
    tooMany: await outcome(() => words.lookup(new Array(100001).fill('a'))),
    negative: await outcome(() => words.value(-1)),
    tooLarge: await outcome(() => words.values([2n ** 63n])),
    unknown: await outcome(() => new Dictionary({ connectionString, topic: 'nope', schema: 'dict_node' }).id('a')),
    topic: await outcome(() => new Dictionary({ connectionString, topic: '', schema: 'dict_node' })),
    schema: await outcome(() => new Dictionary({ connectionString, topic: 't', schema: 'x; DROP TABLE y' })),
    noServer: await outcome(() => new Dictionary({ connectionString: [], topic: 't' })),
    dropped: await outcome(() => new Dictionary({ connectionString, topic: 'gone', schema: 'dict_node', cacheSize: 0 }).id('new')),
    droppedRead: await new Dictionary({ connectionString, topic: 'gone', schema: 'dict_node' }).lookup(['old']),
  }
  await words.close()
  print(out)
} else if (mode === 'cached') {
  const words = new Dictionary({ connectionString, topic: 'mixed', schema: 'dict_node' })
  await words.ids(['from node', 'from python'])
  await words.values([0, 1])
  print('warm')
  // Wait for the test to stop the server.
  for await (const line of readline.createInterface({ input: process.stdin })) if (line === 'down') break
  const out = {
    ids: await words.ids(['from python', 'from node']),
    values: await words.values([1, 0]),
    miss: await outcome(() => words.id('not cached')),
    missCause: await words.id('not cached').catch((err) => err.cause?.code),
  }
  await words.close()
  out.closed = [await outcome(() => words.id('from node')), await outcome(() => words.id('not cached'))]
  print(out)
} else if (mode === 'servers') {
  const servers = JSON.parse(connectionString)
  const placed = {}
  for (let i = 0; i < 20; i++) {
    const topic = `node-topic-${i}`
    const words = new Dictionary({ connectionString: servers, topic })
    if (words.server !== serverFor(topic, 2)) throw new Error('server differs from serverFor')
    await words.create()
    await words.ids([topic])
    placed[topic] = words.server
    await words.close()
  }
  print({ placed, ddl: ddl('dict').includes('CREATE OR REPLACE FUNCTION dict.dict_ids') })
} else {
  throw new Error(`unknown mode ${mode}`)
}
