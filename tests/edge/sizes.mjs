// The figures of docs/src/start/wasm.md's size table, measured on the installed package
// (node_modules/shardid-wasm): each module's .wasm as fetched beside shardid-wasm/web, and the
// page's first js block (its demo) bundled by esbuild with --minify, as it imports it
// ('shardid-wasm': the module's bytes inside the JavaScript) and from 'shardid-wasm/public'.
// Gzipped as tests/js/run.sh's size budget measures (gzip -9 of the file). Prints them; fails
// when the page's table differs, naming the command that rewrites it:
// `node tests/edge/sizes.mjs --write` (after tests/edge/run.sh installed the package).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import * as esbuild from 'esbuild'

const here = dirname(fileURLToPath(import.meta.url))
const page = join(here, '../../docs/src/start/wasm.md')
const pkg = join(here, 'node_modules/shardid-wasm')
const work = mkdtempSync(join(tmpdir(), 'shardid-sizes-'))
const gzipped = (file) => execFileSync('sh', ['-c', 'gzip -9 -c "$1" | wc -c', 'sh', file], { encoding: 'utf8' }).trim()
const n = (v) => Number(v).toLocaleString('en-US')
const kb = (v) => (Number(v) / 1000).toFixed(1)

const text = readFileSync(page, 'utf8')
const demo = text.match(/^```js\n([\s\S]*?)^```$/m)[1]
const rows = []
for (const [what, file] of [
  ['`web/shardid_wasm_bg.wasm`: the module (decoding, generators)', 'web/shardid_wasm_bg.wasm'],
  ['`web/shardid_wasm_public_bg.wasm`: the module with public IDs and UUIDs', 'web/shardid_wasm_public_bg.wasm'],
]) {
  rows.push([what, n(statSync(join(pkg, file)).size), n(gzipped(join(pkg, file)))])
}
try {
  for (const [what, from] of [['the demo above, bundled (esbuild --minify)', 'shardid-wasm'], ['the same from `shardid-wasm/public`', 'shardid-wasm/public']]) {
    const out = join(work, `${rows.length}.js`)
    await esbuild.build({
      stdin: { contents: demo.replaceAll("from 'shardid-wasm'", `from '${from}'`), resolveDir: here, loader: 'js' },
      bundle: true, minify: true, format: 'esm', outfile: out, logLevel: 'error',
    })
    // In KB to a tenth: a few bytes more of JavaScript glue leave the page as it is.
    rows.push([what, `${kb(statSync(out).size)} KB`, `${kb(gzipped(out))} KB`])
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}

const BEGIN = '<!-- sizes: tests/edge/sizes.mjs writes this table -->'
const END = '<!-- /sizes -->'
const table = [BEGIN, '| what | bytes | gzip -9 |', '| --- | ---: | ---: |', ...rows.map((r) => `| ${r.join(' | ')} |`), END].join('\n')
console.log(table)
const start = text.indexOf(BEGIN)
const end = text.indexOf(END)
if (start < 0 || end < 0) {
  console.log(`docs/src/start/wasm.md has no ${BEGIN} ... ${END}`)
  process.exit(1)
}
const now = text.slice(start, end + END.length)
if (process.argv.includes('--write')) {
  writeFileSync(page, text.replace(now, table))
  console.log('written into docs/src/start/wasm.md')
} else if (now !== table) {
  console.log('docs/src/start/wasm.md says otherwise: run `node tests/edge/sizes.mjs --write` (after tests/edge/run.sh) and commit')
  process.exit(1)
}
