import t from 'tap'
import { sweepDeadlines } from '../../../lib/heartbeats/deadlines.js'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import { RenderCache } from '../../../lib/pages/render-cache.js'
import { forgetStatusPage } from '../../../lib/pages/status-page.js'
import { listPagesOfSites } from '../../../lib/store/status-pages.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer, testServer } from '../../helpers/server.js'

const T0 = Date.parse('2026-11-29T03:00:00.000Z')
const S = 1000
type Json = Record<string, any>

for (const engine of engines()) {
  t.test(`a status page lists heartbeats beside its sites, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    let clock = T0
    const now = (): Date => new Date(clock)
    const renders = new RenderCache()
    const publicUrl = 'https://status.example.net'
    const states = new SiteStates({ intervalMs: 60_000, publicUrl })
    const api = await testServer({ db, now, states, statusPageRenders: renders, env: { PUBLIC_URL: publicUrl } })
    t.teardown(() => api.server.stop())
    const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const call = async (method: string, url: string, payload?: unknown, key: string | null = manager) => {
      const res = await api.server.inject({ method, url, headers: key === null ? {} : bearer(key), payload: payload as object | undefined })
      matchesOpenApi(t, res, `${method} ${url} ${res.statusCode}`)
      const json = String(res.headers['content-type'] ?? '').includes('json')
      return { status: res.statusCode, body: (json ? JSON.parse(res.payload) : null) as Json, payload: res.payload }
    }
    /** The public answers, rendered afresh (a render is otherwise kept for a second). */
    const publicly = async (url: string) => {
      forgetStatusPage(renders, 'jobs')
      return call('GET', url, undefined, null)
    }

    const backup = await call('POST', '/api/v1/heartbeats', { name: 'Nightly backup', schedule: { every_s: 60 }, grace_s: 30 })
    await call('POST', '/api/v1/heartbeats', { name: 'Billing run', schedule: { cron: '0 4 * * *', zone: 'Europe/Berlin' }, grace_s: 600 })
    const pingPath = new URL(backup.body.ping_url as string).pathname
    const token = pingPath.split('/').at(-1) as string
    await api.server.inject({
      method: 'POST',
      url: pingPath,
      payload: 'secret-ish output: 3 GB',
      headers: { 'content-type': 'text/plain' }
    })

    const created = await call('POST', '/api/v1/pages', {
      slug: 'jobs',
      title: 'Jobs',
      sites: [],
      heartbeats: [{ slug: 'nightly-backup', name: 'Backups' }, { slug: 'billing-run' }]
    })
    t.equal(created.status, 201)
    t.same(created.body.heartbeats, [
      { slug: 'nightly-backup', name: 'Backups' },
      { slug: 'billing-run', name: null }
    ])
    t.same(created.body.sites, [])
    const siteIds = await db('heartbeats').orderBy('slug').pluck('site_id')
    t.same(
      (await listPagesOfSites({ db, siteIds }))
        .map(({ slug, name, domain }) => ({ slug, name, domain }))
        .sort((a, b) => (a.name < b.name ? -1 : 1)),
      [
        { slug: 'jobs', name: 'Backups', domain: null },
        { slug: 'jobs', name: 'Billing run', domain: null }
      ],
      'the page streams name its heartbeats as it does, never by the domain that holds their slug'
    )
    const plain = await call('POST', '/api/v1/pages', { slug: 'plain', title: 'Plain', sites: [] })
    t.same([plain.status, plain.body.heartbeats], [201, []], 'a body without heartbeats makes a page as before')

    for (const [body, why] of [
      [{ heartbeats: [{ slug: 'nobody' }] }, /no heartbeat has the slug "nobody"/],
      [{ heartbeats: [{ slug: 'nightly-backup' }, { slug: 'nightly-backup' }] }, /listed twice/],
      [{ heartbeats: ['nightly-backup'] }, /heartbeat 1 must be an object/],
      [{ heartbeats: [{ slug: 'Bad Slug' }] }, /heartbeat 1: "slug"/]
    ] as const) {
      const res = await call('PATCH', '/api/v1/pages/jobs', body)
      t.equal(res.status, 400, JSON.stringify(body))
      t.match(res.body.error, why)
    }

    const view = await publicly('/status/jobs.json')
    t.equal(view.status, 200)
    t.same(view.body.sites, [])
    t.match(view.body.heartbeats, [
      { name: 'Backups', state: 'up', uptime_percent: 100 },
      { name: 'Billing run', state: 'new', uptime_percent: null }
    ])
    t.equal(view.body.heartbeats[0].days.length, 90)
    t.equal(view.body.state, 'degraded', 'a heartbeat never pinged is pending: degraded, as a site never checked')
    for (const leak of [token, 'secret-ish', 'nightly-backup', 'billing-run', '/ping/']) {
      t.notMatch(view.payload, leak, `the JSON holds no ${leak}`)
      t.notMatch((await publicly('/status/jobs')).payload, leak, `nor the HTML`)
    }
    t.match((await publicly('/status/jobs')).payload, /<h3>Backups<\/h3><span class="status status-up" id="state-h\d+">up<\/span>/)

    // The billing run leaves; the backup goes late, then down.
    t.same((await call('PATCH', '/api/v1/pages/jobs', { heartbeats: [{ slug: 'nightly-backup', name: 'Backups' }] })).body.heartbeats, [
      { slug: 'nightly-backup', name: 'Backups' }
    ])
    t.equal((await publicly('/status/jobs.json')).body.state, 'operational')
    clock = T0 + 61 * S
    await sweepDeadlines({ db, now })
    t.match(await publicly('/status/jobs.json'), { body: { state: 'degraded', heartbeats: [{ state: 'late' }] } }, 'late is degraded')
    t.match((await publicly('/status/jobs')).payload, /class="status status-unconfirmed" id="state-h\d+">late</)
    clock = T0 + 91 * S
    await sweepDeadlines({ db, now })
    const down = await publicly('/status/jobs.json')
    t.match(down.body, { state: 'major outage', heartbeats: [{ state: 'down' }] })
    t.match(down.body.incidents, [{ domain: null, name: 'Backups', started_at: new Date(T0 + 90 * S).toISOString(), ended_at: null }])
    const badge = await call('GET', '/api/badge/page/jobs/endpoint', undefined, null)
    t.match(JSON.parse(badge.payload), { message: 'major outage' }, "the page badge counts the page's heartbeats")

    // Changing the page's sites keeps its heartbeats; removing the heartbeat takes it off.
    await call('POST', '/api/v1/heartbeats', { name: 'Queue', schedule: { every_s: 60 }, grace_s: 30 })
    const retitled = await call('PATCH', '/api/v1/pages/jobs', { title: 'Our jobs', sites: [] })
    t.same(retitled.body.heartbeats, [{ slug: 'nightly-backup', name: 'Backups' }], 'a change of sites leaves the heartbeats')
    const both = await call('PATCH', '/api/v1/pages/jobs', { heartbeats: [{ slug: 'queue' }, { slug: 'nightly-backup' }] })
    t.same(
      both.body.heartbeats.map((h: Json) => h.slug),
      ['queue', 'nightly-backup'],
      'in the order given'
    )
    t.equal((await call('DELETE', '/api/v1/heartbeats/queue')).status, 204)
    t.same(
      (await call('GET', '/api/v1/pages/jobs')).body.heartbeats.map((h: Json) => h.slug),
      ['nightly-backup'],
      'a removed heartbeat leaves its pages'
    )
  })
}
