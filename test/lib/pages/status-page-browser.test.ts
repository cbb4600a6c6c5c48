import t, { type Test } from 'tap'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import axe from 'axe-core'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { chromiumMissing, launchChromium } from '../../helpers/browser.js'
import { freePort } from '../../helpers/targets.js'
import { MIN, trackedServer, type TrackedServer } from '../../helpers/sites.js'
import { storePage } from '../../helpers/status-pages.js'

// Real headless Chromium against the real server on loopback, a status page of five sites with 100
// days of history recorded through the real recorder. The clock is the real one: the page's events
// come from the event feed, which runs on it. STATUS_PAGE_SCREENSHOTS=DIR writes the light and dark
// screenshots there (status-page-light.png, status-page-dark.png).
const START = Date.now()
const DAY = 86_400_000
const HOUR = 3_600_000
/** A UTC day ten days back, with a 6-hour outage of the shop (06:00-12:00): its bar shows 75 %. */
const OUTAGE_DAY_START = Math.floor(START / DAY) * DAY - 10 * DAY
const OUTAGE_DAY = new Date(OUTAGE_DAY_START).toISOString().slice(0, 10)
const SITES = [
  { domain: 'shop.example.com', name: 'Shop' },
  { domain: 'blog.example.com', name: 'Blog' },
  { domain: 'api.example.com', name: 'API' },
  { domain: 'cdn.example.com', name: 'CDN' },
  { domain: 'mail.example.com', name: 'Mail' }
]

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
    sites: SITES,
    start: START,
    env: { PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: origin },
    pageStreams: {}
  })
  await storePage(
    s.db,
    { slug: 'acme', title: 'Acme services', description: 'The services Acme runs for you.', logo_url: null },
    SITES.map((site) => ({ domain: site.domain })),
    new Date(START - 100 * DAY)
  )
  const history: Array<[string, 'up' | 'down', number]> = [
    ['shop.example.com', 'up', START - 100 * DAY],
    ['shop.example.com', 'down', OUTAGE_DAY_START + 6 * HOUR],
    ['shop.example.com', 'up', OUTAGE_DAY_START + 12 * HOUR],
    ['blog.example.com', 'up', START - 100 * DAY],
    // Monitored for 5 days only: the 85 days before show no data.
    ['api.example.com', 'up', START - 5 * DAY],
    ['cdn.example.com', 'up', START - 100 * DAY],
    ['cdn.example.com', 'down', START - 3 * DAY],
    ['cdn.example.com', 'up', START - 3 * DAY + 30 * MIN],
    ['mail.example.com', 'up', START - 100 * DAY]
  ]
  for (const [domain, status, at] of history) await s.feed(domain, status, at)
  for (const { domain } of SITES) await s.feed(domain, 'up', START - 30_000)
  // From here the server reads the real clock: the live test's check happens now.
  Object.defineProperty(s.clock, 'now', { get: () => Date.now() })
  await s.server.start()
  t.teardown(() => s.server.stop())
})

/** A page that records what should never happen: page errors, console errors and CSP violations. */
async function watchedPage(t: Test, options: BrowserContextOptions = {}): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext(options)
  t.teardown(() => context.close())
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  return { page, errors }
}

const states = (page: Page) =>
  page.$$eval('.site-head', (heads) => heads.map((h) => [h.querySelector('h3')?.textContent, h.querySelector('.status')?.textContent]))

t.test('a page of five sites renders each with its state, and the incidents', { skip }, async (t) => {
  const { page, errors } = await watchedPage(t)
  const res = await page.goto(`${origin}/status/acme`)
  t.equal(res?.status(), 200)
  t.equal(await page.textContent('h1'), 'Acme services')
  t.equal(await page.textContent('#page-state'), 'All systems operational')
  t.same(await states(page), [
    ['Shop', 'up'],
    ['Blog', 'up'],
    ['API', 'up'],
    ['CDN', 'up'],
    ['Mail', 'up']
  ])
  t.same(
    await page.$$eval('.incidents.past tbody tr', (rows) => rows.map((r) => [r.children[0]?.textContent, r.children[3]?.textContent])),
    [
      ['CDN', '30 min'],
      ['Shop', '6 h']
    ],
    'past incidents, newest first'
  )
  t.equal(
    await page.$eval('link[href="/static/status-page.css"]', (l) => (l as HTMLLinkElement).sheet !== null),
    true,
    'its style sheet loaded'
  )
  await page.waitForFunction(() => document.querySelector<HTMLImageElement>('img.badge')?.complete === true)
  t.ok(await page.$eval('img.badge', (img) => (img as HTMLImageElement).naturalWidth > 0), 'the page badge rendered')
  t.same(errors, [], 'no script errors and no CSP violations')
})

t.test('the 90 bars show each day: 75 % for a 6-hour outage, no data before the first check', { skip }, async (t) => {
  const { page, errors } = await watchedPage(t)
  await page.goto(`${origin}/status/acme`)
  const bars = (domain: string) =>
    page.$$eval(`[id="days-${domain}"] > li`, (items) => items.map((li) => ({ colour: li.getAttribute('class'), text: li.textContent })))
  const shop = await bars('shop.example.com')
  t.equal(shop.length, 90)
  const outage = shop.find((b) => b.text.startsWith(OUTAGE_DAY))
  t.same(outage, { colour: 'bad', text: `${OUTAGE_DAY}: 75 % uptime, 1 outage, 6 h down` })
  t.equal(shop.filter((b) => b.colour === 'up').length, 89, 'every other day up')
  t.match(shop.at(-1)?.text, /\(today so far\): 100 % uptime/)
  const api = await bars('api.example.com')
  t.same(
    api.slice(0, 84).map((b) => [b.colour, b.text.endsWith(': no data')]),
    Array.from({ length: 84 }, () => ['none', true]),
    'days before the first check: no data, drawn as such'
  )
  t.equal(api.at(-1)?.colour, 'up')
  t.same(errors, [])
})

t.test('pressing Tab reaches every bar of a site, and a focused bar shows its words', { skip }, async (t) => {
  const { page, errors } = await watchedPage(t)
  await page.goto(`${origin}/status/acme`)
  const reached = new Set<string>()
  for (let i = 0; i < 120 && reached.size < 90; i++) {
    await page.keyboard.press('Tab')
    const bar = await page.evaluate(() => {
      const el = document.activeElement
      return el?.parentElement?.id === 'days-shop.example.com' ? el.textContent : null
    })
    if (bar !== null) reached.add(bar)
  }
  t.equal(reached.size, 90, "all 90 of the first site's bars took the focus in turn")
  await page.focus(`[id="days-shop.example.com"] > li:nth-child(${90 - 10})`)
  const tip = await page.$eval(`[id="days-shop.example.com"] > li:focus > span`, (span) => {
    const box = span.getBoundingClientRect()
    return { width: box.width, height: box.height, text: span.textContent }
  })
  t.ok(tip.width > 100 && tip.height > 10, `the tooltip is drawn (${tip.width} x ${tip.height})`)
  t.equal(tip.text, `${OUTAGE_DAY}: 75 % uptime, 1 outage, 6 h down`)
  t.same(errors, [])
})

for (const colorScheme of ['light', 'dark'] as const) {
  t.test(`the page passes axe-core in the ${colorScheme} colour scheme`, { skip }, async (t) => {
    const { page, errors } = await watchedPage(t, { colorScheme, viewport: { width: 1100, height: 900 } })
    await page.goto(`${origin}/status/acme`)
    t.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), colorScheme === 'dark')
    // Evaluated through the DevTools protocol, which the page's CSP does not govern.
    await page.evaluate(axe.source)
    const result = await page.evaluate(() => window.axe.run(document))
    t.same(
      result.violations.map((v) => ({ id: v.id, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) })),
      [],
      'no violation'
    )
    t.ok(
      result.passes.some((p) => p.id === 'color-contrast'),
      'colour contrast was checked, and passed'
    )
    const dir = process.env.STATUS_PAGE_SCREENSHOTS
    if (dir !== undefined) {
      mkdirSync(dir, { recursive: true })
      await page.focus(`[id="days-shop.example.com"] > li:nth-child(80)`)
      await page.screenshot({ path: join(dir, `status-page-${colorScheme}.png`), fullPage: true })
    }
    t.same(errors, [])
  })
}

t.test('without JavaScript the page shows the states, the bars and the incidents', { skip }, async (t) => {
  const { page } = await watchedPage(t, { javaScriptEnabled: false })
  await page.goto(`${origin}/status/acme`)
  t.equal(await page.textContent('#page-state'), 'All systems operational')
  t.equal((await states(page)).length, 5)
  t.equal(await page.locator('.days > li').count(), 450)
  t.equal(await page.locator('.incidents.past tbody tr').count(), 2)
  await page.focus(`[id="days-shop.example.com"] > li:nth-child(80)`)
  t.match(
    await page.textContent(`[id="days-shop.example.com"] > li:focus`),
    /75 % uptime/,
    'the bars still take the focus and say their day'
  )
})

t.test('a site going down shows on the open page within 2 s, without a reload', { skip }, async (t) => {
  const { page, errors } = await watchedPage(t)
  await page.goto(`${origin}/status/acme`)
  const marker = await page.evaluate(() => {
    const w = window as unknown as { loadedOnce: number }
    w.loadedOnce = Math.random()
    return w.loadedOnce
  })
  // The page's script has its stream open once the server counts it (the other tests' pages are closed).
  for (let i = 0; s.pageStreams?.count() !== 1; i++) {
    if (i > 200) throw new Error('the page never opened its event stream')
    await page.waitForTimeout(25)
  }
  const began = performance.now()
  await s.feed('mail.example.com', 'down', Date.now())
  await page.waitForFunction(() => document.getElementById('state-mail.example.com')?.textContent === 'down', undefined, {
    timeout: 2000
  })
  const tookMs = performance.now() - began
  t.ok(tookMs < 2000, `shown ${Math.round(tookMs)} ms after the check was handed to the recorder`)
  t.equal(await page.textContent('#page-state'), 'Partial outage', 'the sentence follows')
  t.match(await page.textContent('.incidents.ongoing'), /Mail is down since/, 'and the ongoing incident is listed')
  t.equal(await page.evaluate(() => (window as unknown as { loadedOnce: number }).loadedOnce), marker, 'the page was not reloaded')
  t.same(errors, [])
})

declare global {
  interface Window {
    axe: typeof axe
  }
}
