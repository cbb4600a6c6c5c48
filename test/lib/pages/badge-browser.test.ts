import t, { type Test } from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import axe from 'axe-core'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { chromiumMissing, launchChromium } from '../../helpers/browser.js'
import { figureServer } from '../../helpers/figures.js'
import type { TrackedServer } from '../../helpers/sites.js'
import { freePort } from '../../helpers/targets.js'

// Real headless Chromium draws every new badge and the chart, served by the real server on
// loopback from the figure badges' history (test/helpers/figures.ts); the pages that embed them
// pass axe-core. BADGE_SCREENSHOTS=DIR writes each badge's screenshot and the pages' there.
const NOW = Date.parse('2026-11-28T12:30:00.000Z')

/** badge-maker's named colours. */
const COLOURS = {
  green: [0x67, 0xac, 0x09],
  yellow: [0xd8, 0xb8, 0x00],
  orange: [0xea, 0x72, 0x33],
  red: [0xdd, 0x43, 0x43],
  lightgrey: [0x93, 0x93, 0x93]
} as const
/** Those, and the chart's thin marks, told by their hue (they are drawn blended into the white around them): its blue line, its red outages. */
type Colour = keyof typeof COLOURS | 'line' | 'outage'

/** Each image: its URL, the colours it must show, its height in CSS pixels. */
const IMAGES: Array<[string, Colour[], number]> = [
  ['/api/badge/old.example.com/uptime?window=24h', ['orange'], 20],
  ['/api/badge/old.example.com/uptime?window=7d&style=for-the-badge', ['yellow'], 28],
  ['/api/badge/old.example.com/uptime?window=90d&logo=clock', ['yellow'], 20],
  ['/api/badge/fresh.example.com/uptime', ['green'], 20],
  ['/api/badge/never.example.com/uptime', ['lightgrey'], 20],
  ['/api/badge/old.example.com/response-time', ['green'], 20],
  ['/api/badge/old.example.com/response-time?thresholds=100,150,199&style=flat-square', ['red'], 20],
  ['/api/badge/fresh.example.com/response-time?window=7d&style=plastic', ['yellow'], 18],
  ['/api/badge/page/both/uptime?window=24h', ['orange'], 20],
  ['/api/badge/page/both/response-time?logo=bolt', ['green'], 20],
  ['/api/badge/old.example.com?logo=pulse', ['green'], 20],
  ['/api/badge/untracked.example.com/uptime', ['lightgrey'], 20],
  ['/api/badge/old.example.com/chart.svg', ['line', 'outage'], 48],
  ['/api/badge/old.example.com/chart.svg?window=7d', ['line', 'outage'], 48],
  ['/api/badge/fresh.example.com/chart.svg?window=7d', ['line'], 48]
]

let browser: Browser
let s: TrackedServer
let origin: string
const missing = chromiumMissing()
if (missing !== null) t.comment(missing)
const skip = missing ?? false
const shots = process.env.BADGE_SCREENSHOTS

t.before(async () => {
  if (missing !== null) return
  browser = await launchChromium(t)
  const port = await freePort()
  origin = `http://127.0.0.1:${port}`
  s = await figureServer(t, { now: NOW, env: { PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: origin }, pageStreams: {} })
  await s.server.start()
  t.teardown(() => s.server.stop())
  if (shots !== undefined) mkdirSync(shots, { recursive: true })
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

/** Every image of the page drawn: loaded, and not broken. */
async function imagesDrawn(page: Page): Promise<void> {
  await page.waitForFunction(() => [...document.images].every((img) => img.complete && img.naturalWidth > 0), undefined, {
    timeout: 10_000
  })
}

/** The PNG's size from its header. */
const pngSize = (png: Buffer): [number, number] => [png.readUInt32BE(16), png.readUInt32BE(20)]

t.test('Chromium draws each new badge and the chart, in the colours their figures call for', { skip }, async (t) => {
  const { page, errors } = await watchedPage(t)
  // A page of this origin, so that its images may be read back from a canvas.
  await page.goto(`${origin}/sites/old.example.com`)
  await page.evaluate(
    (urls) => {
      const list = document.createElement('div')
      list.id = 'under-test'
      for (const url of urls) {
        const img = document.createElement('img')
        img.src = url
        img.alt = url
        list.append(img, document.createElement('br'))
      }
      document.body.prepend(list)
    },
    IMAGES.map(([url]) => url)
  )
  await imagesDrawn(page)
  const drawn = await page.evaluate((colours) => {
    return [...document.querySelectorAll<HTMLImageElement>('#under-test img')].map((img) => {
      const canvas = document.createElement('canvas')
      canvas.width = img.naturalWidth
      canvas.height = img.naturalHeight
      const context = canvas.getContext('2d') as CanvasRenderingContext2D
      context.drawImage(img, 0, 0)
      const { data } = context.getImageData(0, 0, canvas.width, canvas.height)
      const counts: Record<string, number> = { line: 0, outage: 0 }
      for (const name of Object.keys(colours)) counts[name] = 0
      for (let i = 0; i < data.length; i += 4) {
        if ((data[i + 3] as number) < 200) continue
        const [r, g, b] = [data[i] as number, data[i + 1] as number, data[i + 2] as number]
        for (const [name, [cr, cg, cb]] of Object.entries(colours)) {
          if (Math.abs(r - cr) + Math.abs(g - cg) + Math.abs(b - cb) < 40) counts[name] = (counts[name] ?? 0) + 1
        }
        if (b - r > 80) counts.line = (counts.line ?? 0) + 1
        if (r - g > 80 && r - b > 60) counts.outage = (counts.outage ?? 0) + 1
      }
      return { width: img.naturalWidth, height: img.naturalHeight, counts }
    })
  }, COLOURS)
  for (const [i, [url, colours, height]] of IMAGES.entries()) {
    const image = drawn[i] as (typeof drawn)[number]
    t.equal(image.height, height, `${url}: ${height} px high`)
    t.ok(image.width >= 60, `${url}: ${image.width} px wide`)
    for (const colour of colours)
      t.ok((image.counts[colour] ?? 0) >= (colour === 'outage' ? 4 : 20), `${url}: drawn in ${colour} (${image.counts[colour]} px)`)
    for (const other of ['green', 'yellow', 'orange', 'red'] as const) {
      if (url.includes('chart.svg') || colours.includes(other)) continue
      t.ok((image.counts[other] ?? 0) < 5, `${url}: not ${other}`)
    }
    const shot = await page.locator(`#under-test img >> nth=${i}`).screenshot()
    t.same(pngSize(shot), [image.width, height], `${url}: its screenshot is the badge's size`)
    if (shots !== undefined) writeFileSync(join(shots, `badge-${String(i).padStart(2, '0')}.png`), shot)
  }
  const withLogo = drawn[2]?.width ?? 0
  const plain = await page.evaluate(async () => {
    const img = new Image()
    img.src = '/api/badge/old.example.com/uptime?window=90d'
    await img.decode()
    return img.naturalWidth
  })
  t.ok(withLogo >= plain + 14, `the logo takes its room (${plain} -> ${withLogo} px)`)
  t.same(errors, [], 'no console errors and no CSP violations')
})

for (const [what, path] of [
  ['site page', '/sites/old.example.com'],
  ['status page', '/status/both']
] as const) {
  for (const colorScheme of ['light', 'dark'] as const) {
    t.test(`the ${what} shows the new badges with their embed code, and passes axe-core (${colorScheme})`, { skip }, async (t) => {
      const { page, errors } = await watchedPage(t, { colorScheme, viewport: { width: 1100, height: 900 } })
      t.equal((await page.goto(`${origin}${path}`))?.status(), 200)
      await imagesDrawn(page)
      const previews = await page.$$eval('img.figure-badge', (imgs) =>
        imgs.map((img) => [img.getAttribute('src'), img.getAttribute('alt')])
      )
      const base = path === '/status/both' ? '/api/badge/page/both' : '/api/badge/old.example.com'
      const name = path === '/status/both' ? 'Both' : 'Old Shop'
      t.same(
        previews.map(([src]) => src),
        path === '/status/both'
          ? [`${base}/uptime`, `${base}/response-time`]
          : [`${base}/uptime`, `${base}/response-time`, `${base}/chart.svg`],
        'a preview of each'
      )
      t.match(previews[0]?.[1], `${name} uptime, last 30 days`)
      t.equal(
        await page.inputValue('#embed-uptime-markdown'),
        `[![${name} uptime, last 30 days](${origin}${base}/uptime)](${origin}${path})`,
        'the Markdown to copy'
      )
      t.equal(
        await page.inputValue('#embed-response-time-html'),
        `<img src="${origin}${base}/response-time" alt="${name} response time, last 24 hours">`
      )
      // The status page folds its embed code into a closed <details>: opened as a reader would, so its
      // images are checked too (axe skips what is hidden).
      await page.evaluate(() => {
        for (const details of document.querySelectorAll('details')) details.open = true
      })
      await page.evaluate(axe.source)
      const result = await page.evaluate(() => window.axe.run(document))
      t.same(
        result.violations.map((v) => ({ id: v.id, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) })),
        [],
        'no violation'
      )
      t.ok(
        result.passes.some((p) => p.id === 'image-alt'),
        'every image has its alt text'
      )
      if (shots !== undefined) await page.screenshot({ path: join(shots, `${what.replace(' ', '-')}-${colorScheme}.png`), fullPage: true })
      t.same(errors, [])
    })
  }
}

declare global {
  interface Window {
    axe: typeof axe
  }
}
