// The WASM decoding benchmarks under Node: `scripts/bench-wasm.sh`.
import { createRequire } from 'node:module'
import { runBench } from './bench.js'
import { print } from './print.js'

const require = createRequire(new URL('../../bindings-wasm/package.json', import.meta.url))
const shardid = require('./pkg/node/shardid.js')
const { Snowflake } = require('@sapphire/snowflake')
print('Node', runBench(shardid, Snowflake))

