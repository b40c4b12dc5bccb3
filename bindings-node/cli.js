#!/usr/bin/env node
'use strict'
// `npx shardid`: the command line of the core (decode, bounds, layout, new, sql, public, status,
// restored),
// the same as the Python package's `shardid` script. `npx shardid --help` lists every command
// and option.
const fs = require('node:fs')
const native = require('./native.generated.js')

const args = process.argv.slice(2)
function print({ stdout, stderr, code }) {
  process.stdout.write(stdout)
  process.stderr.write(stderr)
  process.exitCode = code
}
if (args[0] === 'status' || args[0] === 'restored') {
  // The commands that read a database: shardid/status runs the core's statements on pg
  // or mysql2 and the core renders what they return.
  require('./status.js').main(args).then(print)
} else {
  // Standard input only for `decode` without IDs, so a script never waits on it otherwise.
  const stdin = native.cliWantsStdin(args) ? fs.readFileSync(0, 'utf8') : undefined
  print(native.cliRun(args, stdin))
}
