import t from 'tap'
import { startMonitoring } from '../../../lib/monitoring/monitor.js'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import { createLogger } from '../../../lib/logger.js'
import type { CheckSupervisor } from '../../../lib/probing/supervisor.js'
import { toDate } from '../../../lib/store/db.js'
import { addSite } from '../../../lib/monitoring/add-sites.js'
import { runCli } from '../../helpers/cli.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer, testServer } from '../../helpers/server.js'
import { MIN, trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-20T12:00:00.000Z')

for (const engine of engines()) {
  t.test(`POST /api/v1/sites judges domains and names exactly as sites add does, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: [], start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const cli = await migratedDb(engine, t)
    const cases: Array<[string, string | undefined]> = [
      ['example.com', undefined],
      ['Shop.Example.COM', 'Shop'],
      ['HTTPS://Bücher.DE/', undefined],
      ['http://news.example.org', '  News  '],
      [' padded.example.net ', undefined],
      ['HTTPS://Example.COM/path', undefined],
      ['example.com:8080', undefined],
      ['http://user@example.com', undefined],
      ['localhost', undefined],
      ['1.2.3.4', undefined],
      ['[::1]', undefined],
      ['a..b.com', undefined],
      ['bad_name.com', undefined],
      ['ftp://example.com', undefined],
      ['', undefined],
      ['x'.repeat(300) + '.com', undefined],
      ['named.example.com', ''],
      ['named.example.com', 'a\u0007b'],
      ['named.example.com', 'n'.repeat(201)]
    ]
    for (const [domain, name] of cases) {
      const what = `${JSON.stringify(domain)}${name === undefined ? '' : ` named ${JSON.stringify(name)}`}`
      const viaCli = await runCli(['sites', 'add', domain, ...(name === undefined ? [] : ['--name', name])], {
        env: { DATABASE_URL: cli.url }
      })
      const res = await api.server.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: bearer(key),
        payload: name === undefined ? { domain } : { domain, name }
      })
      matchesOpenApi(t, res, what)
      const body = JSON.parse(res.payload)
      if (viaCli.code === 0) {
        t.equal(res.statusCode, 201, `${what}: the CLI adds it, the API answers 201`)
        t.equal(body.domain, viaCli.stdout.trim(), `${what}: to the same normalised domain`)
        const stored = await cli.db('sites').where({ domain: body.domain }).first('name')
        t.equal(body.name, stored.name, `${what}: with the same name`)
        t.equal(res.headers.location, `/api/v1/status/${body.domain}`, `${what}: Location names its status endpoint`)
      } else {
        t.equal(res.statusCode, 400, `${what}: the CLI refuses it, the API answers 400`)
        t.equal(
          body.error,
          viaCli.stderr
            .trim()
            .replace(/^site-status: (--)?/, '')
            .replace(/ \(see site-status --help\)$/, ''),
          `${what}: with the same reason`
        )
      }
    }
    t.same(
      (await api.db('sites').orderBy('domain').pluck('domain')).sort(),
      (await cli.db('sites').orderBy('domain').pluck('domain')).sort(),
      'both track the same sites'
    )
  })

  t.test(`adding, refusing a duplicate, removing and adding again, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: [{ domain: 'kept.example.com', name: 'Kept' }], start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const post = (payload: unknown) =>
      api.server.inject({ method: 'POST', url: '/api/v1/sites', headers: bearer(key), payload: payload as object })
    const del = (domain: string) => api.server.inject({ method: 'DELETE', url: `/api/v1/sites/${domain}`, headers: bearer(key) })
    const status = (domain: string) => api.server.inject({ url: `/api/v1/status/${domain}`, headers: bearer(key) })

    const added = await post({ domain: 'https://New.Example.com/', name: 'New' })
    t.equal(added.statusCode, 201)
    matchesOpenApi(t, added)
    t.same(JSON.parse(added.payload), JSON.parse((await status('new.example.com')).payload), 'the body is the status record')
    t.match(JSON.parse(added.payload), { domain: 'new.example.com', name: 'New', status: 'pending', checked_at: null, cause: null })

    const again = await post({ domain: 'new.example.com', name: 'Renamed' })
    t.equal(again.statusCode, 409, 'an already tracked site is 409')
    matchesOpenApi(t, again)
    t.match(JSON.parse(again.payload), { error: /already tracked/ })
    t.equal((await api.db('sites').where({ domain: 'new.example.com' }).first('name')).name, 'New', 'and is left as it was')

    const removed = await del('NEW.example.com')
    t.equal(removed.statusCode, 204, 'removal is 204')
    t.equal(removed.payload, '', 'without a body')
    matchesOpenApi(t, removed)
    t.equal((await status('new.example.com')).statusCode, 404, 'the status endpoint forgets it at once')
    const gone = await del('new.example.com')
    t.equal(gone.statusCode, 404, 'removing it again is 404')
    t.match(JSON.parse(gone.payload), { error: 'site is not tracked' })
    matchesOpenApi(t, gone)
    t.equal((await del('never.example.com')).statusCode, 404, 'a domain never tracked is 404')
    const bad = await del('localhost')
    t.equal(bad.statusCode, 400, 'text that cannot be a domain is 400')
    matchesOpenApi(t, bad)

    const readded = await post({ domain: 'new.example.com' })
    t.equal(readded.statusCode, 201, 'a removed site added again is 201')
    t.match(
      JSON.parse(readded.payload),
      { domain: 'new.example.com', name: 'New', status: 'pending' },
      'its history and name kept, not checked in its new tracking period'
    )
    t.equal(Number((await api.db('sites').where({ domain: 'new.example.com' }).count({ n: '*' }))[0]?.n), 1, 'in its own row')

    for (const [what, request, code] of [
      ['a body that is not an object', { payload: '[]', headers: { 'content-type': 'application/json' } }, 400],
      ['no domain', { payload: { name: 'x' } }, 400],
      ['a number as domain', { payload: { domain: 42 } }, 400],
      ['an unknown field', { payload: { domain: 'x.example.com', url: 'x' } }, 400],
      ['a null name', { payload: { domain: 'x.example.com', name: null } }, 400],
      ['malformed JSON', { payload: '{"domain":', headers: { 'content-type': 'application/json' } }, 400],
      ['a text body', { payload: 'domain=x.example.com', headers: { 'content-type': 'text/plain' } }, 415],
      ['a body over 64 KiB', { payload: { domain: 'x'.repeat(70_000) } }, 413]
    ] as const) {
      const res = await api.server.inject({
        method: 'POST',
        url: '/api/v1/sites',
        ...request,
        headers: { ...bearer(key), ...('headers' in request ? request.headers : {}) }
      })
      t.equal(res.statusCode, code, `${what}: ${code}`)
      t.match(JSON.parse(res.payload), { error: String }, `${what}: JSON error`)
      t.notMatch(res.payload, /at .*\.ts|select|insert/i, `${what}: no stack or SQL`)
    }
    t.notOk(await api.db('sites').where({ domain: 'x.example.com' }).first(), 'no bad request tracked anything')
  })

  t.test(`removing a site through the API ends its ongoing outage now, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: [{ domain: 'down.example.com', name: 'Down' }], start: T0 })
    const key = await api.issueKey({ scopes: 'manage' })
    for (let i = 0; i < 3; i++) await api.feed('down.example.com', 'down', T0 + i * MIN)
    const open = await api.db('outages').whereNull('ended_at').first()
    t.ok(open, 'the site has an ongoing outage')
    api.clock.now = T0 + 10 * MIN + 123
    const res = await api.server.inject({ method: 'DELETE', url: '/api/v1/sites/down.example.com', headers: bearer(key) })
    t.equal(res.statusCode, 204)
    const closed = await api.db('outages').where({ id: open.id }).first()
    t.equal(toDate(closed.ended_at)?.toISOString(), new Date(T0 + 10 * MIN + 123).toISOString(), 'the outage ended at the removal')
    t.equal(await api.db('outages').whereNull('ended_at').first(), undefined, 'nothing is left open')
  })

  t.test(`GET /api/v1/sites pages every site once, by domain, on ${engine}`, async (t) => {
    const sites = Array.from({ length: 23 }, (_, i) => ({ domain: `s${String(i).padStart(2, '0')}.example.com`, name: `Site ${i}` }))
    const api = await trackedServer(t, { engine, sites, start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    await api.feed('s03.example.com', 'up', T0 - 1000)
    const get = async (query: string) => {
      const res = await api.server.inject({ url: `/api/v1/sites${query}`, headers: bearer(key) })
      matchesOpenApi(t, res)
      return { code: res.statusCode, body: JSON.parse(res.payload) }
    }
    const first = await get('')
    t.equal(first.code, 200)
    t.equal(first.body.sites.length, 23, 'the default page holds them all')
    t.equal(first.body.next_cursor, null, 'and is the last')
    const statusOf3 = await api.server.inject({ url: '/api/v1/status/s03.example.com', headers: bearer(key) })
    t.same(first.body.sites[3], JSON.parse(statusOf3.payload), 'each entry is the status record')

    const seen: string[] = []
    let cursor: string | null = ''
    let pages = 0
    while (cursor !== null && pages < 10) {
      const page = await get(`?limit=5${cursor ? `&cursor=${cursor}` : ''}`)
      t.ok(page.body.sites.length <= 5, 'at most limit per page')
      seen.push(...page.body.sites.map((s: { domain: string }) => s.domain))
      cursor = page.body.next_cursor
      pages++
      // A site added mid-walk before the cursor is not listed; one after it is; nothing shifts.
      if (pages === 2) {
        const added = await api.server.inject({
          method: 'POST',
          url: '/api/v1/sites',
          headers: bearer(key),
          payload: { domain: 's00a.example.com' }
        })
        t.equal(added.statusCode, 201)
        t.equal(
          (await api.server.inject({ method: 'POST', url: '/api/v1/sites', headers: bearer(key), payload: { domain: 's99.example.com' } }))
            .statusCode,
          201
        )
      }
    }
    t.equal(pages, 5, 'five pages of five for 24 sites')
    t.same(seen, [...sites.map((s) => s.domain), 's99.example.com'], 'every site once, in domain order, the later addition included')

    for (const query of [
      'limit=0',
      'limit=201',
      'limit=abc',
      'limit=1.5',
      'cursor=',
      'cursor=%%%',
      'cursor=bm90IGEgY3Vyc29y',
      `cursor=${'A'.repeat(500)}`,
      'page=2'
    ]) {
      const res = await get(`?${query}`)
      t.equal(res.code, 400, `${query}: 400`)
      t.match(res.body, { error: String }, `${query}: JSON error`)
    }
  })
}

t.test('the scheduler and the in-memory state take an API-added site at once, not at their periodic re-read', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  await addSite({ db, entry: { domain: 'existing.example.com', name: null }, now: new Date() })
  const intervalMs = 60_000
  const states = new SiteStates({ intervalMs, publicUrl: 'https://status.example.net' })
  const checks = { probeNow: async () => ({}) } as unknown as CheckSupervisor
  const startedAt = Date.now()
  const monitoring = await startMonitoring({ db, states, checks, intervalMs, retentionDays: 35, logger: createLogger({ level: 'silent' }) })
  t.teardown(() => monitoring.stop())
  const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url }, states, sitesChanged: () => monitoring.sitesChanged() })
  const key = await issueKey({ scopes: 'read,manage' })
  t.equal(monitoring.scheduler.stats().sites, 1, 'one site on the wheel at start')

  const added = await server.inject({
    method: 'POST',
    url: '/api/v1/sites',
    headers: bearer(key),
    payload: { domain: 'added.example.com' }
  })
  t.equal(added.statusCode, 201)
  t.equal(monitoring.scheduler.stats().sites, 2, 'the scheduler holds the new site when the answer comes')
  t.ok(states.has('added.example.com'), 'and so does the in-memory state')
  const removed = await server.inject({ method: 'DELETE', url: '/api/v1/sites/added.example.com', headers: bearer(key) })
  t.equal(removed.statusCode, 204)
  t.equal(monitoring.scheduler.stats().sites, 1, 'the removal too')
  t.notOk(states.has('added.example.com'))
  // The periodic re-read comes every min(interval / 2, 10 s) after the start: it has not come yet.
  t.ok(Date.now() - startedAt < 10_000, 'all of it before the first periodic re-read')
})
