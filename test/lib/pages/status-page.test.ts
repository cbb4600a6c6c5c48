import t from 'tap'
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

t.test("a day's bar says its date, uptime and outages in words", async (t) => {
  const day = (uptime: number | null, outages = 0, down = 0): StatusPageDay => ({
    date: '2026-11-20',
    uptime_percent: uptime,
    outages,
    down_seconds: down
  })
  t.equal(dayText(day(75, 1, 6 * 3600), false), '2026-11-20: 75 % uptime, 1 outage, 6 h down')
  t.equal(dayText(day(99.5, 2, 432), false), '2026-11-20: 99.5 % uptime, 2 outages, 7 min 12 s down')
  t.equal(dayText(day(100), false), '2026-11-20: 100 % uptime, no outage')
  t.equal(dayText(day(null), false), '2026-11-20: no data')
  t.equal(dayText(day(100), true), '2026-11-20 (today so far): 100 % uptime, no outage')
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
      outages: 0
    }))
  const view: StatusPageView = {
    slug: 'acme',
    title: 'Acme',
    description: null,
    logo_url: 'javascript:alert(1)',
    state: 'partial outage',
    generated_at: '2026-11-28T12:00:00.000Z',
    sites: [
      { domain: 'shop.example.com', name: 'Shop', status: 'down', partial: true, slow: false, days: days(3) },
      { domain: 'blog.example.com', name: 'Blog', status: 'up', partial: false, slow: true, days: days(3) },
      {
        domain: 'api.example.com',
        name: 'API',
        status: 'up',
        partial: false,
        slow: false,
        maintenance: { until: '2026-11-28T13:00:00.000Z', reason: null },
        days: days(3)
      }
    ],
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
