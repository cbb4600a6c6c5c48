import t, { type Test } from 'tap'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import { embedCode } from '../../../lib/pages/embed.js'
import { SITES_PER_PAGE } from '../../../lib/pages/site-page.js'
import { openDb } from '../../../lib/store/db.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { testServer } from '../../helpers/server.js'
import { MIN, trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-22T12:00:00.000Z')
const HOSTILE = '<script>alert(1)</script>'

/** What a browser shows for escaped text. */
function decode(html: string): string {
  return html.replace(
    /&(lt|gt|quot|#x27|#x3D|#x60|amp);/g,
    (_m, e: string) => ({ lt: '<', gt: '>', quot: '"', '#x27': "'", '#x3D': '=', '#x60': '`', amp: '&' })[e] as string
  )
}

function textarea(html: string, id: string): string {
  const m = new RegExp(`<textarea id="${id}"[^>]*>([^<]*)</textarea>`).exec(html)
  if (!m) throw new Error(`no textarea ${id}`)
  return decode(m[1] as string)
}

function checkPageHeaders(t: Test, headers: Record<string, unknown>): void {
  t.match(headers['content-type'], /^text\/html; charset=utf-8/)
  const csp = String(headers['content-security-policy'])
  t.match(csp, /default-src 'none'/)
  t.match(csp, /script-src 'self'(;|$)/, 'scripts only from this origin, none inline')
  t.match(csp, /frame-ancestors 'none'/)
  t.notMatch(csp, /unsafe-inline|unsafe-eval/)
  t.equal(headers['x-content-type-options'], 'nosniff')
  t.equal(headers['referrer-policy'], 'strict-origin-when-cross-origin')
  t.equal(headers['x-frame-options'], 'DENY')
}

for (const engine of engines()) {
  t.test(`a site page shows status, uptime, response times, outages and embed code, on ${engine}`, async (t) => {
    const s = await trackedServer(t, { engine, sites: [{ domain: 'shop.example.com', name: 'The Shop' }], start: T0 })
    // A day of checks every 10 minutes, with a 35-minute outage in the morning and one ongoing now.
    for (let at = T0 - 24 * 60 * MIN + 10 * MIN; at < T0 - 30 * MIN; at += 10 * MIN) {
      const down = at >= T0 - 6 * 60 * MIN && at < T0 - 6 * 60 * MIN + 40 * MIN
      await s.feed('shop.example.com', down ? 'down' : 'up', at, { responseMs: down ? null : 100 + ((at / MIN) % 50) })
    }
    await s.feed('shop.example.com', 'down', T0 - 20 * MIN, { partial: true, responseMs: 900 })
    await s.feed('shop.example.com', 'down', T0 - 30_000, { partial: true, responseMs: 950 })
    s.clock.now = T0

    const res = await s.server.inject('/sites/shop.example.com')
    t.equal(res.statusCode, 200)
    checkPageHeaders(t, res.headers)
    matchesOpenApi(t, res)
    const html = res.payload
    t.match(html, /<h1 class="site-name">The Shop<\/h1>/)
    t.match(html, /<span id="status" class="status status-down">down \(partial\)<\/span>/)
    t.match(html, /Down: at least two monitoring locations found the site failing/)
    t.match(html, /Partial: some locations reached the site while others could not/, 'partial explained in words')
    const record = JSON.parse(
      (await s.server.inject({ url: '/api/v1/status/shop.example.com', headers: { authorization: `Bearer ${await s.issueKey()}` } }))
        .payload
    )
    for (const [window, value] of Object.entries(record.uptime_percent as Record<string, number>)) {
      t.match(
        html,
        new RegExp(`<td data-window="${window}">${String(value).replace('.', '\\.')} %</td>`),
        `uptime ${window} as the API reports it (${value})`
      )
    }
    t.ok(record.uptime_percent.day < 100)
    t.match(html, /<svg class="response-chart"[^>]*role="img"/)
    const lines = [...html.matchAll(/<polyline class="line" points="([^"]+)"\/>/g)].map((m) => (m[1] as string).split(' ').length)
    t.ok(lines.length >= 2, 'the outage splits the response-time line')
    t.ok(lines.reduce((a, b) => a + b, 0) > 100, 'with a point per five-minute bucket')
    t.match(html, /<rect class="down"/, 'down periods marked')
    t.match(html, /<text class="tick"[^>]*>\d+ ms<\/text>/, 'a labelled y axis')
    t.match(html, /<text class="tick"[^>]*>\d\d:00 UTC<\/text>/, 'a labelled time axis')

    const rows = [
      ...html.matchAll(
        /<tr><td><time datetime="([^"]+)">[^<]+<\/time><\/td><td>(.*?)<\/td><td>([^<]+)<\/td><td class="outage-cause">[^<]*<\/td><\/tr>/g
      )
    ]
    t.equal(rows.length, 2, 'two outages')
    t.same(
      rows.map((r) => [r[1], r[3]]),
      [
        [new Date(T0 - 20 * MIN).toISOString(), '20 min'],
        [new Date(T0 - 6 * 60 * MIN).toISOString(), '40 min']
      ],
      'newest first, with durations for people'
    )
    t.match(rows[0]?.[2], /ongoing/)

    const events = [...html.matchAll(/<tr data-event="([^"]+)"><td>([^<]+)<\/td><td><time datetime="([^"]+)">[^<]+<\/time><\/td><\/tr>/g)]
    t.same(
      events.map((e) => [e[1], e[2], e[3]]),
      [
        ['outage.opened', 'Outage started', new Date(T0 - 20 * MIN).toISOString()],
        ['outage.closed', 'Outage ended', new Date(T0 - 6 * 60 * MIN + 40 * MIN).toISOString()],
        ['outage.opened', 'Outage started', new Date(T0 - 6 * 60 * MIN).toISOString()],
        ['site.added', 'Monitoring started', new Date(T0 - 60 * MIN).toISOString()]
      ],
      "the site's events, newest first, in words, with their times"
    )

    const embed = embedCode({ publicUrl: 'https://status.example.net', domain: 'shop.example.com', name: 'The Shop' })
    t.equal(textarea(html, 'embed-html'), '<img src="https://status.example.net/api/badge/shop.example.com" alt="The Shop status">')
    t.equal(textarea(html, 'embed-markdown'), embed.markdown)
    t.equal(textarea(html, 'embed-url'), 'https://status.example.net/api/badge/shop.example.com')
    for (const id of ['embed-html', 'embed-markdown', 'embed-url'])
      t.match(html, new RegExp(`<button type="button" class="copy" data-copy="${id}" hidden>`), `a copy button for ${id}`)
    t.match(html, /<img class="badge" src="\/api\/badge\/shop\.example\.com"/, 'the live badge, from this origin')
    t.same(
      [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]),
      [' src="/static/copy.js" defer'],
      'the one script is a static file'
    )
    t.notMatch(html, /\sstyle="/, 'no inline styles')
  })
}

t.test('blocked, unconfirmed and never-checked sites are explained', async (t) => {
  const s = await trackedServer(t, {
    sites: [
      { domain: 'a.example.com', name: 'A' },
      { domain: 'b.example.com', name: 'B' },
      { domain: 'c.example.com', name: 'C' }
    ],
    start: T0
  })
  await s.feed('a.example.com', 'up', T0 - 1000, { blocked: true })
  await s.feed('b.example.com', 'unconfirmed', T0 - 1000)
  const a = (await s.server.inject('/sites/a.example.com')).payload
  t.match(a, /up \(blocked\)/)
  t.match(a, /Blocked: the site answered but refused the automated check/)
  t.match((await s.server.inject('/sites/b.example.com')).payload, /Unconfirmed: only one monitoring location could look/)
  const c = (await s.server.inject('/sites/c.example.com')).payload
  t.match(c, /Pending: the site is tracked but has not been checked yet/)
  t.match(c, /<dt>Last checked<\/dt><dd>never<\/dd>/)
  t.match(c, /No outage recorded\./)
  t.match(c, /No check answered in this period\./)
})

t.test('site-supplied text is escaped everywhere', async (t) => {
  const s = await trackedServer(t, {
    sites: [
      { domain: 'xss.example.com', name: HOSTILE },
      { domain: 'quote.example.com', name: '"><img src=x onerror=alert(2)>' }
    ],
    start: T0
  })
  for (const url of ['/', '/sites/xss.example.com', '/sites/quote.example.com']) {
    const html = (await s.server.inject(url)).payload
    t.notMatch(html, /<script>alert/, `${url}: no script from the name`)
    t.notMatch(html, /<img src=x/, `${url}: no element from the name`)
  }
  const page = (await s.server.inject('/sites/xss.example.com')).payload
  t.match(page, /<h1 class="site-name">&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/h1>/, 'shown as text')
  t.equal(
    textarea(page, 'embed-html'),
    '<img src="https://status.example.net/api/badge/xss.example.com" alt="&lt;script&gt;alert(1)&lt;/script&gt; status">',
    'the copied snippet carries the name escaped for HTML'
  )
})

t.test('untracked and invalid domains get HTML error pages; API routes keep JSON', async (t) => {
  const s = await trackedServer(t, { sites: [{ domain: 'shop.example.com', name: 'Shop' }], start: T0 })
  const missing = await s.server.inject('/sites/nobody.example.com')
  t.equal(missing.statusCode, 404)
  checkPageHeaders(t, missing.headers)
  t.match(missing.payload, /<h1>Not found<\/h1>[\s\S]*this site is not tracked here/)
  matchesOpenApi(t, missing)
  const invalid = await s.server.inject('/sites/bad_name')
  t.equal(invalid.statusCode, 400)
  checkPageHeaders(t, invalid.headers)
  t.match(invalid.payload, /<h1>Bad request<\/h1>/)
  const head = await s.server.inject({ method: 'HEAD', url: '/sites/shop.example.com' })
  t.equal(head.statusCode, 200)
  t.equal(head.payload, '')
  const api = await s.server.inject({
    url: '/api/v1/status/nobody.example.com',
    headers: { authorization: `Bearer ${await s.issueKey()}` }
  })
  t.equal(api.statusCode, 404)
  t.same(JSON.parse(api.payload), { error: 'site is not tracked' }, 'the API still answers JSON')
  const wrongMethod = await s.server.inject({ method: 'POST', url: '/sites/shop.example.com' })
  t.equal(wrongMethod.statusCode, 405)
  t.match(wrongMethod.headers['content-type'], /^application\/json/)
})

t.test('a page whose database is unreachable is an HTML 503 without internals', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  await addSites({ db, entries: [{ domain: 'shop.example.com', name: 'Shop' }], now: new Date(T0 - MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x.example' })
  await states.refresh(db, new Date(T0))
  const down = openDb('mysql://root@127.0.0.1:1/nothing')
  t.teardown(() => down.destroy())
  const { server } = await testServer({ db: down, states, now: () => new Date(T0) })
  const res = await server.inject('/sites/shop.example.com')
  t.equal(res.statusCode, 503)
  checkPageHeaders(t, res.headers)
  t.match(res.headers['retry-after'], /^\d+$/)
  t.match(res.payload, /<h1>Temporarily unavailable<\/h1>[\s\S]*database unavailable/)
  t.notMatch(res.payload, /ECONNREFUSED|select|\bat .+\.(ts|js):\d+/i, 'no cause, query or stack')
  matchesOpenApi(t, res)
})

t.test('the site list', async (t) => {
  const s = await trackedServer(t, {
    sites: [
      { domain: 'b.example.com', name: 'Bravo' },
      { domain: 'a.example.com', name: 'Alpha & Co' }
    ],
    start: T0
  })
  await s.feed('a.example.com', 'up', T0 - 1000, { responseMs: 42 })
  await s.feed('b.example.com', 'down', T0 - 1000)
  const res = await s.server.inject('/')
  t.equal(res.statusCode, 200)
  checkPageHeaders(t, res.headers)
  matchesOpenApi(t, res)
  const rows = [
    ...res.payload.matchAll(
      /<td><a href="\/sites\/([^"]+)">([^<]+)<\/a><\/td>\n<td>[^<]+<\/td>\n<td><span class="status status-(\w+)">([^<]+)<\/span><\/td>\n<td>([^<]+)<\/td>/g
    )
  ]
  t.same(
    rows.map((r) => r.slice(1)),
    [
      ['a.example.com', 'Alpha &amp; Co', 'up', 'up', '42 ms'],
      ['b.example.com', 'Bravo', 'down', 'down', '120 ms']
    ],
    'every tracked site with its status, by domain'
  )
  t.match(res.payload, /2 sites: <span class="status status-up">1 up<\/span>, <span class="status status-down">1 down<\/span>\./)

  const empty = await trackedServer(t, { sites: [], start: T0 })
  t.match((await empty.server.inject('/')).payload, /No site is tracked yet/)
})

t.test('the site list pages past 500 sites', async (t) => {
  const s = await trackedServer(t, {
    sites: Array.from({ length: SITES_PER_PAGE + 1 }, (_, i) => ({ domain: `s${String(i).padStart(4, '0')}.example.com`, name: null })),
    start: T0
  })
  const first = await s.server.inject('/')
  t.equal([...first.payload.matchAll(/<td><a href="\/sites\//g)].length, SITES_PER_PAGE)
  t.match(first.payload, /<a rel="next" href="\/\?page=2">/)
  const second = await s.server.inject('/?page=2')
  t.same(
    [...second.payload.matchAll(/<td><a href="\/sites\/([^"]+)"/g)].map((m) => m[1]),
    ['s0500.example.com']
  )
  t.match(second.payload, /<a rel="prev" href="\/\?page=1">/)
  t.equal((await s.server.inject('/?page=3')).statusCode, 404)
  for (const bad of ['0', 'abc', '1.5', '-1', '']) t.equal((await s.server.inject(`/?page=${bad}`)).statusCode, 400, `page=${bad}`)
})

t.test('static files: the copy script and the style sheet', async (t) => {
  const s = await trackedServer(t, { sites: [], start: T0 })
  const script = await s.server.inject('/static/copy.js')
  t.equal(script.statusCode, 200)
  t.match(script.headers['content-type'], /^(text|application)\/javascript/)
  t.equal(script.headers['x-content-type-options'], 'nosniff')
  t.match(script.payload, /navigator\.clipboard\.writeText/)
  const css = await s.server.inject('/static/site.css')
  t.equal(css.statusCode, 200)
  t.match(css.headers['content-type'], /^text\/css/)
  for (const url of ['/static/..%2F..%2F..%2Fpackage.json', '/static/..%2Ftemplates%2Fsite.hbs', '/static/nothing.js']) {
    const res = await s.server.inject(url)
    t.ok(res.statusCode === 403 || res.statusCode === 404, `${url} is refused (${res.statusCode})`)
    t.notMatch(res.payload, /"dependencies"|\{\{/, 'and shows nothing from outside static/')
  }
})
