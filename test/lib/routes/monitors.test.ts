/**
 * Monitors of kind tcp, tls and dns through the API (issue 47): created with a slug of their own,
 * listed, changed, removed and their status record; a bad body is a 400 JSON error saying why; the
 * outages list, the events and the badge name the monitor; the sites list leaves it out.
 */
import t from 'tap'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer } from '../../helpers/server.js'
import { MIN, trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-29T12:00:00.000Z')
const DB = { name: 'Orders DB', target: 'db.example.com', check: { type: 'tcp', port: 5432 } }

for (const engine of engines()) {
  t.test(`monitors through the API, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: [{ domain: 'shop.example.com', name: 'Shop' }], start: T0 })
    const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const reader = await api.issueKey({ limit: 10_000, scopes: 'read' })
    const call = async (method: string, url: string, key: string | null, payload?: unknown) => {
      const res = await api.server.inject({
        method,
        url,
        headers: key === null ? {} : bearer(key),
        ...(payload === undefined ? {} : { payload: payload as object })
      })
      matchesOpenApi(t, res, `${method} ${url} ${res.statusCode}`)
      const type = String(res.headers['content-type'] ?? '')
      return { status: res.statusCode, body: type.startsWith('application/json') ? JSON.parse(res.payload) : res.payload, res }
    }

    const added = await call('POST', '/api/v1/monitors', manager, DB)
    t.equal(added.status, 201)
    t.equal(added.res.headers.location, '/api/v1/monitors/orders-db', 'the slug is made of the name')
    t.same(added.body, {
      slug: 'orders-db',
      kind: 'tcp',
      name: 'Orders DB',
      target: 'db.example.com',
      check: { type: 'tcp', port: 5432, send: null, expect_prefix: null, tls: false, assertions: [] },
      interval_s: null,
      max_response_ms: null,
      status: 'pending',
      checked_at: null,
      added_at: new Date(T0).toISOString()
    })
    const row = await api.db('sites').where({ domain: 'monitor:orders-db' }).first('kind', 'target', 'check_spec')
    t.match(row, { kind: 'tcp', target: 'db.example.com' }, 'a sites row of its kind, its identity monitor:<slug>')
    t.equal((await call('POST', '/api/v1/monitors', manager, { ...DB, name: 'Other', slug: 'orders-db' })).status, 409, 'a slug in use')
    t.equal((await call('POST', '/api/v1/monitors', reader, { ...DB, slug: 'x' })).status, 403, 'adding needs manage')

    for (const [bad, words] of [
      [{ name: 'x', check: { type: 'tcp', port: 5432 } }, /"target" is required/],
      [{ ...DB, slug: 'a', target: '10.0.0.5' }, /"target" must be a host name/],
      [{ ...DB, slug: 'a', target: 'db.example.com:5432' }, /"target" must be a host name/],
      [{ ...DB, slug: 'a', check: { type: 'http' } }, /an http check is a site's/],
      [{ ...DB, slug: 'a', check: { type: 'tcp' } }, /"check.port" is required/],
      [{ ...DB, slug: 'a', check: { type: 'tcp', port: 70000 } }, /check.port/],
      [{ ...DB, slug: 'a', check: { type: 'dns', record: 'PTR' } }, /check.record/],
      [{ ...DB, slug: 'Bad Slug' }, /"slug"/],
      [{ ...DB, name: '!!!' }, /"slug" is required/],
      [{ ...DB, slug: 'a', interval_s: 5 }, /"interval_s"/],
      [{ ...DB, slug: 'a', port: 5432 }, /takes only/],
      [{ ...DB, slug: 'a', check: undefined }, /"check" is required/]
    ] as Array<[Record<string, unknown>, RegExp]>) {
      const res = await call('POST', '/api/v1/monitors', manager, bad)
      t.equal(res.status, 400, JSON.stringify(bad))
      t.match(res.body, { error: words }, JSON.stringify(bad))
    }

    const dns = await call('POST', '/api/v1/monitors', manager, {
      name: 'Mail MX',
      slug: 'mail-mx',
      target: 'example.com',
      check: { type: 'dns', record: 'MX', expect: ['10 mx.example.com'] },
      interval_s: 300
    })
    t.equal(dns.status, 201)
    t.match(dns.body, { kind: 'dns', interval_s: 300, check: { type: 'dns', record: 'MX', rcode: 'NOERROR' } })

    const first = await call('GET', '/api/v1/monitors?limit=1', reader)
    t.same(
      first.body.monitors.map((m: { slug: string }) => m.slug),
      ['mail-mx'],
      'listed by slug'
    )
    t.type(first.body.next_cursor, 'string')
    const second = await call('GET', `/api/v1/monitors?limit=1&cursor=${first.body.next_cursor as string}`, reader)
    t.same([second.body.monitors.map((m: { slug: string }) => m.slug), second.body.next_cursor], [['orders-db'], null])
    t.equal((await call('GET', '/api/v1/monitors?cursor=nope', reader)).status, 400)
    const sites = await call('GET', '/api/v1/sites', reader)
    t.same(
      sites.body.sites.map((s: { domain: string }) => s.domain),
      ['shop.example.com'],
      'the sites list holds web sites only'
    )

    t.match((await call('GET', '/api/v1/monitors/orders-db/status', reader)).body, {
      slug: 'orders-db',
      kind: 'tcp',
      target: 'db.example.com',
      status: 'pending',
      last_outage: null
    })

    // Checks recorded under the monitor's identity: an outage opens, named by the monitor.
    await api.feed('monitor:orders-db', 'down', T0 + MIN)
    api.clock.now = T0 + 2 * MIN
    const status = await call('GET', '/api/v1/monitors/orders-db/status', reader)
    t.match(status.body, { status: 'down', last_outage: { ended_at: null } })
    const outages = await call('GET', '/api/v1/outages?monitor=orders-db', reader)
    t.match(outages.body.outages, [{ domain: 'monitor:orders-db', name: 'Orders DB', monitor: { kind: 'tcp', slug: 'orders-db' } }])
    t.equal((await call('GET', '/api/v1/outages?monitor=orders-db&domain=shop.example.com', reader)).status, 400, 'one or the other')
    t.equal((await call('GET', '/api/v1/outages?monitor=Bad!', reader)).status, 400)
    const opened = await api.db('events').where({ type: 'outage.opened' }).orderBy('id', 'desc').first('data')
    t.match(JSON.parse(opened.data as string), { site: { domain: 'monitor:orders-db' }, monitor: { kind: 'tcp', slug: 'orders-db' } })

    const badge = await call('GET', '/api/badge/monitor/orders-db', null)
    t.equal(badge.status, 200)
    t.match(String(badge.body), /Orders DB/)
    t.match(String(badge.body), /down/)
    t.match((await call('GET', '/api/badge/monitor/orders-db/endpoint', null)).body, { label: 'Orders DB', message: 'down' })
    t.equal((await call('GET', '/api/badge/monitor/nobody', null)).status, 404)
    t.equal((await call('GET', '/api/badge/monitor/Bad!', null)).status, 400)

    const sla = await call('GET', '/api/v1/monitors/orders-db/sla?from=2026-11-29', reader)
    t.equal(sla.status, 200)
    t.match(sla.body, { domain: 'monitor:orders-db', incidents: 1, outages: [{ ended_at: null }] }, 'its SLA by slug')
    t.equal((await call('GET', '/api/v1/monitors/nobody/sla', reader)).status, 404)
    const window = { from: '2026-12-01T00:00:00Z', to: '2026-12-01T02:00:00Z', reason: 'failover drill' }
    const added2 = await call('POST', '/api/v1/monitors/orders-db/maintenance', manager, window)
    t.equal(added2.status, 201)
    t.match((await call('GET', '/api/v1/monitors/orders-db/maintenance', reader)).body, { windows: [{ reason: 'failover drill' }] })
    t.equal((await call('POST', '/api/v1/monitors/nobody/maintenance', manager, window)).status, 404)
    t.equal((await call('POST', '/api/v1/monitors/orders-db/maintenance', manager, { from: 'soon' })).status, 400)
    t.equal((await call('DELETE', `/api/v1/monitors/orders-db/maintenance/${added2.body.id as number}`, manager)).status, 204)
    t.equal((await call('DELETE', `/api/v1/monitors/orders-db/maintenance/${added2.body.id as number}`, manager)).status, 404)

    const changed = await call('PATCH', '/api/v1/monitors/orders-db', manager, { name: 'Orders', check: { type: 'tls', port: 5433 } })
    t.equal(changed.status, 200)
    t.match(
      changed.body,
      { slug: 'orders-db', kind: 'tls', name: 'Orders', check: { type: 'tls', port: 5433 } },
      'its kind follows the check'
    )
    t.equal((await call('PATCH', '/api/v1/monitors/orders-db', manager, {})).status, 400)
    t.equal((await call('PATCH', '/api/v1/monitors/orders-db', manager, { slug: 'x' })).status, 400, 'the slug stays')
    t.equal((await call('PATCH', '/api/v1/monitors/nobody', manager, { name: 'x' })).status, 404)
    t.equal((await call('PATCH', '/api/v1/monitors/orders-db', reader, { name: 'x' })).status, 403)
    t.equal(api.states.siteTarget('monitor:orders-db'), 'db.example.com', 'the state holds its target')

    t.equal((await call('DELETE', '/api/v1/monitors/orders-db', manager)).status, 204)
    t.equal((await call('GET', '/api/v1/monitors/orders-db', reader)).status, 404)
    t.equal((await call('DELETE', '/api/v1/monitors/orders-db', manager)).status, 404)
    const closed = await api.db('events').where({ type: 'outage.closed' }).orderBy('id', 'desc').first('data')
    t.match(JSON.parse(closed.data as string), { monitor: { kind: 'tls', slug: 'orders-db' } }, 'its outage ended, named as it is now')
    t.equal((await call('POST', '/api/v1/monitors', manager, DB)).status, 201, 'its slug is free again')
    t.match(
      (await call('GET', '/api/v1/monitors/orders-db/status', reader)).body,
      { status: 'pending', last_outage: null },
      'a new history'
    )
  })
}
