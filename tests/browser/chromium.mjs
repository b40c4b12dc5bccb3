// Debian's Chromium, headless, driven by playwright-core (a dev dependency of bindings-wasm,
// downloaded browsers none), and the Django admin's login form: what the admin tests in
// Chromium share (django_admin.mjs, django_admin_login.mjs, django_status_admin.mjs).
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const { chromium } = createRequire(join(root, 'bindings-wasm/package.json'))('playwright-core')

/** Runs `use(page)` in a fresh headless Chromium profile, which is removed afterwards. */
export async function withPage(use) {
  const profile = mkdtempSync(join(tmpdir(), 'shardid-admin-chromium-'))
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  try {
    const page = await browser.newPage()
    page.setDefaultTimeout(15_000)
    return await use(page)
  } finally {
    await browser.close()
    rmSync(profile, { recursive: true, force: true })
  }
}

/** Logs in through the admin's own login form (typed and submitted, as a person does). */
export async function adminLogin(page, base, user, password) {
  await page.goto(`${base}/admin/login/?next=/admin/`)
  await page.fill('#id_username', user)
  await page.fill('#id_password', password)
  await Promise.all([page.waitForURL(`${base}/admin/`), page.click('input[type="submit"]')])
}

/** Runs `use(page, errors, failed)` logged in to the admin at `base` as `user` (adminLogin), in
 *  a page of its own (withPage). From before the login on, `errors` collects the page's
 *  uncaught errors and `failed` its responses of status 400 and above. */
export async function withAdmin(base, user, password, use) {
  return withPage(async (page) => {
    const errors = []
    const failed = []
    page.on('pageerror', (e) => errors.push(String(e)))
    page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`) })
    await adminLogin(page, base, user, password)
    return use(page, errors, failed)
  })
}
