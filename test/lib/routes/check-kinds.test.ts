/**
 * On-demand checks of every kind through the API (issue 47): one shape, `{"domain", "check"}`, for
 * a POST with its headers and assertions, a TCP port, a TLS handshake and a DNS record, each judged
 * by the quorum of three locations and answered with a stable code per location; a secret header
 * reaches the target and never the answer; a bad check is a 400 saying why; a batch takes a check
 * per entry.
 */
import http from 'node:http'
import net from 'node:net'
import t from 'tap'
import { SECRET_MASK } from '../../../lib/rules/check-spec.js'
import { checkStack } from '../../helpers/check-stack.js'
import { startDnsZone } from '../../helpers/dns-zone.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer } from '../../helpers/server.js'
import { closedPort, serveOnLoopback } from '../../helpers/targets.js'

const seen: Array<{ method?: string; url?: string; auth?: string }> = []
let health = 'ok'
const api = http.createServer((req, res) => {
  seen.push({ method: req.method, url: req.url, auth: req.headers.authorization })
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: health }))
})
const apiPort = await serveOnLoopback(t, api)
const db = net.createServer((s) => {
  s.on('error', () => {})
  s.end('+OK\r\n')
})
await new Promise<void>((resolve) => db.listen(0, '127.0.0.1', resolve))
t.teardown(() => db.close())
const dbPort = (db.address() as net.AddressInfo).port
const closed = await closedPort()
const zone = await startDnsZone(t, { 'mail.site.test': { MX: ['10 mx.mail.site.test'] } })

const CONNECT_TO = [
  `db.site.test:5432:127.0.0.1:${dbPort}`,
  `:443:127.0.0.1:${closed}`,
  `:80:127.0.0.1:${apiPort}`,
  `:5432:127.0.0.1:${closed}`
].join(',')
const stack = await checkStack(t, { proxies: [null, null, null], connectTo: CONNECT_TO, cacheTtlS: 0, env: { DNS_SERVERS: zone.address } })

t.test('a POST with a secret header and an assertion on its JSON, judged at each location', async (t) => {
  const check = {
    type: 'http',
    method: 'POST',
    path: '/health',
    headers: { Authorization: 'Bearer s3cret-token', 'content-type': 'application/json' },
    body: '{}',
    assertions: [{ source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' }]
  }
  const up = await stack.check('api.site.test', {}, { check })
  t.equal(up.status, 200)
  matchesOpenApi(t, up.res)
  t.match(up.body, { status: 'up', locations_answered: 3 })
  t.ok(
    seen.filter((r) => r.method === 'POST' && r.url === '/health' && r.auth === 'Bearer s3cret-token').length >= 3,
    'the header reached the target'
  )
  t.notMatch(up.res.payload, /s3cret/, 'and is never in the answer')
  t.match(up.body.check, { type: 'http', headers: { authorization: SECRET_MASK } })
  health = 'degraded'
  const down = await stack.check('api.site.test', {}, { check })
  t.match(down.body, { status: 'down' })
  for (const l of down.body.locations) t.match(l, { status: 'down', code: 'assertion_failed', assertion: 0, error: /got "degraded"/ })
  health = 'ok'
})

t.test('a TCP port: open is up, closed is down with connect_refused at every location', async (t) => {
  const open = await stack.check('db.site.test', {}, { check: { type: 'tcp', port: 5432, expect_prefix: '+OK' } })
  matchesOpenApi(t, open.res)
  t.match(open.body, { status: 'up', locations_answered: 3, check: { type: 'tcp', port: 5432 } })
  for (const l of open.body.locations) t.match(l, { status: 'up', code: null, http_code: 0 })
  const shut = await stack.check('other.site.test', {}, { check: { type: 'tcp', port: 5432 } })
  t.match(shut.body, { status: 'down' })
  for (const l of shut.body.locations) t.match(l, { code: 'connect_refused', error: 'connect: ECONNREFUSED' })
})

t.test("a DNS record asked of each location's resolvers", async (t) => {
  const mx = await stack.check('mail.site.test', {}, { check: { type: 'dns', record: 'MX', expect: ['10 mx.mail.site.test'] } })
  matchesOpenApi(t, mx.res)
  t.match(mx.body, { status: 'up', locations_answered: 3 })
  for (const l of mx.body.locations) t.match(l, { status: 'up', answers: ['10 mx.mail.site.test'] })
  const nx = await stack.check('none.site.test', {}, { check: { type: 'dns', record: 'A' } })
  for (const l of nx.body.locations) t.match(l, { status: 'down', code: 'dns_rcode', error: 'dns: NXDOMAIN (expected NOERROR)' })
})

t.test('a bad check is a 400 saying what is wrong, and costs nothing checked', async (t) => {
  const rows: Array<[unknown, RegExp]> = [
    [{ type: 'ftp' }, /"check.type" must be one of http, tcp, tls, dns/],
    [{ type: 'http', headers: { Host: 'x' } }, /Host is set by the check itself/],
    [{ type: 'tcp' }, /"check.port" is required/],
    [{ type: 'http', assertions: [{ source: 'text_body', comparison: 'matches', target: '(?=x)' }] }, /RE2/]
  ]
  for (const [check, error] of rows) {
    const res = await stack.check('api.site.test', {}, { check })
    t.equal(res.status, 400, JSON.stringify(check))
    t.match(res.body, { error })
  }
})

t.test('a batch takes a check per entry, and one for the entries that name none', async (t) => {
  const res = await stack.server.inject({
    method: 'POST',
    url: '/api/v1/checks',
    headers: { ...bearer(stack.key), 'content-type': 'application/json' },
    payload: JSON.stringify({
      domains: [
        'db.site.test',
        { domain: 'mail.site.test', check: { type: 'dns', record: 'MX' } },
        { domain: 'api.site.test', check: { type: 'http' } }
      ],
      check: { type: 'tcp', port: 5432 }
    })
  })
  t.equal(res.statusCode, 200)
  matchesOpenApi(t, res)
  const results = JSON.parse(res.payload).results as Array<{ domain: string; status: string; check?: { type: string } }>
  const by = new Map(results.map((r) => [r.domain, r]))
  t.match(by.get('db.site.test'), { status: 'up', check: { type: 'tcp' } })
  t.match(by.get('mail.site.test'), { status: 'up', check: { type: 'dns' } })
  t.match(by.get('api.site.test'), { status: 'up' })
  t.notOk(by.get('api.site.test')?.check, 'a bare http check is the web check')
})
