import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Handlebars from 'handlebars'
import t from 'tap'
import { PAGES_DIR } from '../../../lib/pages/views.js'
import { dayClass, dayText, logoOrigin, statusPageContext, statusPageKeys } from '../../../lib/pages/status-page.js'
import type { StatusPageDay, StatusPageView } from '../../../lib/pages/status-page-view.js'

t.test("a day's bar colour tells its uptime, and a day with no data is not 100 %", async (t) => {
  const cases: Array<[number | null, string]> = [
    [100, 'up'],
    [99.9, 'up'],
    [99.89, 'dip'],
    [99, 'dip'],
    [98.99, 'low'],
    [95, 'low'],
    [75, 'bad'],
    [0, 'bad'],
    [null, 'none']
  ]
  for (const [uptime, colour] of cases) t.equal(dayClass(uptime), colour, `${uptime}: ${colour}`)
})

t.test("a day with maintenance has its own colour, unless an outage's colour outweighs it", async (t) => {
  t.equal(dayClass(100, 3600), 'maint', 'a clean day with maintenance is not green')
  t.equal(dayClass(null, 86_400), 'maint', 'a day all maintenance is not "no data"')
  t.equal(dayClass(99.95, 60), 'maint')
  t.equal(dayClass(98, 3600), 'low', 'an outage outweighs it')
  t.equal(dayClass(100, 0), 'up')
})

t.test("a day's bar says its date, uptime and outages in words", async (t) => {
  const day = (uptime: number | null, outages = 0, down = 0, maintenance = 0): StatusPageDay => ({
    date: '2026-11-20',
    uptime_percent: uptime,
    outages,
    down_seconds: down,
    maintenance_seconds: maintenance
  })
  t.equal(dayText(day(75, 1, 6 * 3600), false), '2026-11-20: 75 % uptime, 1 outage, 6 h down')
  t.equal(dayText(day(99.5, 2, 432), false), '2026-11-20: 99.5 % uptime, 2 outages, 7 min 12 s down')
  t.equal(dayText(day(100), false), '2026-11-20: 100 % uptime, no outage')
  t.equal(dayText(day(null), false), '2026-11-20: no data')
  t.equal(dayText(day(100), true), '2026-11-20 (today so far): 100 % uptime, no outage')
  t.equal(dayText(day(100, 0, 0, 7200), false), '2026-11-20: 100 % uptime, no outage, 2 h maintenance')
  t.equal(dayText(day(null, 0, 0, 86_400), false), '2026-11-20: maintenance (1 d)')
})

t.test("a logo's origin is allowed only for an absolute http(s) URL with a plain host", async (t) => {
  const cases: Array<[string | null, string | null]> = [
    ['https://cdn.example.com/img/logo.svg?v=2', 'https://cdn.example.com'],
    ['http://cdn.example.com:8080/logo.png', 'http://cdn.example.com:8080'],
    ['https://EXAMPLE.com/a b;c', 'https://example.com'],
    ['https://[2001:db8::1]:8443/logo.png', 'https://[2001:db8::1]:8443'],
    // Hosts the URL parser lets through that would widen img-src or add a directive: no source.
    ['https://*/x.png', null],
    ["https://a;script-src,'unsafe-inline'/x", null],
    ['https://a,b/x.png', null],
    ["https://a'b/x.png", null],
    ['data:image/svg+xml,<svg/>', null],
    ['javascript:alert(1)', null],
    ['/static/logo.svg', null],
    ['not a url', null],
    [null, null]
  ]
  for (const [url, origin] of cases) t.equal(logoOrigin(url), origin, String(url))
})

t.test("the page's renders are kept under its HTML, JSON and feed paths", async (t) => {
  t.same(statusPageKeys('acme'), { html: '/status/acme', json: '/status/acme.json', feed: '/status/acme/feed.atom' })
})

t.test('the context splits ongoing from past incidents and drops a logo it cannot allow', async (t) => {
  const days = (n: number): StatusPageDay[] =>
    Array.from({ length: n }, (_, i) => ({
      date: `2026-11-${String(i + 1).padStart(2, '0')}`,
      uptime_percent: 100,
      down_seconds: 0,
      outages: 0,
      maintenance_seconds: 0
    }))
  const view: StatusPageView = {
    slug: 'acme',
    title: 'Acme',
    description: null,
    logo_url: 'javascript:alert(1)',
    state: 'partial outage',
    generated_at: '2026-11-28T12:00:00.000Z',
    sites: [
      {
        anchor: 'shop.example.com',
        domain: 'shop.example.com',
        name: 'Shop',
        uptime_percent: 99.5,
        status: 'down',
        partial: true,
        slow: false,
        cause: { summary: 'HTTP 500 from 2 of 3 locations', errors: ['http: 500'] },
        days: days(3)
      },
      {
        anchor: 's7',
        domain: null,
        name: 'Blog',
        uptime_percent: 100,
        status: 'up',
        partial: false,
        slow: true,
        cause: null,
        days: days(3)
      },
      {
        anchor: 'api.example.com',
        uptime_percent: null,
        cause: null,
        domain: 'api.example.com',
        name: 'API',
        status: 'up',
        partial: false,
        slow: false,
        maintenance: { until: '2026-11-28T13:00:00.000Z', reason: null },
        days: days(3)
      }
    ],
    heartbeats: [] as StatusPageView['heartbeats'],
    monitors: [] as StatusPageView['monitors'],
    incidents: [
      { domain: 'shop.example.com', name: 'Shop', started_at: '2026-11-28T11:00:00.000Z', ended_at: null, duration_seconds: 3600 },
      {
        domain: 'shop.example.com',
        name: 'Shop',
        started_at: '2026-11-20T06:00:00.000Z',
        ended_at: '2026-11-20T12:00:00.000Z',
        duration_seconds: 21600
      }
    ]
  } as StatusPageView
  const context = statusPageContext({ view, publicUrl: 'https://status.example.net' }) as any
  t.equal(context.page.logo, null, 'a logo the CSP cannot allow is not drawn')
  t.equal(context.page.sentence, 'Partial outage')
  t.same(
    context.sites.map((s: any) => [s.label, s.state]),
    [
      ['down (partial)', 'down'],
      ['up (slow)', 'up'],
      ['maintenance until 2026-11-28 13:00:00 UTC', 'maintenance']
    ]
  )
  t.same(
    context.sites.map((s: any) => [s.anchor, s.uptime, s.cause?.summary ?? null]),
    [
      ['shop.example.com', '99.5 %', 'HTTP 500 from 2 of 3 locations'],
      ['s7', '100 %', null],
      ['api.example.com', null, null]
    ],
    'each site its anchor, uptime and cause'
  )
  t.equal(context.anyIncident, true)
  t.same(
    context.sites[0].days.map((d: any) => d.t),
    ['2026-11-01: 100 % uptime, no outage', '2026-11-02: 100 % uptime, no outage', '2026-11-03 (today so far): 100 % uptime, no outage']
  )
  t.same(
    context.ongoing.map((i: any) => i.duration),
    ['1 h']
  )
  t.same(
    context.past.map((i: any) => [i.started, i.ended, i.duration]),
    [['2026-11-20 06:00:00 UTC', '2026-11-20 12:00:00 UTC', '6 h']]
  )
  t.equal(context.embed.url, 'https://status.example.net/api/badge/page/acme')
})

t.test('the incidents section: "No incident" only when there is none, ongoing or past', async (t) => {
  const template = Handlebars.compile(readFileSync(join(PAGES_DIR, 'templates', 'status-page.hbs'), 'utf8'))
  const page = { slug: 'acme', title: 'Acme', state: 'down', sentence: 'Major outage', generated: 'now', generatedIso: 'now' }
  const ongoing = [{ name: 'Shop', started: 'then', startedIso: 'then', duration: '1 h' }]
  const render = (context: Record<string, unknown>) => template({ page, sites: [], embed: {}, badges: [], ...context })
  const onlyOngoing = render({ ongoing, past: [], anyIncident: true })
  t.match(onlyOngoing, /<h3>Ongoing<\/h3>/)
  t.notMatch(onlyOngoing, /No incident/, 'no "No incident" line under ongoing incidents')
  t.notMatch(onlyOngoing, /Past 90 days/, 'nor an empty past list')
  t.match(render({ ongoing: [], past: [], anyIncident: false }), 'No incident in the last 90 days.')
})
