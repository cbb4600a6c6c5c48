import t from 'tap'
import type { ServerInjectResponse } from '@hapi/hapi'
import { Validator } from '@seriousme/openapi-schema-validator'
import { openApiDocument } from '../../../lib/openapi/document.js'
import { certificateEvent, heartbeatLateEvent, heartbeatOutageEvent, maintenanceEvent, slowEvent } from '../../../lib/rules/events.js'
import { migratedDb } from '../../helpers/db.js'
import { document, openApiProblems, schemaAt } from '../../helpers/openapi.js'
import { everyRouteServer, testServer } from '../../helpers/server.js'

type Json = Record<string, any>
const METHODS = ['get', 'post', 'put', 'patch', 'delete']
/** Served, but not API: the copy-button script and the style sheet. */
const UNDOCUMENTED = new Set(['/{path*}', '/static/{file}'])

t.test('the document passes a third-party OpenAPI 3.1 validator', async (t) => {
  const validator = new Validator()
  const result = await validator.validate(openApiDocument({ publicUrl: 'https://status.example.net' }))
  t.same(result.errors ?? [], [], 'no schema errors')
  t.equal(result.valid, true)
  t.equal(validator.version, '3.1')
})

const T_EVENT = Date.parse('2026-11-24T06:25:07.123Z')

t.test('every event type is described as a webhook, its data as the stream carries it', async (t) => {
  t.same(Object.keys(document.webhooks as Json).sort(), [
    'certificate.expiring',
    'heartbeat.late',
    'heartbeat.late_ended',
    'maintenance.ended',
    'maintenance.started',
    'outage.closed',
    'outage.opened',
    'site.added',
    'site.removed',
    'site.slow',
    'site.slow_ended'
  ])
  const outage = {
    domain: 'example.com',
    name: 'Example',
    started_at: '2026-11-22T06:25:07.123Z',
    ended_at: null,
    duration_seconds: 0,
    site: { domain: 'example.com', name: 'Example' }
  }
  t.ok(schemaAt('/components/schemas/OutageEventData')(outage), 'an outage event passes')
  t.notOk(schemaAt('/components/schemas/OutageEventData')({ ...outage, site: undefined }), 'one without its site fails')
  t.ok(schemaAt('/components/schemas/SiteEventData')({ site: outage.site, at: '2026-11-22T06:25:07.123Z' }), 'a site event passes')
  const certificate = certificateEvent(
    { id: 1, ...outage.site },
    { expiresAt: new Date('2026-11-25T06:25:07.000Z'), issuer: "CN=R11, O=Let's Encrypt, C=US" },
    1,
    new Date('2026-11-24T06:25:07.123Z')
  ).data
  const certificateData = schemaAt('/components/schemas/CertificateEventData')
  t.ok(certificateData(certificate), 'a certificate event as the service writes it passes')
  t.ok(certificateData({ ...certificate, issuer: null }), 'with no issuer too')
  t.notOk(certificateData({ ...certificate, threshold_days: 3 }), 'a threshold that is not 14, 7 or 1 fails')
  const slow = slowEvent('site.slow', { id: 1, ...outage.site }, { response_ms: 2400, max_response_ms: 2000 }, new Date(T_EVENT)).data
  t.ok(schemaAt('/components/schemas/SlowEventData')(slow), 'a slow event as the service writes it passes')
  const maintenance = maintenanceEvent(
    'started',
    { id: 1, ...outage.site },
    { until: new Date(T_EVENT + 3_600_000), reason: null },
    new Date(T_EVENT)
  ).data
  t.ok(schemaAt('/components/schemas/MaintenanceEventData')(maintenance), 'a maintenance event as the service writes it passes')
  for (const [type, data] of [
    ['site.slow_ended', 'SlowEventData'],
    ['maintenance.ended', 'MaintenanceEventData'],
    ['heartbeat.late_ended', 'HeartbeatLateEventData']
  ]) {
    const carried = (document.webhooks as Json)[type as string].post.requestBody.content['application/json'].schema.properties.data
    t.same(carried, { $ref: `#/components/schemas/${data}` }, `${type} carries ${data}`)
  }
  const heartbeat = { siteId: 1, slug: 'nightly-backup', name: 'Nightly backup' }
  const late = heartbeatLateEvent(
    heartbeat,
    { state: 'late', dueAt: new Date(T_EVENT), downAt: new Date(T_EVENT + 60_000) },
    new Date(T_EVENT)
  )
  const lateData = schemaAt('/components/schemas/HeartbeatLateEventData')
  t.ok(lateData(late.data), 'a heartbeat.late event as the service writes it passes')
  t.ok(lateData(heartbeatLateEvent(heartbeat, { state: 'up', dueAt: null, downAt: null }, new Date(T_EVENT)).data), 'and its end')
  t.equal(late.type, 'heartbeat.late')
  const heartbeatOutage = heartbeatOutageEvent('open', heartbeat, { started_at: new Date(T_EVENT), ended_at: null }, new Date(T_EVENT)).data
  t.ok(schemaAt('/components/schemas/HeartbeatOutageEventData')(heartbeatOutage), "a heartbeat's outage event passes")
  t.notOk(schemaAt('/components/schemas/OutageEventData')(heartbeatOutage), "a site's outage schema would refuse it")
  t.same(
    (document.webhooks as Json)['outage.opened'].post.requestBody.content['application/json'].schema.properties.data,
    { oneOf: [{ $ref: '#/components/schemas/OutageEventData' }, { $ref: '#/components/schemas/HeartbeatOutageEventData' }] },
    "an outage webhook carries a site's or a heartbeat's outage"
  )
  const webhook = (document.webhooks as Json)['certificate.expiring'].post.requestBody.content['application/json'].schema
  t.same(webhook.properties.data, { $ref: '#/components/schemas/CertificateEventData' }, 'its webhook carries that data')
})

t.test('the validator would catch a broken document', async (t) => {
  const broken = structuredClone(document)
  broken.paths['/api/v1/outages'].get.responses = 'none'
  t.equal((await new Validator().validate(broken)).valid, false)
})

t.test('every route the server answers is documented, and every documented operation exists', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  // With METRICS_TOKEN set, so that /metrics takes the token's way in too, as the document says.
  const { server } = await everyRouteServer(t, { db, env: { METRICS_TOKEN: 'document-test-token-0123' } })
  const served = new Set(
    server
      .table()
      .filter((r) => !UNDOCUMENTED.has(r.path))
      .map((r) => `${r.method} ${r.path}`)
  )
  const documented = new Set(
    Object.entries(document.paths as Json).flatMap(([path, item]) =>
      Object.keys(item as Json)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m} ${path}`)
    )
  )
  t.same([...served].sort(), [...documented].sort(), 'the same set of method and path')

  // The scope a route declares: the key strategy it names (`api-key:<scope>`, see requireScope)
  // and any hapi `auth.access.scope`, each named once.
  const declared = (auth: unknown): string[] => {
    if (typeof auth !== 'object' || auth === null) return []
    const { strategies = [], access = [] } = auth as { strategies?: string[]; access?: Array<{ scope?: { selection?: string[] } | false }> }
    const byStrategy = strategies.flatMap((name) => (name.startsWith('api-key:') ? [name.slice('api-key:'.length)] : []))
    const byAccess = access.flatMap((a) => (a.scope ? (a.scope.selection ?? []) : []))
    return [...new Set([...byStrategy, ...byAccess])]
  }
  for (const route of server.table().filter((r) => (r.settings.auth as unknown) !== false && !UNDOCUMENTED.has(r.path))) {
    const op = (document.paths as Json)[route.path][route.method]
    // METRICS_TOKEN is a second way in where the route accepts its strategy (hapi lists it first).
    const strategies = (route.settings.auth as { strategies?: string[] } | undefined)?.strategies ?? []
    const token = strategies.includes('metrics-token') ? [{ metricsToken: [] }] : []
    t.same(
      op.security ?? [{ bearerAuth: [] }],
      [{ bearerAuth: declared(route.settings.auth) }, ...token],
      `${route.method.toUpperCase()} ${route.path} documents the scope it declares`
    )
  }
})

t.test('every operation documents the errors it can answer', async (t) => {
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const statuses = Object.keys(op.responses)
      const keyed = op.security === undefined || op.security.length > 0
      const scoped = keyed && op.security !== undefined
      const expected = ['405']
      if (keyed) expected.push('401', '429', '500', '503')
      if (scoped) expected.push('403')
      if (path.includes('{') || (op.parameters ?? []).length > 0 || op.requestBody) expected.push('400')
      if (op.requestBody) expected.push('413', '415')
      if (path.includes('{domain}') && path.startsWith('/api/v1/')) expected.push('404')
      t.same(
        expected.filter((s) => !statuses.includes(s)),
        [],
        `${method.toUpperCase()} ${path} documents ${expected.join(', ')}`
      )
      // An operation METRICS_TOKEN may call answers that token without a budget: the headers are
      // documented, but only required where a key is the only way in.
      const tokenToo = (op.security ?? []).some((s: Json) => 'metricsToken' in s)
      if (keyed && tokenToo) {
        const success = Object.keys(op.responses).find((s) => /^2\d\d$/.test(s)) ?? '200'
        t.same(
          Object.keys(op.responses[success].headers),
          ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
          `${method.toUpperCase()} ${path} documents the budget headers a key gets`
        )
      } else if (keyed) {
        const success = Object.keys(op.responses).find((s) => /^2\d\d$/.test(s)) ?? '200'
        t.match(
          op.responses[success].headers,
          { 'RateLimit-Limit': { required: true }, 'RateLimit-Remaining': { required: true }, 'RateLimit-Reset': { required: true } },
          `${method.toUpperCase()} ${path} promises the budget headers`
        )
      }
    }
  }
  t.same(
    document.components.securitySchemes.bearerAuth,
    { type: 'http', scheme: 'bearer', description: document.components.securitySchemes.bearerAuth.description },
    'the Bearer scheme'
  )
  t.same(document.security, [{ bearerAuth: [] }], 'keyed by default')
  t.match(document.components.responses.TooManyRequests.headers, { 'Retry-After': {}, 'RateLimit-Remaining': {} })
})

/** A response as `inject` returns it, made up to show what the validation helper catches. */
function fake(method: string, path: string, route: string, statusCode: number, headers: Json, body: unknown): ServerInjectResponse {
  return {
    statusCode,
    headers,
    payload: body === undefined ? '' : JSON.stringify(body),
    request: { method, path, route: { path: route } }
  } as unknown as ServerInjectResponse
}

t.test('the response check catches renamed fields, missing headers and undocumented answers', async (t) => {
  const budget = {
    'ratelimit-limit': '60',
    'ratelimit-remaining': '59',
    'ratelimit-reset': '60',
    'content-type': 'application/json; charset=utf-8'
  }
  const good = { limit: 60, remaining: 59, used: 1, reset_seconds: 60, reset_at: '2026-11-22T06:25:07.123Z' }
  const rateLimit = (status: number, headers: Json, body: unknown) =>
    fake('get', '/api/v1/rate_limit', '/api/v1/rate_limit', status, headers, body)
  t.same(openApiProblems(rateLimit(200, budget, good)), [], 'a correct response passes')
  const { used: _used, ...dropped } = good
  t.match(openApiProblems(rateLimit(200, budget, { ...dropped, in_use: 1 })), [/body: .*used/], 'a renamed field fails')
  t.match(
    openApiProblems(rateLimit(200, budget, { ...good, reset_at: '2026-11-22T06:25:07Z' })),
    [/reset_at/],
    'a timestamp without milliseconds fails'
  )
  t.match(
    openApiProblems(rateLimit(200, { 'content-type': 'application/json' }, good)),
    [/RateLimit-Limit is required/, /RateLimit-Remaining/, /RateLimit-Reset/],
    'missing budget headers fail'
  )
  t.match(openApiProblems(rateLimit(418, budget, { error: 'teapot' })), [/status 418 is not documented/], 'an undocumented status fails')
  t.match(
    openApiProblems(rateLimit(200, { ...budget, 'content-type': 'text/plain' }, good)),
    [/content type text\/plain/],
    'an undocumented content type fails'
  )
  t.match(
    openApiProblems(rateLimit(401, { 'content-type': 'application/json' }, { error: 'x' })),
    [/WWW-Authenticate/],
    'a 401 without its challenge fails'
  )
  t.match(
    openApiProblems(rateLimit(429, { ...budget, 'retry-after': '3' }, { error: 'x', detail: 1 })),
    [/body: .*additional/],
    'an error with extra fields fails'
  )
  t.match(openApiProblems(rateLimit(429, budget, { error: 'x' })), [/Retry-After is required/], 'a 429 without Retry-After fails')
  t.match(
    openApiProblems(fake('get', '/api/v1/elsewhere', '/api/v1/elsewhere', 200, budget, {})),
    [/not documented/],
    'an undocumented path fails'
  )
  t.match(
    openApiProblems(
      fake(
        'get',
        '/api/badge/a.example.com',
        '/api/badge/{domain}',
        304,
        { etag: '"x"', 'cache-control': 'public, max-age=20, stale-while-revalidate=30', 'access-control-allow-origin': '*' },
        'x'
      )
    ),
    [/a body where/],
    'a 304 with a body fails'
  )
})

t.test('GET /api/v1/openapi.json serves the document without a key', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const { server } = await testServer({ db, env: { PUBLIC_URL: 'https://status.example.net/' } })
  const res = await server.inject('/api/v1/openapi.json')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  t.equal(res.headers['access-control-allow-origin'], '*', 'API tools on other origins may read it')
  const served = JSON.parse(res.payload)
  t.same(served, document, 'the document, with the public URL as its server')
  t.same(served.servers, [{ url: 'https://status.example.net' }])
})
