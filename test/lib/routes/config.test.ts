import t from 'tap'
import { claimConfigLock } from '../../../lib/store/config-state.js'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer } from '../../helpers/server.js'
import { trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-20T12:00:00.000Z')
const FILE = `# yaml-language-server: $schema=https://status.example.net/api/v1/config.schema.json
sites:
  - domain: shop.example.com
    name: Shop
    interval_s: 60
    expect: {status: [200]}
  - domain: new.example.com
pages:
  - slug: main
    title: Main
    sites: [{domain: new.example.com}]
`

for (const engine of engines()) {
  t.test(`plan and apply over the API, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: [{ domain: 'shop.example.com', name: 'Shop' }], start: T0 })
    const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const reader = await api.issueKey({ limit: 10_000, scopes: 'read' })
    const post = async (url: string, key: string, payload: string, type = 'application/yaml') => {
      const res = await api.server.inject({ method: 'POST', url, headers: { ...bearer(key), 'content-type': type }, payload })
      matchesOpenApi(t, res, `POST ${url} ${res.statusCode}`)
      return { status: res.statusCode, body: JSON.parse(res.payload) as Record<string, unknown> }
    }

    t.equal((await post('/api/v1/config/plan', reader, FILE)).status, 403, 'manage is needed')
    const plan = await post('/api/v1/config/plan', manager, FILE)
    t.equal(plan.status, 200)
    t.same(plan.body.summary, { create: 2, change: 1, remove: 0 })
    t.match(plan.body.text, /~ site shop\.example\.com\n {4}interval_s: \(none\) -> 60/)

    const bad = await post('/api/v1/config/plan', manager, 'sites:\n  - domain: a.example.com\n    interval_s: fast\n')
    t.equal(bad.status, 400)
    t.match(bad.body.error, /^request body:3: sites\[0\]\.interval_s: /)

    const applied = await post(
      '/api/v1/config/apply',
      manager,
      JSON.stringify({
        sites: [{ domain: 'shop.example.com', name: 'Shop', interval_s: 60, expect: { status: [200] } }, { domain: 'new.example.com' }],
        pages: [{ slug: 'main', title: 'Main', sites: [{ domain: 'new.example.com' }] }]
      }),
      'application/json'
    )
    t.equal(applied.status, 200)
    t.equal(applied.body.changed, true)
    const listed = await api.server.inject({ method: 'GET', url: '/api/v1/sites', headers: bearer(reader) })
    const sites = (JSON.parse(listed.payload) as { sites: Array<{ domain: string; settings: unknown }> }).sites
    t.same(
      sites.map((s) => s.domain),
      ['new.example.com', 'shop.example.com'],
      'the new site is tracked at once, without a restart'
    )
    t.same(sites.find((s) => s.domain === 'shop.example.com')?.settings, { interval_s: 60, expect: { status: [200] } })

    const again = await post('/api/v1/config/apply', manager, FILE)
    t.equal(again.body.changed, false)
    t.match(again.body.text, /^No changes/)

    await claimConfigLock({ db: api.db, holder: 'someone else', now: new Date(), until: new Date(Date.now() + 60_000) })
    const locked = await post('/api/v1/config/apply', manager, FILE.replace('interval_s: 60', 'interval_s: 120'))
    t.equal(locked.status, 409, 'another apply in progress: the loser is told')
    t.match(locked.body.error, /another apply is in progress/)

    await api.db('config_lock').update({ holder: null, locked_until: null })
    const monitors = 'monitors:\n  - { slug: db, name: Database, target: db.example.com, check: { type: tcp, port: 5432 } }\n'
    const withMonitor = await post('/api/v1/config/apply', manager, FILE + monitors)
    t.match(withMonitor.body.text, /^\+ monitor db\n {4}name: "Database"\n/, 'a monitor is planned and applied as a resource of its own')
    const monitor = await api.server.inject({ method: 'GET', url: '/api/v1/monitors/db', headers: bearer(reader) })
    matchesOpenApi(t, monitor, 'GET /api/v1/monitors/db 200')
    t.match(JSON.parse(monitor.payload), { slug: 'db', kind: 'tcp', target: 'db.example.com', check: { type: 'tcp', port: 5432 } })
    t.match((await post('/api/v1/config/plan', manager, FILE + monitors)).body.text, /^No changes/)

    const schema = await api.server.inject({ method: 'GET', url: '/api/v1/config.schema.json' })
    t.equal(schema.statusCode, 200, 'the schema is open')
    t.match(JSON.parse(schema.payload), {
      $id: 'https://status.example.net/api/v1/config.schema.json',
      properties: { sites: { type: 'array' }, monitors: { type: 'array' } }
    })
  })
}

t.test('heartbeats and webhooks over the API; a secret is refused there', async (t) => {
  const api = await trackedServer(t, { engine: 'sqlite', sites: [], start: T0 })
  const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
  const post = async (url: string, payload: string) => {
    const res = await api.server.inject({
      method: 'POST',
      url,
      headers: { ...bearer(manager), 'content-type': 'application/yaml' },
      payload
    })
    matchesOpenApi(t, res, `POST ${url} ${res.statusCode}`)
    return { status: res.statusCode, body: JSON.parse(res.payload) as Record<string, unknown> }
  }
  const file =
    'heartbeats:\n  - {slug: nightly, name: Nightly, schedule: {every_s: 86400}, grace_s: 600}\nwebhooks:\n  - {url: "https://hooks.example.com/in", events: [outage.opened]}\n'
  const applied = await post('/api/v1/config/apply', file)
  t.equal(applied.status, 200)
  t.same(applied.body.summary, { create: 2, change: 0, remove: 0 })
  const hooks = await api.server.inject({ method: 'GET', url: '/api/v1/webhooks', headers: bearer(manager) })
  t.match(hooks.payload, 'https://hooks.example.com/in', 'the webhook exists')
  const beat = await api.server.inject({ method: 'GET', url: '/api/v1/heartbeats/nightly', headers: bearer(manager) })
  t.equal(beat.statusCode, 200, 'and the heartbeat')
  t.equal(((await post('/api/v1/config/apply', file)).body as { changed: boolean }).changed, false, 'a second apply changes nothing')
  const secret = await post('/api/v1/config/plan', file.replace('events: [outage.opened]', 'secret: "${HOOK_SECRET}"'))
  t.equal(secret.status, 400)
  t.match(secret.body.error, /webhooks\[0\]\.secret: the environment variable HOOK_SECRET is not set/)
})
