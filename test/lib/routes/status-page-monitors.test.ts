/**
 * Status pages list tcp, tls and dns monitors beside their sites (issue 47): named by slug through
 * the pages API, shown by name, kind, state and uptime, never by the target, port or resolver
 * answers behind them, in the JSON, the HTML and the page's event stream alike.
 */
import t from 'tap'
import { forgetStatusPage } from '../../../lib/pages/status-page.js'
import type { LocationResult } from '../../../lib/probing/locations/index.js'
import { listPagesOfSites } from '../../../lib/store/status-pages.js'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer } from '../../helpers/server.js'
import { MIN, trackedServer } from '../../helpers/sites.js'
import { SseClient } from '../../helpers/sse.js'

// The real clock: the event feed and the page streams run on it.
const NOW = Date.now()
type Json = Record<string, any>

/** What a monitor's page must never give away: its slugs, targets, port and expected answer. */
const SECRETS = ['orders-db', 'mail-mx', 'db-7.internal.example', 'mx-target.example.org', '10.1.2.3', '10 mx1.example.org', 'monitor:']

/** A location that could not connect, its error naming the address and port, as a connect error does. */
const refused = (location: string): LocationResult => ({
  location,
  status: 'down',
  http_code: 0,
  response_ms: 2,
  error: 'connect ECONNREFUSED 10.1.2.3:5432',
  code: 'connect_refused',
  final_url: null,
  timings: { dns: 1, connect: 0, tls: 0, first_byte: 0, total: 2 }
})

for (const engine of engines()) {
  t.test(`a status page lists monitors by name, kind and state, never their targets, on ${engine}`, async (t) => {
    const api = await trackedServer(t, {
      engine,
      sites: [{ domain: 'shop.example.com', name: 'Shop' }],
      start: NOW,
      pageStreams: { heartbeatMs: 100 }
    })
    await api.server.start()
    t.teardown(() => api.server.stop())
    const base = `http://127.0.0.1:${api.server.info.port}`
    const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const call = async (method: string, url: string, payload?: unknown, key: string | null = manager) => {
      const res = await api.server.inject({ method, url, headers: key === null ? {} : bearer(key), payload: payload as object | undefined })
      matchesOpenApi(t, res, `${method} ${url} ${res.statusCode}`)
      const json = String(res.headers['content-type'] ?? '').includes('json')
      return { status: res.statusCode, body: (json ? JSON.parse(res.payload) : null) as Json, payload: res.payload }
    }
    /** The public answers, rendered afresh (a render is otherwise kept for a second). */
    const publicly = async (url: string) => {
      forgetStatusPage(api.statusPageRenders, 'infra')
      return call('GET', url, undefined, null)
    }
    const noSecrets = (text: string, where: string) => {
      for (const secret of SECRETS) t.notMatch(text, secret, `${where} holds no ${secret}`)
    }

    const db = { name: 'Orders DB', slug: 'orders-db', target: 'db-7.internal.example', check: { type: 'tcp', port: 5432 } }
    t.equal((await call('POST', '/api/v1/monitors', db)).status, 201)
    const mx = { type: 'dns', record: 'MX', expect: ['10 mx1.example.org'] }
    t.equal(
      (await call('POST', '/api/v1/monitors', { name: 'Mail', slug: 'mail-mx', target: 'mx-target.example.org', check: mx })).status,
      201
    )
    await call('POST', '/api/v1/heartbeats', { name: 'Nightly backup', schedule: { every_s: 86_400 }, grace_s: 600 })

    const refusedBodies: Array<[Json, RegExp]> = [
      [{ monitors: [{ slug: 'nobody' }] }, /^no monitor has the slug "nobody"; add it before listing it on a page$/],
      [{ monitors: [{ slug: 'nightly-backup' }] }, /^no monitor has the slug "nightly-backup"/],
      [{ monitors: [{ slug: 'orders-db' }, { slug: 'orders-db' }] }, /^monitor orders-db is listed twice$/],
      [{ monitors: ['orders-db'] }, /^monitor 1 must be an object with a "slug" and an optional "name"$/],
      [{ monitors: [{ slug: 'Orders DB' }] }, /^monitor 1: "slug" must be/],
      [{ monitors: [{ slug: 'orders-db', target: 'x' }] }, /^monitor 1 must be an object/],
      [{ monitors: 'orders-db' }, /^"monitors" must be a list of at most 100 monitors/]
    ]
    for (const [lists, why] of refusedBodies) {
      const res = await call('POST', '/api/v1/pages', { slug: 'infra', title: 'Infra', sites: [], ...lists })
      t.equal(res.status, 400, JSON.stringify(lists))
      t.match(res.body, { error: why }, JSON.stringify(lists))
    }
    t.equal(
      await api
        .db('status_pages')
        .count({ n: '*' })
        .first()
        .then((r) => Number(r?.n)),
      0,
      'a refused page is not stored'
    )

    const created = await call('POST', '/api/v1/pages', {
      slug: 'infra',
      title: 'Infra',
      sites: [{ domain: 'shop.example.com' }],
      monitors: [{ slug: 'orders-db', name: 'Database' }, { slug: 'mail-mx' }],
      heartbeats: [{ slug: 'nightly-backup' }]
    })
    t.equal(created.status, 201)
    t.same(created.body.monitors, [
      { slug: 'orders-db', name: 'Database' },
      { slug: 'mail-mx', name: null }
    ])
    t.same([created.body.sites.length, created.body.heartbeats.length], [1, 1], 'each list as given')
    const plain = await call('POST', '/api/v1/pages', { slug: 'plain', title: 'Plain', sites: [] })
    t.same([plain.status, plain.body.monitors], [201, []], 'a body without monitors makes a page as before')

    await api.feed('shop.example.com', 'up', NOW - 2 * MIN)
    await api.feed('monitor:orders-db', 'up', NOW - 2 * MIN)
    const view = await publicly('/status/infra.json')
    t.equal(view.status, 200)
    t.match(view.body.monitors, [
      { anchor: /^m\d+$/, name: 'Database', kind: 'tcp', status: 'up', uptime_percent: 100 },
      { anchor: /^m\d+$/, name: 'Mail', kind: 'dns', status: 'pending', uptime_percent: null }
    ])
    t.same(Object.keys(view.body.monitors[0]).sort(), ['anchor', 'days', 'kind', 'name', 'partial', 'slow', 'status', 'uptime_percent'])
    t.equal(view.body.monitors[0].days.length, 90)
    t.equal(view.body.state, 'degraded', 'a monitor never checked is pending: degraded, as a site never checked')
    noSecrets(view.payload, 'the JSON')
    const html = await publicly('/status/infra')
    t.match(
      html.payload,
      /<h3>Database <span class="kind">TCP check<\/span><\/h3><span class="status status-up" id="state-m\d+">up<\/span>/
    )
    t.match(html.payload, /<h3>Mail <span class="kind">DNS check<\/span><\/h3><span class="status status-pending"/)
    noSecrets(html.payload, 'the HTML')

    // The database refuses connections at every location: its outage reaches the page's stream by the page's name for it.
    const client = await SseClient.connect(`${base}/status/infra/events`)
    t.teardown(() => {
      client.close()
    })
    t.equal(client.status, 200)
    const locations = [refused('A'), refused('B'), refused('C')]
    await api.feed('monitor:orders-db', 'down', NOW - MIN, { locations })
    await client.waitFor((c) => c.events.length >= 1, 10_000, "the database's outage")
    t.same(
      client.events.map((e) => [e.type, e.data]),
      [['outage.opened', { name: 'Database', domain: null, at: client.events[0]?.data.at }]],
      'named as the page names it, with no domain'
    )
    noSecrets(JSON.stringify(client.blocks), 'the stream')
    t.match(
      await listPagesOfSites({
        db: api.db,
        siteIds: [
          await api
            .db('sites')
            .where({ domain: 'monitor:mail-mx' })
            .first('id')
            .then((r) => Number(r.id))
        ]
      }),
      [{ slug: 'infra', name: 'Mail', domain: null }],
      'a monitor the page names by its own name goes without a domain too'
    )

    const down = await publicly('/status/infra.json')
    t.match(down.body.monitors, [{ name: 'Database', status: 'down' }, { name: 'Mail' }])
    t.equal(down.body.state, 'partial outage', 'a down monitor counts as a down site')
    t.match(down.body.incidents, [{ domain: null, name: 'Database', ended_at: null }])
    noSecrets(down.payload, 'the JSON of a down monitor')
    const downHtml = await publicly('/status/infra')
    t.match(downHtml.payload, /id="state-m\d+">down</)
    noSecrets(downHtml.payload, 'the HTML of a down monitor')
    t.notMatch(downHtml.payload, 'ECONNREFUSED', 'nor its locations\u2019 errors')
    t.notMatch(down.payload, 'ECONNREFUSED', 'nor its locations\u2019 errors in the JSON')
    const feed = await publicly('/status/infra/feed.atom')
    t.match(feed.payload, 'Database')
    noSecrets(feed.payload, 'the feed')

    const badge = await call('GET', '/api/badge/page/infra/endpoint', undefined, null)
    t.match(JSON.parse(badge.payload), { message: 'partial outage' }, "the page badge counts the page's monitors")
    const uptime = await call('GET', '/api/badge/page/infra/uptime/endpoint', undefined, null)
    t.match(JSON.parse(uptime.payload), { message: /^100/ }, "the page's uptime figure is its web sites' (docs/decisions.md)")

    // Writing one list keeps the others; a removed monitor leaves its pages.
    const sitesOnly = await call('PATCH', '/api/v1/pages/infra', { title: 'Our infrastructure', sites: [] })
    t.same(
      sitesOnly.body.monitors.map((m: Json) => m.slug),
      ['orders-db', 'mail-mx'],
      'a change of sites keeps the monitors'
    )
    const heartbeatsOnly = await call('PATCH', '/api/v1/pages/infra', { heartbeats: [] })
    t.equal(heartbeatsOnly.body.monitors.length, 2, 'a change of heartbeats keeps them too')
    const reordered = await call('PATCH', '/api/v1/pages/infra', {
      monitors: [{ slug: 'mail-mx' }, { slug: 'orders-db' }],
      heartbeats: [{ slug: 'nightly-backup' }]
    })
    t.same(
      [reordered.body.monitors.map((m: Json) => m.slug), reordered.body.heartbeats.map((h: Json) => h.slug)],
      [['mail-mx', 'orders-db'], ['nightly-backup']],
      'in the order given, the heartbeats beside them'
    )
    t.equal((await call('DELETE', '/api/v1/monitors/orders-db')).status, 204)
    t.same(
      (await call('GET', '/api/v1/pages/infra')).body.monitors.map((m: Json) => m.slug),
      ['mail-mx'],
      'a removed monitor leaves its pages'
    )
    const after = await publicly('/status/infra.json')
    t.same(
      after.body.monitors.map((m: Json) => m.name),
      ['Mail'],
      'and its public page'
    )
    t.equal(after.body.state, 'degraded', 'the page no longer counts it')
  })
}
