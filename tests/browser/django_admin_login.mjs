// DEFAULT_AUTO_FIELD = "shardid.django.ShardIdAutoField" in headless Chromium, for
// tests/postgres/test_django_auto_field.py: `node django_admin_login.mjs <base url> <user>
// <password> <username to open>`. Logs in through the admin's login form, finds the user in the
// user change list (the custom user model keyed by ShardIdAutoField), opens its change page from
// its link and prints one JSON line of what it saw: the change page's path (its pk is the key the
// admin put in the link), the username the form shows, the page's title. Screenshot:
// target/browser/admin-auto-field-user.png.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

import { root, withAdmin } from './chromium.mjs'

const [base, user, password, username] = process.argv.slice(2)
const shots = join(root, 'target/browser')
mkdirSync(shots, { recursive: true })

await withAdmin(base, user, password, async (page, errors) => {
  const welcome = await page.locator('#user-tools strong').textContent()

  // The change list's search, as a person would find the user among the others.
  await page.goto(`${base}/admin/shop/user/?q=${encodeURIComponent(username)}`)
  const link = page.locator('#result_list tbody tr a[href*="/change/"]', { hasText: new RegExp(`^${username}$`) })
  const href = await link.getAttribute('href')
  await Promise.all([page.waitForURL(`${base}${href}`), link.click()])
  const changeUrl = new URL(page.url()).pathname // without the change list's filters
  const shownUsername = await page.inputValue('#id_username')
  const title = await page.title()
  await page.screenshot({ path: join(shots, 'admin-auto-field-user.png'), fullPage: true })

  console.log(JSON.stringify({ welcome, changeUrl, shownUsername, title, errors }))
})
