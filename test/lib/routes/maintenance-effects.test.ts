import t from 'tap'
import { addMaintenanceWindow } from '../../../lib/monitoring/maintenance-windows.js'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import { engines } from '../../helpers/db.js'
import { parseExposition, samplesOf } from '../../helpers/exposition.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer } from '../../helpers/server.js'
import { MIN, trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-20T12:00:00.000Z')
const iso = (ms: number): string => new Date(ms).toISOString()

for (const engine of engines()) {
  t.test(`during a window the status, list, badge, metrics, pages, uptime and SLA say so, on ${engine}`, async (t) => {
    const api = await trackedServer(t, {
      engine,
      sites: [
        { domain: 'shop.example.com', name: 'Shop' },
        { domain: 'blog.example.com', name: 'Blog' }
      ],
      start: T0
    })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const get = async (url: string) => {
      const res = await api.server.inject({ url, headers: bearer(key) })
      if (url.startsWith('/api/')) matchesOpenApi(t, res, `GET ${url} at ${iso(api.clock.now)}`)
      return res
    }
    const status = async (domain: string) => JSON.parse((await get(`/api/v1/status/${domain}`)).payload)
    const badge = async (domain: string) => JSON.parse((await get(`/api/badge/${domain}/endpoint`)).payload)
    const maintenanceGauge = async () =>
      samplesOf(parseExposition((await get('/metrics')).payload), 'site_status_maintenance').map((s) => [s.labels.domain, s.value])

    const added = await api.server.inject({
      method: 'POST',
      url: '/api/v1/sites/shop.example.com/maintenance',
      headers: bearer(key),
      payload: { from: iso(T0 + 10 * MIN), to: iso(T0 + 40 * MIN), reason: 'upgrade' }
    })
    t.equal(added.statusCode, 201)
    for (const [domain, state] of [
      ['shop.example.com', 'up'],
      ['blog.example.com', 'up']
    ] as const) {
      for (let m = 0; m < 10; m++) await api.feed(domain, state, T0 + m * MIN)
    }
    api.clock.now = T0 + 9 * MIN
    t.equal((await status('shop.example.com')).maintenance, undefined, 'before the window: no maintenance in the record')
    t.match(await badge('shop.example.com'), { message: 'up', color: 'green' })

    // In the window the site goes down: no outage, and everything says maintenance.
    for (let m = 10; m < 15; m++) {
      await api.feed('shop.example.com', 'down', T0 + m * MIN)
      await api.feed('blog.example.com', 'up', T0 + m * MIN)
    }
    api.clock.now = T0 + 14 * MIN + 30_000
    const during = await status('shop.example.com')
    t.match(during, { status: 'down', last_outage: null, maintenance: { until: iso(T0 + 40 * MIN), reason: 'upgrade' } })
    t.same(during.uptime_percent, { day: 100, week: 100, month: 100 }, 'down only in maintenance: uptime stays 100')
    t.equal((await status('blog.example.com')).maintenance, undefined, 'a site without a window has none')
    const listed = JSON.parse((await get('/api/v1/sites')).payload)
    t.same(
      listed.sites.map((s: { domain: string; maintenance?: unknown }) => [s.domain, s.maintenance ?? null]),
      [
        ['blog.example.com', null],
        ['shop.example.com', { until: iso(T0 + 40 * MIN), reason: 'upgrade' }]
      ],
      'the sites list carries it'
    )
    t.same(await badge('shop.example.com'), { schemaVersion: 1, label: 'Shop', message: 'maintenance', color: 'blue', cacheSeconds: 300 })
    const svg = (await get('/api/badge/shop.example.com')).payload
    t.match(svg, />maintenance</, 'the SVG badge says maintenance')
    t.match(svg, /#007ec6/, 'in blue')
    t.same(
      (await maintenanceGauge()).sort(),
      [
        ['blog.example.com', 0],
        ['shop.example.com', 1]
      ],
      '/metrics: site_status_maintenance'
    )
    t.match((await get('/metrics')).payload, /^# HELP site_status_maintenance .+$/m)
    const page = (await get('/sites/shop.example.com')).payload
    t.match(page, /<p id="maintenance" class="maintenance">In maintenance until <time datetime="[^"]+">[^<]+<\/time>: upgrade\./)
    t.match((await get('/')).payload, /status-maintenance/, 'the site list marks it')

    // The window ends with the site still down: the next check opens an outage.
    for (let m = 40; m <= 50; m++) await api.feed('shop.example.com', 'down', T0 + m * MIN)
    api.clock.now = T0 + 50 * MIN
    const after = await status('shop.example.com')
    t.equal(after.maintenance, undefined, 'after the window: none')
    t.match(after.last_outage, { started_at: iso(T0 + 40 * MIN), ended_at: null })
    t.equal(after.uptime_percent.day, 50, 'monitored 50 min less 30 of maintenance; down 10 of the 20')
    t.match(await badge('shop.example.com'), { message: 'down', color: 'red' })

    const sla = async (from: number, to: number) => {
      const res = await get(`/api/v1/sites/shop.example.com/sla?from=${iso(from)}&to=${iso(to)}`)
      t.equal(res.statusCode, 200)
      return JSON.parse(res.payload)
    }
    t.match(
      await sla(T0 + 10 * MIN, T0 + 40 * MIN),
      { uptime_percent: 100, monitored_seconds: 0, maintenance_seconds: 1800, downtime_seconds: 0, incidents: 0, outages: [] },
      'the window alone: all maintenance, 100%'
    )
    t.match(
      await sla(T0, T0 + 50 * MIN),
      { uptime_percent: 50, monitored_seconds: 1200, maintenance_seconds: 1800, downtime_seconds: 600, incidents: 1 },
      'around it: the maintenance left out, the outage after it counted'
    )
    t.match(await sla(T0 + 45 * MIN, T0 + 50 * MIN), { maintenance_seconds: 0, monitored_seconds: 300 })

    // Another process adds a window: a state reading the same database takes it at its next refresh.
    const elsewhere = new SiteStates({ intervalMs: MIN, publicUrl: 'https://status.example.net' })
    await elsewhere.refresh(api.db, new Date(T0 + 50 * MIN))
    t.equal(elsewhere.statusRecord('blog.example.com', new Date(T0 + 50 * MIN))?.maintenance, undefined)
    await addMaintenanceWindow({
      db: api.db,
      domain: 'blog.example.com',
      window: { weekly: { day: 'fri', time: '13:00', duration_minutes: 60, zone: 'Europe/Paris' }, reason: null },
      now: new Date(T0 + 50 * MIN + 1)
    })
    await elsewhere.refresh(api.db, new Date(T0 + 50 * MIN + 2))
    t.same(
      elsewhere.statusRecord('blog.example.com', new Date(T0 + 50 * MIN + 2))?.maintenance,
      { until: iso(T0 + 60 * MIN), reason: null },
      'the sites version moved with the window: read again (Friday 13:00 Paris is 12:00 UTC)'
    )
    t.same(elsewhere.current('blog.example.com', new Date(T0 + 60 * MIN)), {
      name: 'Blog',
      status: 'unavailable',
      blocked: false,
      partial: false,
      slow: false,
      maintenance: false,
      cause: null
    })
  })
}
