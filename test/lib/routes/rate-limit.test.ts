import t from 'tap'
import { RateLimiter } from '../../../lib/rate-limit.js'
import { migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer, testServer } from '../../helpers/server.js'

t.test('200 concurrent requests at a key with limit 60 get exactly 60 through', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url } })
  server.route({ method: 'GET', path: '/api/v1/ping', handler: () => ({ ok: true }) })
  await server.start()
  t.teardown(() => server.stop())
  const key = await issueKey({ limit: 60 })
  const responses = await Promise.all(
    Array.from({ length: 200 }, () =>
      fetch(`${server.info.uri}/api/v1/ping`, { headers: bearer(key) }).then(async (r) => ({
        status: r.status,
        headers: r.headers,
        body: await r.json()
      }))
    )
  )
  const ok = responses.filter((r) => r.status === 200)
  const refused = responses.filter((r) => r.status === 429)
  t.equal(ok.length, 60, 'exactly the limit succeeds')
  t.equal(refused.length, 140, 'every other request is refused')
  t.same(
    [...new Set(ok.map((r) => Number(r.headers.get('ratelimit-remaining'))))].sort((a, b) => a - b),
    Array.from({ length: 60 }, (_, i) => i),
    'each success saw a distinct remaining count, 59 down to 0'
  )
  for (const r of refused) {
    t.match(r.body, { error: /rate limit exceeded/ })
    const retryAfter = r.headers.get('retry-after')
    t.match(retryAfter, /^[1-9]\d*$/, 'Retry-After is whole seconds and never 0')
    t.ok(Number(retryAfter) <= 60)
    t.equal(r.headers.get('ratelimit-remaining'), '0')
  }
})

t.test('route costs, headers and the free rate_limit endpoint', async (t) => {
  let now = Date.parse('2026-11-22T10:00:00.000Z')
  const clock = () => new Date(now)
  const { db, url } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({
    db,
    env: { DATABASE_URL: url, RATE_LIMIT_PER_MIN: '10' },
    now: clock,
    limiter: new RateLimiter({ now: () => now })
  })
  server.route([
    { method: 'GET', path: '/api/v1/ping', handler: () => ({ ok: true }) },
    { method: 'POST', path: '/api/v1/costly', options: { plugins: { rateLimit: { cost: 5 } } }, handler: () => ({ ok: true }) }
  ])
  const key = await issueKey()
  const get = (path: string) => server.inject({ method: 'GET', url: path, headers: bearer(key) })
  const post = (path: string) => server.inject({ method: 'POST', url: path, headers: bearer(key) })

  const first = await get('/api/v1/ping')
  t.equal(first.statusCode, 200)
  t.equal(first.headers['ratelimit-limit'], '10', 'RATE_LIMIT_PER_MIN is the default limit')
  t.equal(first.headers['ratelimit-remaining'], '9')
  t.equal(first.headers['ratelimit-reset'], '60')

  now += 10_000
  t.equal((await post('/api/v1/costly')).headers['ratelimit-remaining'], '4', 'a cost-5 route takes 5 units')
  const budget = await get('/api/v1/rate_limit')
  t.equal(budget.statusCode, 200)
  t.same(
    JSON.parse(budget.payload),
    { limit: 10, remaining: 4, used: 6, reset_seconds: 60, reset_at: '2026-11-22T10:01:10.000Z' },
    'rate_limit reports without charging'
  )
  t.equal(budget.headers['ratelimit-remaining'], '4')
  matchesOpenApi(t, budget)

  now += 1000
  t.equal((await get('/api/v1/ping')).statusCode, 200)
  const refused = await post('/api/v1/costly')
  t.equal(refused.statusCode, 429, 'a cost of 5 is refused when 3 remain')
  t.equal(refused.headers['ratelimit-remaining'], '3', 'and consumes nothing')
  t.equal(refused.headers['retry-after'], '59', 'until the 5-unit request spent at 10 s ages out at 70 s (now is 11 s)')
  t.match(JSON.parse(refused.payload), { error: /costs 5/ })
  t.equal((await get('/api/v1/ping')).headers['ratelimit-remaining'], '2', 'single requests still fit')

  now = Date.parse('2026-11-22T10:01:10.000Z')
  t.equal((await post('/api/v1/costly')).statusCode, 200, 'admitted once enough units aged out')
})

t.test('a per-key limit overrides the default and errors carry the headers too', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url } })
  const key = await issueKey({ limit: 2 })
  const notFound = await server.inject({ method: 'GET', url: '/api/v1/rate_limit', headers: bearer(key) })
  t.equal(notFound.headers['ratelimit-limit'], '2')
  matchesOpenApi(t, notFound)
  server.route({
    method: 'GET',
    path: '/api/v1/ping/{n}',
    options: { validate: { params: (await import('joi')).default.object({ n: (await import('joi')).default.number() }) } },
    handler: () => ({ ok: true })
  })
  const bad = await server.inject({ method: 'GET', url: '/api/v1/ping/abc', headers: bearer(key) })
  t.equal(bad.statusCode, 400)
  t.equal(bad.headers['ratelimit-limit'], '2', 'a 400 on a keyed route still reports the budget')
  t.equal(bad.headers['ratelimit-remaining'], '1')
})

t.test('each request is charged once, after its body is read: a GET by the key strategy, any other method after the body', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url, RATE_LIMIT_PER_MIN: '100' } })
  // Added after the server was built, as a plugin would: they are charged all the same.
  server.route([
    { method: ['GET', 'DELETE'], path: '/api/v1/echo', handler: () => ({ ok: true }) },
    { method: 'POST', path: '/api/v1/echo', options: { payload: { allow: 'application/json' } }, handler: () => ({ ok: true }) }
  ])
  const key = await issueKey()
  const remaining = async (method: string, headers: Record<string, string> = {}, payload?: string) => {
    const res = await server.inject({ method, url: '/api/v1/echo', headers: { ...bearer(key), ...headers }, payload })
    return [res.statusCode, res.headers['ratelimit-remaining']]
  }
  t.same(await remaining('GET'), [200, '99'], 'a GET costs one unit')
  t.same(await remaining('DELETE'), [200, '98'], 'a DELETE of the same route costs one, not two')
  t.same(await remaining('GET'), [200, '97'], 'and the GET still one')
  t.same(await remaining('POST', { 'content-type': 'application/json' }, '{}'), [200, '96'], 'a POST costs one')
  t.same(await remaining('POST', { 'content-type': 'application/json' }, '{"a":'), [400, '96'], 'malformed JSON costs nothing')
  t.same(await remaining('POST', { 'content-type': 'text/plain' }, 'x'), [415, '96'], 'a wrong content type costs nothing')
  t.same(
    await remaining('POST', { 'content-type': 'application/json' }, `"${'x'.repeat(5000)}"`),
    [413, '96'],
    'a body over the limit costs nothing'
  )
})
