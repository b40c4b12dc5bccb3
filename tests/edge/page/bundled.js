// The page's code as a frontend writes it, bundled by webpack (tests/edge/pages.mjs): the
// package by name, no plugin, no loader, no .wasm to copy (the `import` entries carry the bytes).
import * as shardid from 'shardid-wasm'
import * as pub from 'shardid-wasm/public'

import { run } from '../app/checks.js'

let result
try {
  result = run(shardid, pub)
} catch (err) {
  result = { failure: String((err && err.stack) || err) }
}
document.body.dataset.result = JSON.stringify(result)
document.querySelector('output').textContent = JSON.stringify(result)
