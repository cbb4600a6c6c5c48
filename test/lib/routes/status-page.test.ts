import t, { type Test } from 'tap'
import { gunzipSync } from 'node:zlib'
import { SiteStatusClient } from '../../../lib/client/index.js'
import { updateStatusPage } from '../../../lib/store/status-pages.js'
import { engines } from '../../helpers/db.js'
import { bearer } from '../../helpers/server.js'
import { SseClient } from '../../helpers/sse.js'
import { storePage } from '../../helpers/status-pages.js'
import { MIN, trackedServer } from '../../helpers/sites.js'

const NOW = Date.now()
const SITES = [
  { domain: 'shop.example.com', name: 'Shop' },
  { domain: 'blog.example.com', name: 'Blog' },
  { domain: 'later.example.com', name: 'Later' },
  { domain: 'secret.example.com', name: 'Secret internal' }
]

/**
 * A listening server whose page `acme` lists shop (as "Web shop") and blog; `later` and `secret`
 * are tracked but on no page. Every site was checked up a minute ago. The clock is the real one:
 * the event feed and the streams run on it.
 */
async function pageServer(
  t: Test,
  engine: 'sqlite' | 'mysql',
  {
    logo = null,
    maxPerClient,
    maxTotal,
    env
  }: { logo?: string | null; maxPerClient?: number; maxTotal?: number; env?: Record<string, string> } = {}
) {
  const api = await trackedServer(t, { engine, sites: SITES, start: NOW, env, pageStreams: { heartbeatMs: 100, maxPerClient, maxTotal } })
  const ids = await storePage(
    api.db,
    { slug: 'acme', title: 'Acme <status>', description: 'What we run', logo_url: logo },
    [{ domain: 'shop.example.com', name: 'Web shop' }, { domain: 'blog.example.com' }],
    new Date(NOW - 60 * MIN)
  )
  for (const { domain } of SITES) await api.feed(domain, 'up', NOW - MIN)
  await api.server.start()
  t.teardown(() => api.server.stop())
  const base = `http://127.0.0.1:${api.server.info.port}`
  const get = (url: string) => api.server.inject({ method: 'GET', url })
  const id = (domain: string) => ids.get(domain) as number
  return { ...api, id, base, get }
}

for (const engine of engines()) {
  t.test(`a status page is server-rendered HTML of its own sites only, on ${engine}`, async (t) => {
    const api = await pageServer(t, engine, { logo: 'https://cdn.example.com/brand/logo.svg' })
    const res = await api.get('/status/acme')
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^text\/html; charset=utf-8/)
    t.equal(res.headers['cache-control'], 'no-cache')
    t.equal(res.headers['x-frame-options'], 'DENY')
    const csp = String(res.headers['content-security-policy'])
    t.match(csp, "img-src 'self' https://cdn.example.com;", "images from the page and the logo's origin")
    t.notMatch(csp, /img-src[^;]*(\*|https:;|brand)/, 'and from nothing wider')
    t.match(csp, "script-src 'self'")
    t.match(csp, "connect-src 'self'", 'its script may fetch the page and its events')
    const html = res.payload
    t.match(html, '<title>Acme &lt;status&gt;</title>', 'the title, escaped')
    t.match(html, '<img class="logo" src="https://cdn.example.com/brand/logo.svg" alt="">')
    t.match(html, 'What we run')
    t.match(html, '<link rel="alternate" type="application/atom+xml" href="/status/acme/feed.atom"')
    t.match(html, '<script src="/static/status-page.js" defer></script>')
    t.match(html, />All systems operational</)
    const shop = `s${api.id('shop.example.com')}`
    t.match(html, `<h3>Web shop</h3><span class="status status-up" id="state-${shop}">up</span>`, 'a display name, anchored by a number')
    t.notMatch(html, /shop\.example\.com/, 'the domain behind a display name is nowhere on the page')
    t.match(html, /<h3>Blog<\/h3>/)
    t.match(html, /id="uptime-blog\.example\.com">100 % uptime, last 30 days</, 'each site its uptime')
    for (const anchor of [shop, 'blog.example.com']) {
      const bars = new RegExp(`<ol class="days" id="days-${anchor.replace(/\./g, '\\.')}"[^>]*>(.*?)</ol>`).exec(html)?.[1] ?? ''
      t.equal(bars.match(/<li class=[a-z]+ tabindex=0><span>[^<]+<\/span>/g)?.length, 90, `${anchor}: 90 focusable bars`)
    }
    t.match(html, /<ul class="legend"[^>]*>.*<li class="maint">maintenance<\/li>/, 'a legend, maintenance with its own colour')
    t.match(html, /<details class="embed-code">\n<summary>Embed this page's badges<\/summary>/, 'embed code offered, folded away')
    t.notMatch(html, /<details open/)
    t.match(html, 'No incident in the last 90 days.')
    t.match(html, '/api/badge/page/acme', 'the page badge embed code')
    t.notMatch(html, /secret|Secret internal|later\.example/, 'no other site')
    t.notMatch(html, /<script>|<script [^s]/, 'no inline script')
    t.notMatch(html, 'href="/"', 'no link to the service-wide site list')

    const again = await api.get('/status/acme')
    t.equal(again.payload, html, 'the render is kept')
    t.match(res.headers.vary, 'accept-encoding')
    const zipped = await api.server.inject({ method: 'GET', url: '/status/acme', headers: { 'accept-encoding': 'gzip, deflate' } })
    t.equal(zipped.headers['content-encoding'], 'gzip')
    t.equal(gunzipSync(zipped.rawPayload).toString(), html, 'gzipped, the same page')
    t.match(zipped.headers['content-security-policy'], 'https://cdn.example.com', 'with its own CSP')
  })

  t.test(`an unknown slug is a 404 page, a malformed one a 400, and a page created later is served at once, on ${engine}`, async (t) => {
    const api = await pageServer(t, engine)
    for (const [slug, status, message] of [
      ['nope', 404, 'there is no status page here'],
      ['Acme', 400, '&quot;slug&quot; must be 1 to 64 lower-case letters, digits and hyphens'],
      ['a_b', 400, 'lower-case letters'],
      ['x'.repeat(65), 400, 'lower-case letters']
    ] as const) {
      const res = await api.get(`/status/${slug}`)
      t.equal(res.statusCode, status, slug)
      t.match(res.headers['content-type'], /^text\/html/)
      t.match(res.headers['content-security-policy'], "default-src 'none'")
      t.match(res.payload, message)
    }
    await storePage(api.db, { slug: 'nope', title: 'Now there', description: null, logo_url: null }, [], new Date(NOW))
    const res = await api.get('/status/nope')
    t.equal(res.statusCode, 200, 'a 404 is not kept')
    t.match(res.payload, '<h1>Now there</h1>')
    t.match(res.headers['content-security-policy'], "img-src 'self';", 'no logo: images from the page only')
  })

  t.test(`a page's events carry only its sites, forget its renders first, and follow its list, on ${engine}`, async (t) => {
    const api = await pageServer(t, engine)
    t.match((await api.get('/status/acme')).payload, />All systems operational</)
    const client = await SseClient.connect(`${api.base}/status/acme/events`)
    t.teardown(() => {
      client.close()
    })
    t.equal(client.status, 200)
    t.match(client.headers['content-type'], /^text\/event-stream/)
    t.equal(client.headers['cache-control'], 'no-cache')

    await api.feed('secret.example.com', 'down', NOW)
    await api.feed('shop.example.com', 'down', NOW)
    await client.waitFor((c) => c.events.length >= 1, 10_000, "shop's outage")
    t.same(
      client.events.map((e) => [e.type, e.data]),
      [['outage.opened', { name: 'Web shop', domain: null, at: client.events[0]?.data.at }]],
      "the page's site's event, as the page names it (a display name: no domain) and its time only; not the other site's"
    )
    const after = await api.get('/status/acme')
    t.match(after.payload, />Major outage</, 'the render kept a moment ago was forgotten before the event was sent')
    t.match(after.payload, `id="state-s${api.id('shop.example.com')}">down<`)

    await api.db.transaction((trx) =>
      updateStatusPage({
        db: trx,
        slug: 'acme',
        fields: {},
        sites: [
          { siteId: api.id('shop.example.com'), displayName: null },
          { siteId: api.id('later.example.com'), displayName: 'Later service' }
        ],
        now: new Date(NOW)
      })
    )
    await api.feed('blog.example.com', 'down', NOW + 1000)
    await api.feed('later.example.com', 'down', NOW + 1000)
    await api.feed('shop.example.com', 'up', NOW + 2000)
    await client.waitFor((c) => c.events.length >= 3, 10_000, "later's outage and shop's recovery")
    t.same(
      client.events.map((e) => [e.type, e.data.name, e.data.domain]),
      [
        ['outage.opened', 'Web shop', null],
        ['outage.opened', 'Later service', null],
        ['outage.closed', 'Shop', 'shop.example.com']
      ],
      'a site added to the page is carried from then on, one taken off is not, each named as the page names it now'
    )
    t.notMatch(
      JSON.stringify(client.events.slice(0, 2)),
      /(shop|later)\.example\.com/,
      'a site shown under a display name goes without its domain'
    )
    await client.waitFor((c) => c.blocks.some((b) => b.kind === 'comment' && b.text === ''), 5000, 'a heartbeat')
  })

  t.test(`a page changed or deleted through the API is served so at once, on ${engine}`, async (t) => {
    const api = await pageServer(t, engine)
    const manager = await api.issueKey({ limit: 1000, scopes: 'read,manage' })
    t.match((await api.get('/status/acme')).payload, '<h1>Acme &lt;status&gt;</h1>')
    const changed = await api.server.inject({
      method: 'PATCH',
      url: '/api/v1/pages/acme',
      headers: bearer(manager),
      payload: { title: 'Acme renamed' }
    })
    t.equal(changed.statusCode, 200)
    t.match((await api.get('/status/acme')).payload, '<h1>Acme renamed</h1>', 'not the render kept a moment ago')
    const deleted = await api.server.inject({ method: 'DELETE', url: '/api/v1/pages/acme', headers: bearer(manager) })
    t.equal(deleted.statusCode, 204)
    t.equal((await api.get('/status/acme')).statusCode, 404)
  })

  t.test(`behind a trusted proxy, page streams are counted per forwarded client, on ${engine}`, async (t) => {
    const url = (api: { base: string }) => `${api.base}/status/acme/events`
    const via = (client: string) => ({ 'x-forwarded-for': `192.0.2.66, ${client}` })
    const trusting = await pageServer(t, engine, { maxPerClient: 1, env: { TRUSTED_PROXIES: '127.0.0.0/8' } })
    const first = await SseClient.connect(url(trusting), via('203.0.113.1'))
    const second = await SseClient.connect(url(trusting), via('203.0.113.2'))
    const again = await SseClient.connect(url(trusting), via('203.0.113.1'))
    t.teardown(() => {
      for (const c of [first, second, again]) c.close()
    })
    t.same([first.status, second.status], [200, 200], 'two clients behind one proxy each have their own bound')
    t.equal(again.status, 429, "a client's second stream is over its bound of one")
    t.equal(trusting.pageStreams?.count('203.0.113.1'), 1, 'counted for the address the proxy appended, not the one the client wrote')
    t.equal(trusting.pageStreams?.count('127.0.0.1'), 0, 'and not for the proxy')

    const unset = await pageServer(t, engine, { maxPerClient: 1 })
    const one = await SseClient.connect(url(unset), via('203.0.113.1'))
    const other = await SseClient.connect(url(unset), via('203.0.113.2'))
    t.teardown(() => {
      for (const c of [one, other]) c.close()
    })
    t.same([one.status, other.status], [200, 429], 'without TRUSTED_PROXIES the header is not believed: one peer, one bound')
  })

  t.test(`page streams are bounded per client address and in total, with JSON errors, on ${engine}`, async (t) => {
    const api = await pageServer(t, engine, { maxPerClient: 2, maxTotal: 3 })
    const url = `${api.base}/status/acme/events`
    const open = [await SseClient.connect(url), await SseClient.connect(url)]
    t.teardown(() => {
      for (const c of open) c.close()
    })
    t.same(
      open.map((c) => c.status),
      [200, 200]
    )
    const third = await SseClient.connect(url)
    t.equal(third.status, 429, 'a third stream from one address')
    t.equal(third.headers['retry-after'], '5')
    t.match(JSON.parse(third.body), { error: /too many open status page streams from this address/ })
    t.equal(api.pageStreams?.count('127.0.0.1'), 2, 'a refused stream is not counted')

    open[0]?.close()
    await t.resolves(
      waitFor(() => api.pageStreams?.count('127.0.0.1') === 1),
      'a closed stream frees its slot'
    )
    // Other addresses: the loopback client has but one, so the total is filled directly.
    const others = ['192.0.2.7', '192.0.2.8'].map((client) => api.pageStreams?.open({ slug: 'acme', client }))
    t.teardown(() => {
      for (const o of others) o?.destroy()
    })
    const full = await SseClient.connect(url)
    t.equal(full.status, 503, 'past the total')
    t.equal(full.headers['retry-after'], '5')
    t.match(JSON.parse(full.body), { error: /too many open status page streams on this server/ })

    const missing = await SseClient.connect(`${api.base}/status/nope/events`)
    t.equal(missing.status, 404)
    t.same(JSON.parse(missing.body), { error: 'no such status page' })
    const bad = await SseClient.connect(`${api.base}/status/Bad/events`)
    t.equal(bad.status, 400)
    t.same(JSON.parse(bad.body), { error: '"slug" must be 1 to 64 lower-case letters, digits and hyphens' })
  })
}

t.test('the typed client reads a status page and its events', async (t) => {
  const api = await pageServer(t, 'sqlite')
  const client = new SiteStatusClient({ baseUrl: api.base })
  t.match(await client.statusPage('acme'), '<h1>Acme &lt;status&gt;</h1>')
  await t.rejects(client.statusPage('nope'), { name: 'SiteStatusError', status: 404 })
  const controller = new AbortController()
  const events = client.streamStatusPageEvents('acme', { signal: controller.signal })
  const first = events.next()
  await waitFor(() => api.pageStreams?.count() === 1)
  await api.feed('shop.example.com', 'down', NOW)
  t.match((await first).value, { type: 'outage.opened', data: { name: 'Web shop', domain: null, at: String } })
  controller.abort()
  await t.rejects(events.next())
})

/** Resolves once `cond` holds, checked on every turn of the event loop; rejects after 5 s. */
async function waitFor(cond: () => boolean): Promise<void> {
  const until = Date.now() + 5000
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition never held')
    await new Promise((resolve) => setImmediate(resolve))
  }
}
