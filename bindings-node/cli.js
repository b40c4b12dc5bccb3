#!/usr/bin/env node
'use strict'
// `npx shardid`: the command line of the core (decode, bounds, layout, new, sql), the same as the
// Python package's `shardid` script. `npx shardid --help` lists every command and option.
const fs = require('node:fs')
const native = require('./native.generated.js')

const args = process.argv.slice(2)
// Standard input only for `decode` without IDs, so a script never waits on it otherwise.
const stdin = native.cliWantsStdin(args) ? fs.readFileSync(0, 'utf8') : undefined
const { stdout, stderr, code } = native.cliRun(args, stdin)
process.stdout.write(stdout)
process.stderr.write(stderr)
process.exitCode = code
