// Decoding benchmarks for the WebAssembly module, the same code in Node and in Chromium:
// per-ID decode against @sapphire/snowflake's deconstruct and a plain-BigInt decoder, and
// batch decode (decodeMany) per ID. Uses only performance.now(); returns ns per ID (median).
export function runBench({ Layout }, Sapphire) {
  const EPOCH = 1288834974657n
  const sapphire = new Sapphire(EPOCH)
  const N = 10_000
  // Realistic IDs: consecutive IDs of one worker over a few seconds, as decimal strings (JSON).
  const base = Layout.TWITTER.minIdAt(1_700_000_000_000)
  const bigints = Array.from({ length: N }, (_, i) => base + (BigInt(i) << 22n) + BigInt(i % 4096))
  const strings = bigints.map(String)
  const typed = BigUint64Array.from(bigints)

  // What a page would write without a library: BigInt shifts and masks.
  const plain = (id) => {
    const v = BigInt(id)
    return { timestampMs: Number((v >> 22n) + EPOCH), shard: Number((v >> 12n) & 1023n), sequence: Number(v & 4095n) }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
  const time = (fn, rounds = 25) => {
    for (let r = 0; r < 3; r++) fn()
    const samples = []
    for (let r = 0; r < rounds; r++) {
      const t = performance.now()
      fn()
      samples.push(((performance.now() - t) * 1e6) / N)
    }
    return median(samples)
  }
  let sink
  const results = {
    'shardid decode(string)': time(() => { for (const id of strings) sink = Layout.TWITTER.decode(id) }),
    'shardid decode(bigint)': time(() => { for (const id of bigints) sink = Layout.TWITTER.decode(id) }),
    '@sapphire/snowflake deconstruct(string)': time(() => { for (const id of strings) sink = sapphire.deconstruct(id) }),
    '@sapphire/snowflake deconstruct(bigint)': time(() => { for (const id of bigints) sink = sapphire.deconstruct(id) }),
    'plain BigInt decoder(string)': time(() => { for (const id of strings) sink = plain(id) }),
    'shardid decodeMany(strings), per ID': time(() => { sink = Layout.TWITTER.decodeMany(strings) }),
    'shardid decodeMany(BigUint64Array), per ID': time(() => { sink = Layout.TWITTER.decodeMany(typed) }),
  }
  globalThis.benchSink = sink
  return results
}
