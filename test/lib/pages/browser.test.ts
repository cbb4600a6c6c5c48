import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { chromiumMissing, launchChromium } from '../../helpers/browser.js'
import { freePort } from '../../helpers/targets.js'
import { MIN, trackedServer, type TrackedServer } from '../../helpers/sites.js'

// Real headless Chromium against the real server on loopback. The clock is the real one: the
// browser and the server must agree on "now" for the checks to be fresh.
const HOSTILE = '<script>alert(1)</script>'
const START = Date.now()

let browser: Browser
let s: TrackedServer
let origin: string
const missing = chromiumMissing()
if (missing !== null) t.comment(missing)
const skip = missing ?? false

t.before(async () => {
  if (missing !== null) return
  browser = await launchChromium(t)
  const port = await freePort()
  origin = `http://127.0.0.1:${port}`
  s = await trackedServer(t, {
    sites: [
      { domain: 'shop.example.com', name: 'The Shop' },
      { domain: 'xss.example.com', name: HOSTILE }
    ],
    start: START,
    env: { PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: origin }
  })
  for (let i = 12; i >= 1; i--) await s.feed('shop.example.com', i === 6 ? 'down' : 'up', START - i * 5 * MIN, { responseMs: 80 + i })
  await s.feed('shop.example.com', 'up', START - 1000, { responseMs: 75 })
  await s.feed('xss.example.com', 'up', START - 1000)
  await s.server.start()
  t.teardown(() => s.server.stop())
})

/** A page that records what should never happen: dialogs, page errors and CSP violations. */
async function watchedPage(
  options: Parameters<Browser['newContext']>[0] = {}
): Promise<{ page: Page; dialogs: string[]; errors: string[] }> {
  const context = await browser.newContext(options)
  t.teardown(() => context.close())
  const page = await context.newPage()
  const dialogs: string[] = []
  const errors: string[] = []
  page.on('dialog', (d) => {
    dialogs.push(d.message())
    void d.dismiss()
  })
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  return { page, dialogs, errors }
}

async function badgeWidth(page: Page, selector: string): Promise<number> {
  await page.waitForFunction((sel) => document.querySelector<HTMLImageElement>(sel)?.complete === true, selector, { timeout: 10_000 })
  return page.$eval(selector, (img) => (img as HTMLImageElement).naturalWidth)
}

t.test('the site page shows the status, the uptime and a rendered badge', { skip }, async (t) => {
  const { page, errors } = await watchedPage()
  const res = await page.goto(`${origin}/sites/shop.example.com`)
  t.equal(res?.status(), 200)
  t.equal(await page.textContent('h1'), 'The Shop')
  t.equal(await page.textContent('#status'), 'up')
  t.match(await page.textContent('.current'), /Up: the monitoring locations reach the site/)
  const uptime = await page.$$eval('.uptime-table td', (cells) => cells.map((c) => c.textContent))
  t.equal(uptime.length, 3)
  for (const cell of uptime) t.match(cell, /^\d+(\.\d+)? %$/)
  t.ok(await page.isVisible('svg.response-chart polyline'), 'the response-time chart is drawn')
  t.ok((await badgeWidth(page, 'img.badge')) > 0, 'the badge image rendered (naturalWidth > 0)')
  t.equal(await page.$eval('link[rel=stylesheet]', (l) => (l as HTMLLinkElement).sheet !== null), true, 'the style sheet loaded')
  t.same(errors, [], 'no script errors and no CSP violations')
})

t.test('a copy button puts the snippet on the clipboard, and another origin can embed it', { skip }, async (t) => {
  const { page, errors } = await watchedPage()
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
  await page.goto(`${origin}/sites/shop.example.com`)
  const button = page.locator('button[data-copy="embed-html"]')
  t.ok(await button.isVisible(), 'the script shows the copy buttons')
  await button.click()
  await page.waitForFunction(() => document.querySelector('button[data-copy="embed-html"]')?.textContent === 'Copied')
  const copied = await page.evaluate(() => navigator.clipboard.readText())
  t.equal(copied, `<img src="${origin}/api/badge/shop.example.com" alt="The Shop status">`, 'the HTML snippet is on the clipboard')
  await page.locator('button[data-copy="embed-markdown"]').click()
  await page.waitForFunction(() => document.querySelector('button[data-copy="embed-markdown"]')?.textContent === 'Copied')
  t.equal(
    await page.evaluate(() => navigator.clipboard.readText()),
    `[![The Shop status](${origin}/api/badge/shop.example.com)](${origin}/sites/shop.example.com)`,
    'and so is the Markdown one'
  )
  t.same(errors, [])

  // Another loopback origin (another port) serving a page with the copied snippet pasted in.
  const other = http.createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><title>elsewhere</title><p>Our status:</p>${copied}`)
  })
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) =>
        other.close(() => {
          resolve()
        })
      )
  )
  const elsewhere = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
  t.not(elsewhere, origin)
  const embedder = await watchedPage()
  await embedder.page.goto(`${elsewhere}/`)
  t.ok((await badgeWidth(embedder.page, 'img')) > 0, 'the embedded badge renders on the other origin')
  t.equal(await embedder.page.$eval('img', (img) => img.alt), 'The Shop status')
  t.same(embedder.errors, [])
})

t.test('a site named <script>alert(1)</script> is shown as text', { skip }, async (t) => {
  const { page, dialogs, errors } = await watchedPage()
  await page.goto(`${origin}/sites/xss.example.com`)
  t.equal(await page.textContent('h1'), HOSTILE, 'the name is visible as text')
  t.ok(await page.isVisible('text=<script>alert(1)</script>'))
  t.equal(await page.$$eval('script', (scripts) => scripts.length), 1, 'the only script element is the copy-button file')
  await page.goto(`${origin}/`)
  t.equal(await page.textContent('a[href="/sites/xss.example.com"]'), HOSTILE, 'and as text in the site list')
  await page.waitForTimeout(200)
  t.same(dialogs, [], 'no alert ran')
  t.same(errors, [])
})

t.test('without JavaScript the page still shows everything but the copy buttons', { skip }, async (t) => {
  const { page } = await watchedPage({ javaScriptEnabled: false })
  await page.goto(`${origin}/sites/shop.example.com`)
  t.equal(await page.textContent('#status'), 'up')
  t.ok(await page.isVisible('#embed-html'), 'the snippets are there to select')
  t.equal(await page.inputValue('#embed-url'), `${origin}/api/badge/shop.example.com`)
  t.notOk(await page.isVisible('button[data-copy]'), 'the copy buttons stay hidden')
  t.ok((await badgeWidth(page, 'img.badge')) > 0)
})
