import t from 'tap'
import { bearer } from '../../helpers/server.js'
import { checkStack } from '../../helpers/check-stack.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { closedPort, makeCert, startHttpsTarget, startHttpTarget, startProxy } from '../../helpers/targets.js'

const web = await startHttpTarget()
const secure = await startHttpsTarget(makeCert())
const proxies = await Promise.all([startProxy(), startProxy(), startProxy()])
const closed = await closedPort()
t.teardown(async () => {
  await web.close()
  await secure.close()
  for (const p of proxies) await p.close()
})

// https is refused (the proxy answers 502) so probes fall back to http, except for the self-signed
// site, whose https answers with an untrusted certificate and whose http port is closed.
const CONNECT_TO = [
  `selfsigned.site.test:443:127.0.0.1:${secure.port}`,
  `selfsigned.site.test:80:127.0.0.1:${closed}`,
  `:443:127.0.0.1:${closed}`,
  `:80:127.0.0.1:${web.port}`
].join(',')

const stack = await checkStack(t, { proxies: proxies.map((p) => p.port), connectTo: CONNECT_TO })
const LABELS = ['Proxy 1, Testland', 'Proxy 2, Testland', 'Proxy 3, Testland']

t.test('a healthy site is up from every location', async (t) => {
  const { status, body, res } = await stack.check('ok.site.test')
  t.equal(status, 200)
  matchesOpenApi(t, res)
  t.match(body, {
    domain: 'ok.site.test',
    status: 'up',
    locations_answered: 3,
    locations_total: 3,
    cached: false,
    partial: false,
    blocked: false
  })
  t.type(body.response_ms, 'number')
  t.same(
    body.locations.map((l: { location: string }) => l.location),
    LABELS
  )
  for (const l of body.locations) {
    t.match(l, { status: 'up', http_code: 200, error: null, final_url: 'http://ok.site.test/' })
    t.ok(l.timings.total > 0 && l.timings.connect > 0, 'timings are measured')
  }
  t.match(web.hits.find((h) => h.host === 'ok.site.test')?.userAgent, /^SiteStatusAPI/, 'a truthful User-Agent')
})

const downCases: Array<[string, string, RegExp, number]> = [
  ['a site answering 503', 'fail.site.test', /^http: 503$/, 503],
  ['a site whose headers never come', 'hang.site.test', /^timeout: no response in 1500 ms$/, 0],
  // A proxy cannot pass a reset on: behind one it arrives as the tunnel closing without a reply.
  ['a site resetting connections', 'reset.site.test', /^(connect: ECONNRESET|http: empty reply)$/, 0],
  ['a self-signed TLS site', 'selfsigned.site.test', /^tls: /, 0]
]
for (const [title, domain, error, code] of downCases) {
  t.test(`${title} is down`, async (t) => {
    const { status, body, res } = await stack.check(domain)
    t.equal(status, 200)
    matchesOpenApi(t, res)
    t.match(body, { status: 'down', locations_answered: 3, partial: false })
    // Each location's own error, not `location: no answer`: every probe ended by its deadline, within
    // the margin (the deadline's timing is http-probe's test, on a fake clock).
    for (const l of body.locations) t.match(l, { status: 'down', http_code: code, error })
  })
}

t.test('a redirect chain is followed to its end', async (t) => {
  const { body } = await stack.check('chain.site.test')
  t.equal(body.status, 'up')
  for (const l of body.locations) t.match(l, { status: 'up', http_code: 200, final_url: 'http://chain.site.test/hop/3' })
})

t.test('a challenge page is blocked, not down', async (t) => {
  const { body, res } = await stack.check('challenge.site.test')
  matchesOpenApi(t, res)
  t.match(body, { status: 'up', blocked: true, partial: false })
  for (const l of body.locations) t.match(l, { status: 'blocked', http_code: 403, error: /^blocked: / })
})

t.test('200 concurrent checks of one domain share one probe per location', async (t) => {
  await stack.server.start()
  t.teardown(() => stack.server.stop())
  const domain = 'ok.flight.site.test'
  const responses = await Promise.all(
    Array.from({ length: 200 }, () =>
      fetch(`${stack.server.info.uri}/api/v1/check`, {
        method: 'POST',
        headers: { ...bearer(stack.key), 'content-type': 'application/json' },
        body: JSON.stringify({ domain })
      }).then(async (r) => ({ status: r.status, body: await r.json() }))
    )
  )
  t.ok(
    responses.every((r) => r.status === 200),
    'all answered'
  )
  t.equal(web.hits.filter((h) => h.host === domain).length, 3, 'exactly one probe per location reached the target')
  t.equal(new Set(responses.map((r) => r.body.checked_at)).size, 1, 'everyone got the same result')
  t.equal(stack.results.filter((r) => r.domain === domain).length, 1, 'the recording seam saw one fresh result')
  const again = await stack.check(domain)
  t.match(again.body, { cached: true, checked_at: responses[0]?.body.checked_at }, 'a later check within the minute is cached')
  matchesOpenApi(t, again.res)
  t.equal(web.hits.filter((h) => h.host === domain).length, 3, 'and probes nothing')
})

t.test('a result expires after CACHE_TTL_S', async (t) => {
  const short = await checkStack(t, { proxies: proxies.map((p) => p.port), connectTo: CONNECT_TO, cacheTtlS: 1 })
  const domain = 'ok.expiry.site.test'
  t.equal((await short.check(domain)).body.cached, false)
  t.equal((await short.check(domain)).body.cached, true)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await short.check(domain)).body.cached, false, 'probed again after expiry')
  t.equal(web.hits.filter((h) => h.host === domain).length, 6)
})

t.test('every check costs 5, cached or not, and is refused whole when fewer remain', async (t) => {
  const small = await checkStack(t, { proxies: proxies.map((p) => p.port), connectTo: CONNECT_TO, keyLimit: 12 })
  const first = await small.check('ok.cost.site.test')
  t.equal(first.headers['ratelimit-remaining'], '7')
  const second = await small.check('ok.cost.site.test')
  t.equal(second.body.cached, true)
  t.equal(second.headers['ratelimit-remaining'], '2', 'a cached answer costs the same')
  const third = await small.check('ok.cost.site.test')
  t.equal(third.status, 429)
  matchesOpenApi(t, third.res)
  t.equal(third.headers['ratelimit-remaining'], '2', 'a refused check consumes nothing')
})

t.test('bad requests get clear 4xx JSON', async (t) => {
  const post = (payload: string, type = 'application/json') =>
    stack.server.inject({
      method: 'POST',
      url: '/api/v1/check',
      headers: { ...bearer(stack.key), 'content-type': type },
      payload
    })
  const cases: Array<[string, string, string, number, RegExp]> = [
    ['text/plain', 'domain=example.com', 'text/plain', 415, /Unsupported Media Type/],
    ['form data', 'domain=example.com', 'application/x-www-form-urlencoded', 415, /Unsupported Media Type/],
    ['malformed JSON', '{"domain":', 'application/json', 400, /JSON/],
    ['a missing domain', '{}', 'application/json', 400, /"domain" is required/],
    ['an extra field', '{"domain":"a.com","deep":true}', 'application/json', 400, /"deep" is not allowed/],
    ['a number', '{"domain":5}', 'application/json', 400, /"domain" must be a string/],
    ['an array body', '["a.com"]', 'application/json', 400, /JSON object/],
    ['a port', '{"domain":"example.com:8080"}', 'application/json', 400, /port/],
    ['an IP literal', '{"domain":"10.0.0.1"}', 'application/json', 400, /IP address/],
    ['a single label', '{"domain":"localhost"}', 'application/json', 400, /fully qualified/],
    ['a path', '{"domain":"https://example.com/admin"}', 'application/json', 400, /path/],
    ['a body over 4 KiB', JSON.stringify({ domain: 'a'.repeat(5000) }), 'application/json', 413, /maximum/]
  ]
  for (const [title, payload, type, status, message] of cases) {
    const res = await post(payload, type)
    t.equal(res.statusCode, status, title)
    t.match(JSON.parse(res.payload), { error: message }, title)
    matchesOpenApi(t, res, title)
  }
  const wrongMethod = await stack.server.inject({ method: 'GET', url: '/api/v1/check', headers: bearer(stack.key) })
  t.equal(wrongMethod.statusCode, 405)
  matchesOpenApi(t, wrongMethod)
})

t.test('a single check and a batch read a domain given as a URL the same way', async (t) => {
  // A URL without a path is its host; one with a path, query or fragment names a page, not a site:
  // refused by both, never reduced to its host behind the caller's back.
  const rows: Array<[string, string | null]> = [
    ['http://u1.site.test', 'u1.site.test'],
    ['https://U2.Site.Test/', 'u2.site.test'],
    ['http://u3.site.test/x', null],
    ['https://u4.site.test/?q=1', null],
    ['u5.site.test/login', null]
  ]
  for (const [given, domain] of rows) {
    const single = await stack.check(given)
    const res = await stack.server.inject({
      method: 'POST',
      url: '/api/v1/checks',
      headers: { ...bearer(stack.key), 'content-type': 'application/json' },
      payload: JSON.stringify({ domains: [given] })
    })
    const [entry] = JSON.parse(res.payload).results as Array<{ domain: string; code?: string; error?: string }>
    if (domain === null) {
      t.equal(single.status, 400, `${given}: the single check refuses it`)
      t.match(
        entry,
        { domain: given, code: 'invalid_domain', error: single.body.error },
        `${given}: the batch refuses it with the same words`
      )
    } else {
      t.match(single, { status: 200, body: { domain } }, `${given}: the single check checks ${domain}`)
      t.match(entry, { domain, status: 'up' }, `${given}: so does the batch`)
    }
  }
})
