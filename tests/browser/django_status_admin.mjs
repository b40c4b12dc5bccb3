// shardid's admin section (shardid.django.admin) in headless Chromium, for
// tests/postgres/test_django_status_admin.py: `node django_status_admin.mjs <base url> <user>
// <password> <screenshot directory>`. Logs in through the admin's login form, follows the
// index's links to shardid's pages (leases, tags, topics), and on each takes a full-page
// screenshot (<dir>/admin-shardid-<model>.png) and reads what the page shows: the layout's line,
// each table's heading, column headers and rows as the browser renders them (innerText: what a
// person sees, hidden text excluded). Prints one JSON line.
import { join } from 'node:path'

import { withAdmin } from './chromium.mjs'

const [base, user, password, shots] = process.argv.slice(2)

await withAdmin(base, user, password, async (page, errors, failed) => {
  // The index lists the section as the admin lists any app: its models, linked, without "Add".
  const app = page.locator('.app-shardid')
  const index = {
    caption: (await app.locator('caption').innerText()).trim(),
    models: await app.locator('th[scope="row"] a').allInnerTexts(),
    addLinks: await app.locator('a.addlink').count(),
  }
  const pages = {}
  for (const model of ['lease', 'tag', 'topic']) {
    const link = app.locator(`a[href$="/admin/shardid/${model}/"]`).first()
    await Promise.all([page.waitForURL(`${base}/admin/shardid/${model}/`), link.click()])
    const shot = join(shots, `admin-shardid-${model}.png`)
    await page.screenshot({ path: shot, fullPage: true })
    const sections = []
    for (const section of await page.locator('.shardid-section').all()) {
      const table = section.locator('table.shardid-rows')
      const hasTable = (await table.count()) > 0
      sections.push({
        where: (await section.locator('h2').innerText()).trim(),
        absent: hasTable ? null : (await section.locator('.shardid-absent').innerText()).trim(),
        columns: hasTable ? (await table.locator('thead th').allTextContents()).map((t) => t.trim()) : [], // the DOM's text: the admin's CSS shows headers in capitals
        rows: hasTable
          ? await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.innerText.trim())))
          : [],
      })
    }
    pages[model] = {
      title: await page.title(),
      layout: (await page.locator('#shardid-layout').innerText()).trim(),
      sections,
      forms: await page.locator('#content form').count(),
      shot,
      viewport: await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]),
    }
  }
  console.log(JSON.stringify({ index, pages, errors, failed }))
})
