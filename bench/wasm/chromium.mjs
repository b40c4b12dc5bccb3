// The WASM decoding benchmarks in headless Chromium: `scripts/bench-wasm.sh`.
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { serve } from '../../tests/browser/serve.mjs'
import { print } from './print.js'

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const { chromium } = createRequire(join(root, 'bindings-wasm/package.json'))('playwright-core')
const server = await serve(root)
const profile = mkdtempSync(join(tmpdir(), 'shardid-chromium-'))
try {
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  const page = await browser.newPage()
  await page.goto(`http://127.0.0.1:${server.address().port}/bench/wasm/page.html`)
  await page.waitForFunction(() => document.getElementById('out').dataset.results, null, { timeout: 120_000 })
  print('Chromium', JSON.parse(await page.$eval('#out', (e) => e.dataset.results)))
  await browser.close()
} finally {
  server.close()
  rmSync(profile, { recursive: true, force: true })
}
