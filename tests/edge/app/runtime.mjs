// Run by Node, Deno and Bun (tests/edge/run.sh) in tests/edge, where shardid-wasm is installed
// as a user installs it: the package by name, resolved by each runtime's own rules. Prints one
// line of JSON: what app/checks.js computes with the default entry and shardid-wasm/public, and
// what shardid-wasm/web's init() did with the module's bytes (and what it printed).
import * as shardid from 'shardid-wasm'
import * as pub from 'shardid-wasm/public'
import init from 'shardid-wasm/web'
import { readFileSync } from 'node:fs'

import { run } from './checks.js'

const warnings = []
for (const level of ['warn', 'error', 'log']) {
  const print = console[level]
  console[level] = (...args) => {
    warnings.push(args.join(' '))
    print(...args)
  }
}
const result = run(shardid, pub)
const bytes = readFileSync(new URL(import.meta.resolve('shardid-wasm/web/shardid_wasm_bg.wasm')))
const web = await init(bytes)
result.web = String(web.Layout.DISCORD.decode('175928847299117063').shard)
result.webAgain = (await init()) === web
result.printed = warnings
process.stdout.write(`${JSON.stringify(result)}\n`)
