// Prints a benchmark table and the ratio the issue sets a target for.
export function print(where, results) {
  const width = Math.max(...Object.keys(results).map((k) => k.length))
  console.log(`${where}: ns per ID (median of 25 runs of 10,000 IDs)`)
  for (const [name, ns] of Object.entries(results)) console.log(`  ${name.padEnd(width)}  ${ns.toFixed(1).padStart(7)}`)
  const d = results['@sapphire/snowflake deconstruct(string)']
  console.log(`  deconstruct / decodeMany(strings) = ${(d / results['shardid decodeMany(strings), per ID']).toFixed(1)}x (target at least 3x)`)
  const db = results['@sapphire/snowflake deconstruct(bigint)']
  console.log(`  deconstruct(bigint) / decodeMany(BigUint64Array) = ${(db / results['shardid decodeMany(BigUint64Array), per ID']).toFixed(1)}x`)
  console.log(`  deconstruct / decode(string)      = ${(d / results['shardid decode(string)']).toFixed(1)}x`)
}
