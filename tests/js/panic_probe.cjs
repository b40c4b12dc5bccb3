'use strict'
// A panic inside the Node addon is a thrown error with code PANIC, and Node goes on: run by
// tests/js/run.sh, in a child process, against an addon built with the test-only
// `panic-probe` feature (argv[2]), whose panicProbe() panics inside the boundary on purpose.
// Exits non-zero (or dies of a signal, which the caller reports) when that is not so.
const assert = require('node:assert/strict')
const path = require('node:path')
const native = require(path.resolve(process.argv[2]))
const { ShardIdError } = require('../../bindings-node/errors.js')

for (let i = 0; i < 2; i++) {
  assert.throws(
    () => native.panicProbe(),
    (e) => e instanceof Error && e instanceof ShardIdError && e.code === 'PANIC' && /panic/.test(e.message),
  )
}
// Still working after two caught panics.
const layout = native.layoutPreset('twitter')
const generator = native.generatorNew(layout, 7)
assert.ok(native.nextId(generator) > 0n)
console.log('panic caught as code PANIC; the addon still makes IDs')
