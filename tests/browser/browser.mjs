// The browser test: Debian's Chromium (headless) driven by playwright-core loads
// examples/browser/index.html from 127.0.0.1, which imports the `--target web` module and
// decodes every vector; the test checks the values in the DOM and saves a screenshot to
// target/browser/screenshot.png. Prints a "test result:" line like cargo's.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { serve } from './serve.mjs'

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const { chromium } = createRequire(join(root, 'bindings-wasm/package.json'))('playwright-core')
const decodeCases = JSON.parse(await (await import('node:fs/promises')).readFile(join(root, 'tests/vectors/decode.json'), 'utf8')).cases

const server = await serve(root)
const profile = mkdtempSync(join(tmpdir(), 'shardid-chromium-'))
let failed = 0
let passed = 0
const check = (ok, name, detail = '') => {
  if (ok) passed++
  else failed++
  console.log(`test browser::${name} ... ${ok ? 'ok' : 'FAILED'} ${detail}`)
}
try {
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  const page = await browser.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(String(e)))
  const url = `http://127.0.0.1:${server.address().port}/examples/browser/index.html`
  await page.goto(url)
  await page.waitForFunction(() => document.getElementById('summary').dataset.total, null, { timeout: 20_000 })
  const summary = await page.$eval('#summary', (e) => ({ ...e.dataset, text: e.textContent }))
  check(Number(summary.total) === decodeCases.length && summary.passed === summary.total,
    'every decode vector passes in Chromium', `(${summary.text})`)
  const cells = await page.$$eval('#ids tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)))
  const discord = cells.find((r) => r[1] === '175928847299117063')
  check(discord && discord[2] === '2016-04-30T11:18:25.796Z' && discord[3] === '32' && discord[4] === '7',
    "the table shows Discord's documented ID decoded", JSON.stringify(discord))
  const made = cells.filter((r) => r[0] === 'instagram (made here)')
  check(made.length === 3 && made.every((r) => r[3] === '7') && new Set(made.map((r) => r[1])).size === 3,
    'the page makes three distinct IDs with its own generator')
  check(errors.length === 0, 'no page errors', errors.join('; '))
  mkdirSync(join(root, 'target/browser'), { recursive: true })
  await page.screenshot({ path: join(root, 'target/browser/screenshot.png'), fullPage: true })
  console.log('    screenshot: target/browser/screenshot.png')
  await browser.close()
} catch (e) {
  failed++
  console.log(`test browser::the page loads in Chromium ... FAILED ${e}`)
} finally {
  server.close()
  rmSync(profile, { recursive: true, force: true })
}
console.log(`\ntest result: ${failed ? 'FAILED' : 'ok'}. ${passed} passed; ${failed} failed; (browser: tests/browser/browser.mjs)`)
process.exit(failed ? 1 : 0)
