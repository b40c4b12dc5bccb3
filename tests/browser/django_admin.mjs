// Django's admin in headless Chromium (Debian's, driven by playwright-core), for
// tests/python/test_django_admin.py: `node django_admin.mjs <base url> <user> <password>`. Logs
// in, adds a note on the add page, edits it on its change page, and prints one JSON line of what
// it saw: the ID inputs of both pages (none: a shard ID is made, not typed) and the change page's
// URL. Screenshots go to target/browser/admin-{add,change}.png.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

import { root, withAdmin } from './chromium.mjs'

const [base, user, password] = process.argv.slice(2)
const shots = join(root, 'target/browser')
mkdirSync(shots, { recursive: true })

await withAdmin(base, user, password, async (page, errors) => {
  const changelist = `${base}/admin/notes/note/`
  await page.goto(`${changelist}add/`)
  const addIdInputs = await page.locator('input[name="id"]').count()
  await page.screenshot({ path: join(shots, 'admin-add.png'), fullPage: true })
  await page.fill('#id_text', 'typed in Chromium')
  await Promise.all([page.waitForURL(changelist), page.click('input[name="_save"]')])

  // The new note's change page, from its row in the change list.
  const link = page.locator('#result_list tr', { hasText: 'typed in Chromium' }).locator('a[href*="/change/"]').first()
  const changeUrl = await link.getAttribute('href')
  await Promise.all([page.waitForURL(`${base}${changeUrl}`), link.click()])
  const changeIdInputs = await page.locator('input[name="id"]').count()
  const shownText = await page.inputValue('#id_text')
  await page.fill('#id_text', 'edited in Chromium')
  await page.screenshot({ path: join(shots, 'admin-change.png'), fullPage: true })
  await Promise.all([page.waitForURL(changelist), page.click('input[name="_save"]')])
  const listed = await page.locator('#result_list tbody tr').count()

  console.log(JSON.stringify({ addIdInputs, changeIdInputs, changeUrl, shownText, listed, errors }))
})
