import t from 'tap'
import { BADGE_CACHE_CONTROL } from '../../../lib/badge/renderer.js'
import { sweepDeadlines } from '../../../lib/heartbeats/deadlines.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer, testServer } from '../../helpers/server.js'

const T0 = Date.parse('2026-11-29T03:00:00.000Z')
const S = 1000

for (const engine of engines()) {
  t.test(`heartbeats through the API and their ping URLs, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    let clock = T0
    const now = (): Date => new Date(clock)
    const api = await testServer({ db, now, env: { PUBLIC_URL: 'https://status.example.net' } })
    t.teardown(() => api.server.stop())
    const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const reader = await api.issueKey({ limit: 10_000, scopes: 'read' })
    const call = async (method: string, url: string, key: string | null, payload?: unknown, headers: Record<string, string> = {}) => {
      const res = await api.server.inject({
        method,
        url,
        headers: { ...(key === null ? {} : bearer(key)), ...headers },
        payload: payload as object | undefined
      })
      matchesOpenApi(t, res, `${method} ${url} ${res.statusCode}`)
      const type = String(res.headers['content-type'] ?? '')
      return { status: res.statusCode, body: type.startsWith('application/json') ? JSON.parse(res.payload) : res.payload, res }
    }

    const created = await call('POST', '/api/v1/heartbeats', manager, { name: 'Nightly Backup', schedule: { every_s: 60 }, grace_s: 30 })
    t.equal(created.status, 201)
    t.match(created.body, { slug: 'nightly-backup', state: 'new', schedule: { every_s: 60 }, grace_s: 30, max_runtime_s: null })
    t.match(created.body.ping_url, /^https:\/\/status\.example\.net\/ping\/[A-Za-z0-9_-]{32}$/, 'a ping URL with an unguessable token')
    const ping = new URL(created.body.ping_url as string).pathname
    t.equal(
      (await call('POST', '/api/v1/heartbeats', manager, { name: 'x', slug: 'nightly-backup', schedule: { every_s: 60 }, grace_s: 30 }))
        .status,
      409
    )
    for (const bad of [
      { name: 'x', schedule: { every_s: 29 }, grace_s: 30 },
      { name: 'x', schedule: { every_s: 60 }, grace_s: 4 },
      { name: 'x', schedule: { cron: '0 3 * * *' }, grace_s: 30 },
      { name: 'x', schedule: { every_s: 60, cron: '0 3 * * *', zone: 'UTC' }, grace_s: 30 },
      { name: '!!!', schedule: { every_s: 60 }, grace_s: 30 },
      { name: 'x', slug: 'Bad Slug', schedule: { every_s: 60 }, grace_s: 30 }
    ]) {
      const res = await call('POST', '/api/v1/heartbeats', manager, bad)
      t.equal(res.status, 400, JSON.stringify(bad))
      t.type(res.body.error, 'string')
    }
    t.equal(
      (await call('POST', '/api/v1/heartbeats', reader, { name: 'x', schedule: { every_s: 60 }, grace_s: 30 })).status,
      403,
      'adding needs manage'
    )

    const got = await call('GET', ping, null)
    t.same([got.status, got.body], [200, 'OK'], 'a ping needs no key and answers OK as text')
    t.match(String(got.res.headers['content-type']), /^text\/plain/)
    t.equal((await call('HEAD', ping, null)).status, 200, 'HEAD pings too')
    t.equal((await call('GET', '/ping/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', null)).status, 404, 'an unknown token is 404')
    t.match((await call('GET', '/ping/short', null)).body, { error: String }, 'and so is one of another shape, as JSON')
    t.equal((await call('GET', `${ping}/256`, null)).status, 400)
    t.equal((await call('GET', `${ping}?rid=${'x'.repeat(65)}`, null)).status, 400)
    t.match((await call('GET', `${ping}?rid=a&run=2`, null)).body, { error: /takes only "rid"/ }, 'a query beyond rid is 400, saying so')
    t.equal(
      (await call('POST', ping, null, 'x'.repeat(10 * 1024 + 1), { 'content-type': 'text/plain' })).status,
      413,
      'a message over 10 KiB'
    )

    clock += 5 * S
    t.equal((await call('POST', `${ping}/start?rid=run-1`, null, '', { 'content-type': 'text/plain' })).status, 200)
    clock += 7 * S
    t.equal((await call('POST', `${ping}/0?rid=run-1`, null, 'backup done: 3 GB', { 'content-type': 'text/plain' })).body, 'OK')
    const record = await call('GET', '/api/v1/heartbeats/nightly-backup', reader)
    t.match(record.body, {
      state: 'up',
      last_ping_kind: 'success',
      last_run_seconds: 7,
      last_message: 'backup done: 3 GB',
      last_ping_at: new Date(clock).toISOString(),
      next_deadline_at: new Date(clock + 60 * S).toISOString(),
      outage: null
    })
    t.notOk('ping_url' in record.body, 'the token is not shown again')

    clock += 61 * S
    await sweepDeadlines({ db, now })
    t.equal((await call('GET', '/api/v1/heartbeats/nightly-backup', reader)).body.state, 'late')
    clock += 30 * S
    await sweepDeadlines({ db, now })
    const down = await call('GET', '/api/v1/heartbeats/nightly-backup', reader)
    t.match(down.body, { state: 'down', outage: { started_at: new Date(clock - S).toISOString() } })
    t.equal((await call('GET', `${ping}/fail`, null)).status, 200)

    const rotated = await call('POST', '/api/v1/heartbeats/nightly-backup/token', manager)
    t.equal(rotated.status, 200)
    t.equal((await call('GET', ping, null)).status, 404, 'the old ping URL is refused after rotation')
    const fresh = new URL(rotated.body.ping_url as string).pathname
    t.equal((await call('GET', fresh, null)).status, 200)
    t.match(
      (await call('GET', '/api/v1/heartbeats/nightly-backup', reader)).body,
      { state: 'up', outage: null },
      'the next success closes it'
    )

    const paused = await call('PATCH', '/api/v1/heartbeats/nightly-backup', manager, { paused: true, grace_s: 60 })
    t.match(paused.body, { state: 'paused', paused: true, grace_s: 60, next_deadline_at: null })
    clock += 4 * S
    const metrics = await call('GET', '/metrics', reader)
    t.match(metrics.body, 'site_status_heartbeat_state{slug="nightly-backup",state="paused"} 1\n', '/metrics: the state')
    t.match(metrics.body, 'site_status_heartbeat_last_ping_age_seconds{slug="nightly-backup"} 4\n', 'and the last ping age')

    for (let i = 0; i < 3; i++)
      await call('POST', '/api/v1/heartbeats', manager, { name: `job ${i}`, schedule: { every_s: 300 }, grace_s: 60 })
    const first = await call('GET', '/api/v1/heartbeats?limit=2', reader)
    t.same(
      first.body.heartbeats.map((h: { slug: string }) => h.slug),
      ['job-0', 'job-1']
    )
    const second = await call('GET', `/api/v1/heartbeats?limit=2&cursor=${first.body.next_cursor}`, reader)
    t.same(
      second.body.heartbeats.map((h: { slug: string }) => h.slug),
      ['job-2', 'nightly-backup']
    )
    t.equal(second.body.next_cursor, null)

    t.equal((await call('DELETE', '/api/v1/heartbeats/job-0', manager)).status, 204)
    t.equal((await call('GET', '/api/v1/heartbeats/job-0', reader)).status, 404)
  })
}

t.test('cron schedules in a zone: added, read, changed, refused with the rule that computes them', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  let clock = Date.parse('2026-11-29T02:00:05.000Z')
  const now = (): Date => new Date(clock)
  const api = await testServer({ db, now })
  t.teardown(() => api.server.stop())
  const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
  const call = async (method: string, url: string, payload?: unknown) => {
    const res = await api.server.inject({ method, url, headers: bearer(manager), payload: payload as object | undefined })
    matchesOpenApi(t, res, `${method} ${url} ${res.statusCode}`)
    return { status: res.statusCode, body: JSON.parse(res.payload || 'null') }
  }
  const nightly = { cron: '0 3 * * *', zone: 'Europe/Berlin' }
  const created = await call('POST', '/api/v1/heartbeats', { name: 'Billing run', schedule: nightly, grace_s: 1800 })
  t.equal(created.status, 201)
  t.same(created.body.schedule, nightly)
  await api.server.inject({ method: 'POST', url: new URL(created.body.ping_url as string).pathname })
  t.match((await call('GET', '/api/v1/heartbeats/billing-run')).body, {
    schedule: nightly,
    state: 'up',
    next_deadline_at: '2026-11-30T02:00:00.000Z'
  })
  const changed = await call('PATCH', '/api/v1/heartbeats/billing-run', { schedule: { cron: '0 6 * * *', zone: 'Asia/Tokyo' } })
  t.match(changed.body, { schedule: { cron: '0 6 * * *', zone: 'Asia/Tokyo' }, next_deadline_at: '2026-11-29T21:00:00.000Z' })
  t.match((await call('PATCH', '/api/v1/heartbeats/billing-run', { schedule: { every_s: 3600 } })).body, {
    schedule: { every_s: 3600 },
    next_deadline_at: new Date(clock + 3600 * 1000).toISOString()
  })
  t.same((await call('GET', '/api/v1/heartbeats')).body.heartbeats[0].schedule, { every_s: 3600 })
  for (const [schedule, field] of [
    [{ cron: 'not a cron', zone: 'UTC' }, /"schedule\.cron" must be a cron expression/],
    [{ cron: '0 3 * * *', zone: 'Mars/Olympus' }, /"schedule\.zone" must be an IANA time zone/],
    [{ cron: '* * * * * *', zone: 'UTC' }, /every 30 s/],
    [{ cron: '0 0 30 2 *', zone: 'UTC' }, /never fires/],
    [{ cron: `0 3 * * *${' '.repeat(100)}`, zone: 'UTC' }, /1 to 100 characters/],
    [{ cron: '0 3 * * *', zone: 'UTC', every_s: 60 }, /"schedule" must be/],
    [{ zone: 'UTC' }, /"schedule" must be/]
  ] as const) {
    const res = await call('PATCH', '/api/v1/heartbeats/billing-run', { schedule })
    t.equal(res.status, 400, JSON.stringify(schedule))
    t.match(res.body.error, field)
  }
  clock += 1000
  t.same((await call('GET', '/api/v1/heartbeats/billing-run')).body.schedule, { every_s: 3600 }, 'a refused change changes nothing')
})

t.test('pings are limited per token and per address; a flooded token costs the others nothing', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const api = await testServer({ db })
  t.teardown(() => api.server.stop())
  const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
  const add = async (name: string): Promise<string> => {
    const res = await api.server.inject({
      method: 'POST',
      url: '/api/v1/heartbeats',
      headers: bearer(manager),
      payload: { name, schedule: { every_s: 60 }, grace_s: 30 }
    })
    return new URL(JSON.parse(res.payload).ping_url as string).pathname
  }
  const flooded = await add('flooded')
  const quiet = await add('quiet')
  const codes: number[] = []
  for (let i = 0; i < 125; i++) codes.push((await api.server.inject({ method: 'GET', url: flooded })).statusCode)
  t.equal(codes.filter((c) => c === 200).length, 120, '120 a minute to one token')
  t.equal(codes.filter((c) => c === 429).length, 5)
  const refused = await api.server.inject({ method: 'GET', url: flooded })
  t.ok(Number(refused.headers['retry-after']) >= 1, 'with Retry-After')
  t.equal((await api.server.inject({ method: 'GET', url: quiet })).statusCode, 200, 'another token is still answered')
  t.equal(Number((await db('heartbeat_pings').count({ n: '*' }))[0]?.n), 121, 'refused pings reach no table')
})

t.test("a heartbeat's badges, state and uptime, SVG and shields.io JSON, cached as site badges are", async (t) => {
  const { db } = await migratedDb('sqlite', t)
  let clock = Date.now()
  const api = await testServer({ db, now: () => new Date(clock) })
  t.teardown(() => api.server.stop())
  const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
  const created = await api.server.inject({
    method: 'POST',
    url: '/api/v1/heartbeats',
    headers: bearer(manager),
    payload: { name: 'Billing run', schedule: { every_s: 60 }, grace_s: 30 }
  })
  const ping = new URL(JSON.parse(created.payload).ping_url as string).pathname
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await api.server.inject({ method: 'GET', url, headers })
    matchesOpenApi(t, res)
    return res
  }
  const fresh = await get('/api/badge/heartbeat/billing-run')
  t.equal(fresh.statusCode, 200)
  t.match(fresh.payload, /Billing run/)
  t.match(fresh.payload, />new</)
  await api.server.inject({ method: 'GET', url: ping })
  const up = await get('/api/badge/heartbeat/billing-run')
  t.match(up.payload, />up</, 'the state after a ping')
  t.equal(up.headers['cache-control'], BADGE_CACHE_CONTROL, "the site badges' Cache-Control")
  t.equal(up.headers['access-control-allow-origin'], '*')
  t.ok(up.headers.etag, 'an ETag')
  t.equal(
    (await get('/api/badge/heartbeat/billing-run', { 'if-none-match': String(up.headers.etag) })).statusCode,
    304,
    'and 304 on a match'
  )
  const endpoint = await get('/api/badge/heartbeat/billing-run/endpoint')
  t.match(JSON.parse(endpoint.payload), { schemaVersion: 1, label: 'Billing run', message: 'up', color: 'green' })
  t.equal((await get('/api/badge/heartbeat/nobody')).statusCode, 404)
  t.equal((await get('/api/badge/heartbeat/Bad_Slug')).statusCode, 400)

  clock += 60_000
  const uptime = await get('/api/badge/heartbeat/billing-run/uptime?window=7d')
  t.equal(uptime.statusCode, 200)
  t.match(uptime.payload, /uptime 7d/)
  t.match(uptime.payload, /100 %/, 'pinged a minute ago, never down: 100 % of the minute it covers')
  t.equal(uptime.headers['cache-control'], BADGE_CACHE_CONTROL)
  const uptimeJson = JSON.parse((await get('/api/badge/heartbeat/billing-run/uptime/endpoint')).payload)
  t.match(uptimeJson, { schemaVersion: 1, label: 'uptime 30d', message: /^100 %/, color: 'green' })
  const missing = await get('/api/badge/heartbeat/nobody/uptime')
  t.equal(missing.statusCode, 404)
  t.same(JSON.parse(missing.payload), { error: 'no heartbeat has this slug' })
  t.equal(missing.headers['cache-control'], 'no-store', 'no proxy keeps an error')
  t.equal((await get('/api/badge/heartbeat/Bad_Slug/uptime')).statusCode, 400)
  t.equal((await get('/api/badge/heartbeat/billing-run/uptime?window=1y')).statusCode, 400)
  t.equal((await get('/api/badge/heartbeat/billing-run/response-time')).statusCode, 404, 'a heartbeat has no response time')

  clock += 1000
  let queries = 0
  db.on('query', () => queries++)
  for (let i = 0; i < 50; i++) {
    await api.server.inject({ method: 'GET', url: '/api/badge/heartbeat/billing-run' })
    await api.server.inject({ method: 'GET', url: '/api/badge/heartbeat/billing-run/uptime' })
  }
  t.ok(queries > 0 && queries <= 3, `100 badge requests within one second read the heartbeat once (${queries} queries)`)
  clock += 1000
  const before = queries
  await api.server.inject({ method: 'GET', url: '/api/badge/heartbeat/billing-run' })
  t.ok(queries > before, 'and again a second later')

  await api.server.inject({ method: 'GET', url: `${ping}/fail` })
  t.match((await get('/api/badge/heartbeat/billing-run')).payload, />down</, 'a ping here shows at once, not after the second')
})
