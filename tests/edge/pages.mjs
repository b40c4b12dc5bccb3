// Pages in Debian's headless Chromium (playwright-core, as tests/browser/): page/importmap.html,
// a page with no bundler (the package's files as installed, bare names mapped by an import
// map), and page/bundled.js bundled by webpack (production mode) and by Vite (`vite build`,
// page/vite.html its entry), each with no plugin and no loader. Each page's result is checked
// against app/checks.js's EXPECTED; no page error, no console message (wasm-bindgen's
// deprecation warning among them), and the bundled pages fetch no .wasm (nor does Vite's
// output hold one). Prints a line per check, as tests/check.sh's `check` does.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { build as vite } from 'vite'
import webpack from 'webpack'

import { EXPECTED } from './app/checks.js'
import { withPage } from '../browser/chromium.mjs'
import { serve } from '../browser/serve.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const out = mkdtempSync(join(tmpdir(), 'shardid-webpack-'))
const viteOut = mkdtempSync(join(tmpdir(), 'shardid-vite-'))
let failed = 0
const check = async (name, body) => {
  const started = Date.now()
  try {
    await body()
    console.log(`test edge::${name} ... ok (${Date.now() - started} ms)`)
  } catch (err) {
    failed++
    console.log(`test edge::${name} ... FAILED\n    ${String(err.message ?? err).replace(/\n/g, '\n    ')}`)
  }
}

/** What the page at `url` computed, with what it printed and fetched. */
async function open(page, url) {
  const printed = []
  const fetched = []
  page.on('pageerror', (e) => printed.push(`page error: ${e}`))
  page.on('console', (m) => printed.push(`${m.type()}: ${m.text()}`))
  page.on('request', (r) => fetched.push(new URL(r.url()).pathname))
  await page.goto(url)
  await page.waitForFunction(() => document.body.dataset.result, null, { timeout: 20_000 })
  return { result: JSON.parse(await page.evaluate(() => document.body.dataset.result)), printed, fetched }
}

await check('webpack bundles shardid-wasm and shardid-wasm/public, no plugin, no loader', () => new Promise((ok, fail) => {
  webpack({
    mode: 'production',
    context: here,
    entry: './page/bundled.js',
    output: { path: out, filename: 'main.js' },
    // webpack's resolution and module graph are what is tested; terser's pass over the bundle
    // took 3.5 s more here (6.2 s against 2.8 s) and changes no name the page uses.
    optimization: { minimize: false },
  }, (err, stats) => {
    if (err || stats.hasErrors()) return fail(err ?? new Error(stats.toString('errors-only')))
    writeFileSync(join(out, 'index.html'), '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><output></output><script src="main.js"></script>\n')
    ok()
  })
}))

await check('Vite bundles shardid-wasm and shardid-wasm/public, no plugin, no .wasm in its output', async () => {
  // Production build; minifying left out as for webpack (the resolution and the graph are what
  // is tested). No config file, its cache in the output's directory.
  await vite({
    root: here, configFile: false, logLevel: 'warn', cacheDir: join(viteOut, '.cache'),
    build: { outDir: join(viteOut, 'dist'), emptyOutDir: true, minify: false, rollupOptions: { input: join(here, 'page/vite.html') } },
  })
  const files = readdirSync(join(viteOut, 'dist'), { recursive: true })
  assert.ok(files.includes(join('page', 'vite.html')), `vite wrote ${files.join(', ')}`)
  assert.deepEqual(files.filter((f) => f.endsWith('.wasm')), [], 'a .wasm in the output')
})

const edge = await serve(here)
const bundled = await serve(out)
const viteBundled = await serve(join(viteOut, 'dist'))
try {
  await withPage(async (first) => {
    await check('a page with no bundler (import map) in Chromium: the default entry, public IDs, shardid-wasm/web', async () => {
      const { result, printed } = await open(first, `http://127.0.0.1:${edge.address().port}/page/importmap.html`)
      assert.deepEqual(printed, [])
      assert.deepEqual(result, { ...EXPECTED, web: '32', webAgain: true })
    })
    await check("webpack's bundle in Chromium, no .wasm fetched", async () => {
      const page = await first.context().newPage()
      const { result, printed, fetched } = await open(page, `http://127.0.0.1:${bundled.address().port}/index.html`)
      assert.deepEqual(printed, [])
      assert.deepEqual(result, EXPECTED)
      assert.ok(!fetched.some((p) => p.endsWith('.wasm')), `fetched ${fetched.join(', ')}`)
    })
    await check("Vite's bundle in Chromium, no .wasm fetched", async () => {
      const page = await first.context().newPage()
      const { result, printed, fetched } = await open(page, `http://127.0.0.1:${viteBundled.address().port}/page/vite.html`)
      assert.deepEqual(printed, [])
      assert.deepEqual(result, EXPECTED)
      assert.ok(!fetched.some((p) => p.endsWith('.wasm')), `fetched ${fetched.join(', ')}`)
    })
  })
} finally {
  edge.close()
  bundled.close()
  viteBundled.close()
  rmSync(out, { recursive: true, force: true })
  rmSync(viteOut, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
