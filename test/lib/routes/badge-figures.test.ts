import t from 'tap'
import { gunzipSync } from 'node:zlib'
import { makeBadge } from 'badge-maker'
import { LOGOS } from '../../../lib/badge/logos.js'
import { BADGE_CACHE_CONTROL } from '../../../lib/badge/renderer.js'
import { REFRESH_MS } from '../../../lib/badge/response-history.js'
import { insertChecks } from '../../../lib/store/checks.js'
import { scheduledCheck } from '../../helpers/checks.js'
import { engines } from '../../helpers/db.js'
import { figureServer, HOUR } from '../../helpers/figures.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { holds } from '../../helpers/poll.js'

const NOW = Date.parse('2026-11-28T12:30:00.000Z')

/** The endpoint JSON's fields of a badge: what its SVG says, in words. */
const said = (payload: string) => {
  const { label, message, color } = JSON.parse(payload) as Record<string, unknown>
  return [label, message, color]
}

for (const engine of engines()) {
  t.test(`uptime and response-time badges of sites and pages, every window, on ${engine}`, async (t) => {
    const s = await figureServer(t, { engine, now: NOW })
    const cases: Array<[string, string, string, string]> = [
      ['/api/badge/old.example.com/uptime?window=24h', 'uptime 24h', '95.83 %', 'orange'],
      ['/api/badge/old.example.com/uptime?window=7d', 'uptime 7d', '99.40 %', 'yellow'],
      ['/api/badge/old.example.com/uptime', 'uptime 30d', '99.02 %', 'yellow'],
      ['/api/badge/old.example.com/uptime?window=90d', 'uptime 90d', '99.67 %', 'yellow'],
      ['/api/badge/fresh.example.com/uptime?window=24h', 'uptime 24h', '100 %', 'green'],
      ['/api/badge/fresh.example.com/uptime?window=30d', 'uptime 30d', '100 % (3 d of data)', 'green'],
      ['/api/badge/never.example.com/uptime', 'uptime 30d', 'no data', 'lightgrey'],
      ['/api/badge/old.example.com/response-time', 'response time 24h', '200 ms', 'green'],
      ['/api/badge/old.example.com/response-time?window=7d', 'response time 7d', '114 ms', 'green'],
      ['/api/badge/old.example.com/response-time?window=30d', 'response time 30d', '65 ms', 'green'],
      ['/api/badge/old.example.com/response-time?window=90d', 'response time 90d', '55 ms', 'green'],
      ['/api/badge/old.example.com/response-time?window=90d&thresholds=50,60,70', 'response time 90d', '55 ms', 'yellow'],
      ['/api/badge/old.example.com/response-time?thresholds=100,150,199', 'response time 24h', '200 ms', 'red'],
      ['/api/badge/fresh.example.com/response-time', 'response time 24h', '300 ms', 'yellow'],
      ['/api/badge/fresh.example.com/response-time?window=90d', 'response time 90d', '300 ms (3 d of data)', 'yellow'],
      ['/api/badge/never.example.com/response-time', 'response time 24h', 'no data', 'lightgrey'],
      // A page: the mean of its sites with data (never.example.com has none).
      ['/api/badge/page/both/uptime', 'uptime 30d', '99.51 %', 'yellow'],
      ['/api/badge/page/both/uptime?window=24h', 'uptime 24h', '97.91 %', 'orange'],
      ['/api/badge/page/both/response-time', 'response time 24h', '250 ms', 'green'],
      ['/api/badge/page/young/uptime', 'uptime 30d', '100 % (3 d of data)', 'green'],
      ['/api/badge/page/young/response-time?window=7d', 'response time 7d', '300 ms (3 d of data)', 'yellow']
    ]
    for (const [url, label, message, color] of cases) {
      const svg = await s.server.inject(url)
      t.equal(svg.statusCode, 200, url)
      t.equal(svg.headers['content-type'], 'image/svg+xml', url)
      t.equal(svg.payload, makeBadge({ label, message, color, style: 'flat' }), `${url}: "${label} | ${message}" in ${color}`)
      t.equal(svg.headers['cache-control'], BADGE_CACHE_CONTROL, url)
      matchesOpenApi(t, svg, url)
      const [path, query = ''] = url.split('?')
      const json = await s.server.inject(`${path}/endpoint${query === '' ? '' : `?${query}`}`)
      t.equal(json.statusCode, 200)
      t.same(JSON.parse(json.payload), { schemaVersion: 1, label, message, color, cacheSeconds: 300 }, `${url} as endpoint JSON`)
      matchesOpenApi(t, json)
    }
  })
}

t.test('style, label and logo; bad parameters are 400 and never kept', async (t) => {
  const s = await figureServer(t, { now: NOW })
  const styled = await s.server.inject('/api/badge/old.example.com/uptime?style=for-the-badge&label=Uptime&v=2')
  t.equal(
    styled.payload,
    makeBadge({ label: 'Uptime', message: '99.02 %', color: 'yellow', style: 'for-the-badge' }),
    'unknown parameters are ignored'
  )
  const logo = await s.server.inject('/api/badge/old.example.com/response-time?logo=bolt')
  t.equal(
    logo.payload,
    makeBadge({ label: 'response time 24h', message: '200 ms', color: 'green', style: 'flat', logoBase64: LOGOS.bolt.dataUrl }),
    'the logo is drawn inline'
  )
  t.match(logo.payload, /<image [^>]*href="data:image\/svg\+xml;base64,/)
  t.notMatch(logo.payload, /https?:\/\/(?!www\.w3\.org)/, 'nothing is loaded from elsewhere')
  const status = await s.server.inject('/api/badge/old.example.com?logo=pulse')
  t.match(status.payload, /data:image\/svg\+xml;base64,/, 'the status badge takes a logo too')
  const json = await s.server.inject('/api/badge/page/both/uptime/endpoint?style=flat-square&logo=clock')
  t.same(JSON.parse(json.payload), {
    schemaVersion: 1,
    label: 'uptime 30d',
    message: '99.51 %',
    color: 'yellow',
    cacheSeconds: 300,
    style: 'flat-square',
    logoSvg: LOGOS.clock.svg
  })
  matchesOpenApi(t, json)

  const bad: Array<[string, RegExp]> = [
    ['/api/badge/old.example.com/uptime?window=1y', /"window" must be one of 24h, 7d, 30d, 90d/],
    ['/api/badge/old.example.com/uptime?window=24h&window=7d', /"window"/],
    ['/api/badge/old.example.com/response-time?thresholds=300,200,1000', /ascending/],
    ['/api/badge/old.example.com/response-time?thresholds=0,200,1000', /from 1 to 60000/],
    ['/api/badge/old.example.com/response-time?thresholds=100,200,60001', /"thresholds"/],
    ['/api/badge/old.example.com/response-time?thresholds=100,200', /"thresholds"/],
    ['/api/badge/old.example.com/response-time/endpoint?thresholds=a,b,c', /"thresholds"/],
    ['/api/badge/old.example.com/uptime?logo=github', /"logo" must be one of pulse, clock, globe, server, check, bolt/],
    ['/api/badge/old.example.com/uptime?style=social', /"style"/],
    ['/api/badge/localhost/uptime', /fully qualified/],
    ['/api/badge/page/BAD/uptime', /"slug"/],
    ['/api/badge/old.example.com/chart.svg?window=30d', /"window" must be one of 24h, 7d/]
  ]
  for (const [url, message] of bad) {
    const res = await s.server.inject(url)
    t.equal(res.statusCode, 400, url)
    t.match(JSON.parse(res.payload), { error: message }, url)
    t.equal(res.headers['cache-control'], 'no-store', `${url}: never kept`)
    matchesOpenApi(t, res, url)
  }
  for (const url of [
    '/api/badge/page/none/uptime',
    '/api/badge/page/none/response-time/endpoint',
    '/api/badge/old.example.com/uptime/nope'
  ]) {
    const res = await s.server.inject(url)
    t.equal(res.statusCode, 404, url)
    t.equal(res.headers['cache-control'], 'no-store', `${url}: never kept`)
    matchesOpenApi(t, res, url)
  }
  const post = await s.server.inject({ method: 'POST', url: '/api/badge/old.example.com/uptime' })
  t.equal(post.statusCode, 405)
  t.equal(post.headers['cache-control'], 'no-store')
  matchesOpenApi(t, post)
})

t.test('an untracked domain: grey "not tracked" badges and chart, 200, never kept', async (t) => {
  const s = await figureServer(t, { now: NOW })
  const untracked: Array<[string, string]> = [
    ['/api/badge/untracked.example.com/uptime', 'uptime 30d'],
    ['/api/badge/untracked.example.com/response-time?window=7d', 'response time 7d'],
    ['/api/badge/untracked.example.com', 'status']
  ]
  for (const [url, label] of untracked) {
    const res = await s.server.inject(url)
    t.equal(res.statusCode, 200, url)
    t.equal(res.payload, makeBadge({ label, message: 'not tracked', color: 'lightgrey', style: 'flat' }), url)
    t.equal(res.headers['cache-control'], 'no-store', `${url}: no-store`)
    matchesOpenApi(t, res, url)
    const json = await s.server.inject(`${url.split('?')[0]}/endpoint`)
    t.equal(json.headers['cache-control'], 'no-store')
  }
  const chart = await s.server.inject('/api/badge/untracked.example.com/chart.svg')
  t.equal(chart.statusCode, 200)
  t.match(chart.payload, /<title id="chart-title">Response time: not tracked<\/title>/)
  t.equal(chart.headers['cache-control'], 'no-store')
  matchesOpenApi(t, chart)
})

t.test('ETag, 304 and gzip on every new badge and the chart', async (t) => {
  const s = await figureServer(t, { now: NOW })
  for (const url of [
    '/api/badge/old.example.com/uptime',
    '/api/badge/old.example.com/uptime/endpoint',
    '/api/badge/old.example.com/response-time',
    '/api/badge/old.example.com/response-time/endpoint',
    '/api/badge/old.example.com/chart.svg',
    '/api/badge/old.example.com/chart.svg?window=7d',
    '/api/badge/page/both/uptime',
    '/api/badge/page/both/response-time/endpoint',
    '/api/badge/page/both/endpoint'
  ]) {
    const first = await s.server.inject(url)
    t.equal(first.statusCode, 200, url)
    t.match(first.headers, { etag: /^"[A-Za-z0-9_-]{32}"$/, vary: 'accept-encoding', 'access-control-allow-origin': '*' }, url)
    const again = await s.server.inject({ url, headers: { 'if-none-match': first.headers.etag as string } })
    t.equal(again.statusCode, 304, `${url}: 304`)
    t.equal(again.headers['cache-control'], BADGE_CACHE_CONTROL)
    matchesOpenApi(t, again, `${url} 304`)
    const gz = await s.server.inject({ url, headers: { 'accept-encoding': 'gzip' } })
    t.equal(gunzipSync(gz.rawPayload).toString(), first.payload, `${url}: the same bytes gzipped`)
    const gzAgain = await s.server.inject({ url, headers: { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag as string } })
    t.equal(gzAgain.statusCode, 304)
  }
  t.same(
    said((await s.server.inject('/api/badge/page/both/endpoint')).payload),
    ['Both', 'degraded', 'yellow'],
    'the page state as JSON too (a never-checked site is unavailable: degraded)'
  )
})

t.test('no database query per hit once warm; response times re-read in the background every 30 s', async (t) => {
  const s = await figureServer(t, { now: NOW })
  const sites = [
    '/api/badge/old.example.com/uptime?window=90d',
    '/api/badge/old.example.com/response-time?window=90d',
    '/api/badge/old.example.com/response-time/endpoint',
    '/api/badge/fresh.example.com/chart.svg?window=7d',
    '/api/badge/never.example.com/response-time',
    '/api/badge/untracked.example.com/uptime'
  ]
  const pages = ['/api/badge/page/both/uptime', '/api/badge/page/both/response-time?window=30d', '/api/badge/page/both/endpoint']
  let queries = 0
  s.db.on('query', () => queries++)
  for (const url of [...sites, ...pages]) t.equal((await s.server.inject(url)).statusCode, 200, `${url}: warm-up`)
  t.ok(queries > 0, `warming up read the response times and the pages (${queries} queries)`)
  queries = 0
  for (let i = 0; i < 50; i++) for (const url of [...sites, ...pages]) await s.server.inject(url)
  t.equal(queries, 0, `${(sites.length + pages.length) * 50} hits, no query`)
  // The figures are worked out again every second, from memory; pages re-read their list once a second (decisions.md, Status pages).
  for (let second = 1; second <= 5; second++) {
    s.clock.now = NOW + second * 1000
    for (let i = 0; i < 20; i++) for (const url of sites) await s.server.inject(url)
  }
  t.equal(queries, 0, `${sites.length * 100} hits over 5 s, no query`)

  // A new, slow check in the current hour: shown once the series is re-read, 30 s on.
  const [{ id }] = await s.db('sites').where({ domain: 'old.example.com' }).select('id')
  await insertChecks({ db: s.db, checks: [{ ...scheduledCheck(Number(id), 'up', NOW + 2000), responseMs: 2600 }] })
  queries = 0
  const url = '/api/badge/old.example.com/response-time/endpoint'
  t.same(said((await s.server.inject(url)).payload), ['response time 24h', '200 ms', 'green'], 'not yet')
  t.equal(queries, 0)
  s.clock.now = NOW + REFRESH_MS + 1
  t.ok(
    await holds(async () => said((await s.server.inject(url)).payload)[1] === '296 ms', 5000),
    'the new check moves the mean: (24 x 200 + 2600) / 25'
  )
  t.equal(queries, 1, 'one background read of the open hours, whatever the hits meanwhile')
})

t.test('uptime badges follow an outage within a second', async (t) => {
  const s = await figureServer(t, { now: NOW })
  t.same(said((await s.server.inject('/api/badge/fresh.example.com/uptime/endpoint?window=24h')).payload)[1], '100 %')
  await s.feed('fresh.example.com', 'down', NOW)
  s.clock.now = NOW + 1000
  t.same(
    said((await s.server.inject('/api/badge/fresh.example.com/uptime/endpoint?window=24h')).payload),
    ['uptime 24h', '99.99 %', 'green'],
    'an outage a second old shows: any down time does'
  )
  s.clock.now = NOW + 2 * HOUR
  t.same(
    said((await s.server.inject('/api/badge/fresh.example.com/uptime/endpoint?window=24h')).payload),
    ['uptime 24h', '91.66 %', 'red'],
    'two hours of outage in 24: 91.67, shown rounded down'
  )
})

t.test('the chart is drawn again when an outage begins, not as the seconds pass', async (t) => {
  const s = await figureServer(t, { now: NOW })
  const url = '/api/badge/fresh.example.com/chart.svg'
  const first = await s.server.inject(url)
  t.match(first.payload, /No outage\.<\/desc>/)
  s.clock.now = NOW + 20_000
  const later = await s.server.inject({ url, headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(later.statusCode, 304, 'the same chart 20 s on: a cache revalidating gets 304')
  await s.feed('fresh.example.com', 'down', NOW + 21_000)
  s.clock.now = NOW + 25_000
  const down = await s.server.inject({ url, headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(down.statusCode, 200, 'an outage began: a new chart')
  t.match(down.payload, /1 outage, 4 s down, marked in red\.<\/desc>/)
})
