import t from 'tap'
import { addMaintenanceWindow } from '../../../lib/monitoring/maintenance-windows.js'
import { MAX_WINDOWS_PER_SITE } from '../../../lib/rules/maintenance.js'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer } from '../../helpers/server.js'
import { trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-20T12:00:00.000Z')
const SITES = [
  { domain: 'shop.example.com', name: 'Shop' },
  { domain: 'blog.example.com', name: 'Blog' }
]

for (const engine of engines()) {
  t.test(`maintenance windows are added, listed and removed through the API, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: SITES, start: T0 })
    const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const reader = await api.issueKey({ limit: 10_000, scopes: 'read' })
    const checker = await api.issueKey({ limit: 10_000, scopes: 'check' })
    const call = async (method: string, url: string, key: string, payload?: unknown) => {
      const res = await api.server.inject({ method, url, headers: bearer(key), payload: payload as object | undefined })
      matchesOpenApi(t, res, `${method} ${url} ${res.statusCode}`)
      return { status: res.statusCode, body: res.payload === '' ? null : JSON.parse(res.payload) }
    }
    const windows = '/api/v1/sites/shop.example.com/maintenance'

    const oneOff = await call('POST', '/api/v1/sites/SHOP.example.com/maintenance', manager, {
      from: '2026-12-01T03:00:00+01:00',
      to: '2026-12-01T02:30Z',
      reason: 'database upgrade'
    })
    t.same(
      oneOff,
      {
        status: 201,
        body: { id: oneOff.body.id, from: '2026-12-01T02:00:00.000Z', to: '2026-12-01T02:30:00.000Z', reason: 'database upgrade' }
      },
      'a one-off window: 201 with its id and its normal form (UTC, milliseconds)'
    )
    const weekly = await call('POST', windows, manager, {
      weekly: { day: 'tue', time: '02:00', duration_minutes: 30, zone: 'europe/berlin' }
    })
    t.same(weekly.body, {
      id: weekly.body.id,
      weekly: { day: 'tue', time: '02:00', duration_minutes: 30, zone: 'Europe/Berlin' },
      reason: null
    })
    t.ok(weekly.body.id > oneOff.body.id)
    t.same(await call('GET', windows, reader), { status: 200, body: { windows: [oneOff.body, weekly.body] } }, 'listed with read, in order')
    t.same(await call('GET', '/api/v1/sites/blog.example.com/maintenance', reader), { status: 200, body: { windows: [] } })

    t.equal((await call('GET', windows, checker)).status, 403, 'listing needs read')
    t.equal((await call('POST', windows, reader, { from: '2026-12-01', to: '2026-12-02' })).status, 403, 'adding needs manage')
    t.equal((await call('DELETE', `${windows}/${oneOff.body.id}`, reader)).status, 403, 'removing needs manage')

    t.match(await call('POST', '/api/v1/sites/never.example.com/maintenance', manager, { from: '2026-12-01', to: '2026-12-02' }), {
      status: 404,
      body: { error: 'site is not tracked' }
    })
    t.match(await call('GET', '/api/v1/sites/never.example.com/maintenance', reader), {
      status: 404,
      body: { error: 'site is not tracked' }
    })
    t.match(await call('GET', '/api/v1/sites/localhost/maintenance', reader), { status: 400, body: { error: /fully qualified/ } })

    const notHers = await call('DELETE', `/api/v1/sites/blog.example.com/maintenance/${oneOff.body.id}`, manager)
    t.match(notHers, { status: 404, body: { error: 'no such maintenance window for this site' } }, "another site's window is not found")
    t.match(await call('DELETE', `/api/v1/sites/never.example.com/maintenance/${oneOff.body.id}`, manager), {
      status: 404,
      body: { error: 'site is not tracked' }
    })
    for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
      t.match(await call('DELETE', `${windows}/${id}`, manager), { status: 400, body: { error: /whole number/ } }, `id ${id}: 400`)
    }
    t.same(await call('DELETE', `${windows}/${oneOff.body.id}`, manager), { status: 204, body: null }, 'removed: 204')
    t.match(await call('DELETE', `${windows}/${oneOff.body.id}`, manager), { status: 404 }, 'removing it again: 404')
    t.same((await call('GET', windows, reader)).body, { windows: [weekly.body] })
  })

  t.test(`a bad window is a 400 saying what is wrong, and nothing is stored, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: SITES, start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const weekly = { day: 'tue', time: '02:00', duration_minutes: 30, zone: 'UTC' }
    const cases: Array<[string, unknown, RegExp]> = [
      ['an empty object', {}, /either "from" and "to", or "weekly"/],
      ['a list', [], /either "from" and "to", or "weekly"/],
      ['from alone', { from: '2026-12-01T00:00:00Z' }, /either "from" and "to"/],
      ['both kinds', { from: '2026-12-01', to: '2026-12-02', weekly }, /either "from" and "to", or "weekly"/],
      ['an unknown field', { from: '2026-12-01', to: '2026-12-02', note: 'x' }, /"note" is not one of its fields/],
      ['to before from', { from: '2026-12-02', to: '2026-12-01' }, /"from" must be before "to"/],
      ['32 days', { from: '2026-12-01', to: '2027-01-02' }, /at most 31 days/],
      ['a time without a zone', { from: '2026-12-01T02:00:00', to: '2026-12-02' }, /"from" must be an ISO 8601 date-time with a time zone/],
      ['30 February', { from: '2026-02-30', to: '2026-03-02' }, /"from" must be an ISO 8601/],
      ['a number', { from: 1, to: 2 }, /"from" must be an ISO 8601/],
      // MySQL's DATETIME ends in 9999: a later "to" once reached the insert and answered 500.
      ['past year 9999', { from: '9999-12-31T00:00:00Z', to: '9999-12-31T23:30:00-01:00' }, /"to" must be .* from 1970 to 9999/],
      ['before 1970', { from: '1969-12-31T23:00:00Z', to: '1970-01-01T01:00:00Z' }, /"from" must be .* from 1970 to 9999/],
      ['a bad day', { weekly: { ...weekly, day: 'tuesday' } }, /"weekly.day" must be one of/],
      ['a bad time', { weekly: { ...weekly, time: '24:00' } }, /"weekly.time" must be a local time HH:MM/],
      ['no duration', { weekly: { ...weekly, duration_minutes: undefined } }, /"weekly.duration_minutes" is required/],
      ['a duration as text', { weekly: { ...weekly, duration_minutes: '30' } }, /"weekly.duration_minutes" must be a whole number/],
      ['over a week', { weekly: { ...weekly, duration_minutes: 10_081 } }, /from 1 to 10080/],
      ['an offset as zone', { weekly: { ...weekly, zone: '+01:00' } }, /"weekly.zone" must be an IANA time zone/],
      ['an unknown zone', { weekly: { ...weekly, zone: 'Mars/Olympus' } }, /"weekly.zone" must be an IANA time zone/],
      ['an empty reason', { from: '2026-12-01', to: '2026-12-02', reason: '' }, /"reason" must be 1 to 200 printable characters/],
      ['a reason with a bell', { from: '2026-12-01', to: '2026-12-02', reason: 'a\u0007b' }, /"reason" must be 1 to 200/],
      ['a long reason', { from: '2026-12-01', to: '2026-12-02', reason: 'r'.repeat(201) }, /"reason" must be 1 to 200/]
    ]
    for (const [what, payload, error] of cases) {
      const res = await api.server.inject({
        method: 'POST',
        url: '/api/v1/sites/shop.example.com/maintenance',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        payload: JSON.stringify(payload)
      })
      t.equal(res.statusCode, 400, `${what}: 400`)
      t.match(JSON.parse(res.payload), { error }, `${what}: says why`)
      matchesOpenApi(t, res, what)
    }
    for (const [what, request, code] of [
      ['no body', { headers: { 'content-type': 'application/json' } }, 400],
      ['malformed JSON', { payload: '{"from":', headers: { 'content-type': 'application/json' } }, 400],
      ['a text body', { payload: 'from=2026-12-01', headers: { 'content-type': 'text/plain' } }, 415],
      ['a body over 4 KiB', { payload: { from: '2026-12-01', to: '2026-12-02', reason: 'x'.repeat(5000) } }, 413]
    ] as const) {
      const res = await api.server.inject({
        method: 'POST',
        url: '/api/v1/sites/shop.example.com/maintenance',
        ...request,
        headers: { ...bearer(key), ...('headers' in request ? request.headers : {}) }
      })
      t.equal(res.statusCode, code, `${what}: ${code}`)
      t.match(JSON.parse(res.payload), { error: String }, `${what}: JSON error`)
      matchesOpenApi(t, res, what)
    }
    t.equal(Number((await api.db('maintenance_windows').count({ n: '*' }).first())?.n), 0, 'nothing was stored')
  })

  t.test(`a site holds at most ${MAX_WINDOWS_PER_SITE} windows, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: SITES, start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const rows = Array.from({ length: MAX_WINDOWS_PER_SITE }, (_, i) => ({
      site_id: api.states.siteId('shop.example.com'),
      starts_at: new Date(T0 + i * 3_600_000),
      ends_at: new Date(T0 + i * 3_600_000 + 60_000),
      created_at: new Date(T0)
    }))
    await api.db('maintenance_windows').insert(rows.slice(0, -1))
    const post = () =>
      api.server.inject({
        method: 'POST',
        url: '/api/v1/sites/shop.example.com/maintenance',
        headers: bearer(key),
        payload: { from: '2027-01-01', to: '2027-01-02' }
      })
    t.equal((await post()).statusCode, 201, `the ${MAX_WINDOWS_PER_SITE}th is taken`)
    const refused = await post()
    t.equal(refused.statusCode, 409, 'one more is a conflict')
    t.match(JSON.parse(refused.payload), { error: `a site has at most ${MAX_WINDOWS_PER_SITE} maintenance windows; remove one first` })
    matchesOpenApi(t, refused)
    const other = await addMaintenanceWindow({
      db: api.db,
      domain: 'blog.example.com',
      window: { from: new Date(T0), to: new Date(T0 + 1), reason: null },
      now: new Date(T0)
    })
    t.ok(other.ok, 'the limit is per site')
  })
}
