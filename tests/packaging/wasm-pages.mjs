// Opens each bundled page (`node wasm-pages.mjs DIR...`, the outputs of esbuild and Vite for
// tests/packaging/wasm-app) in Debian's headless Chromium, served from 127.0.0.1, and checks
// what the page computed with shardid-wasm. The package's default entry carries the module's
// bytes, so the page must not fetch a .wasm at all. Exits non-zero on any difference.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { serve } from '../browser/serve.mjs'

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const { chromium } = createRequire(join(root, 'bindings-wasm/package.json'))('playwright-core')
const expected = {
  discord: ['1462015105796', 32, 7],
  increasing: true,
  shards: [7],
  json: true,
  sameObject: true,
  error: 'INVALID_ID',
}

const profile = mkdtempSync(join(tmpdir(), 'shardid-chromium-'))
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})
try {
  for (const dir of process.argv.slice(2)) {
    const server = await serve(dir)
    try {
      const page = await browser.newPage()
      const errors = []
      const fetched = []
      page.on('pageerror', (e) => errors.push(String(e)))
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()))
      page.on('request', (r) => fetched.push(new URL(r.url()).pathname))
      await page.goto(`http://127.0.0.1:${server.address().port}/index.html`)
      await page.waitForFunction(() => document.body.dataset.result, null, { timeout: 20_000 })
      const result = JSON.parse(await page.evaluate(() => document.body.dataset.result))
      assert.deepEqual(errors, [], `${dir}: errors on the page`)
      assert.deepEqual(result, expected, `${dir}: what the page computed`)
      assert.ok(!fetched.some((p) => p.endsWith('.wasm')), `${dir}: fetched ${fetched.join(', ')}`)
      console.log(`${dir}: ${JSON.stringify(result)} (fetched ${fetched.join(', ')})`)
      await page.close()
    } finally {
      server.close()
    }
  }
} finally {
  await browser.close()
  rmSync(profile, { recursive: true, force: true })
}
