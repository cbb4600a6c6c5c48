import http from 'node:http'
import t from 'tap'
import { bearer } from '../../helpers/server.js'
import { checkStack, type CheckStack } from '../../helpers/check-stack.js'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { closedPort, serveOnLoopback } from '../../helpers/targets.js'
import type { Expectations } from '../../../lib/rules/expectations.js'

// Each site answers by its Host: the status and body the tests expect things of.
const SITES: Record<string, { status: number; body: string; delayMs?: number }> = {
  'keyword.site.test': { status: 200, body: '<h1>Welcome</h1> <a>Sign in</a>' },
  'nokeyword.site.test': { status: 200, body: '<h1>Welcome</h1>' },
  'auth.site.test': { status: 401, body: 'unauthorised' },
  'slow.site.test': { status: 200, body: 'ok', delayMs: 300 }
}
const hits = new Map<string, number>()
const target = http.createServer((req, res) => {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '')
  hits.set(host, (hits.get(host) ?? 0) + 1)
  const site = SITES[host] ?? { status: 200, body: 'ok' }
  setTimeout(() => res.writeHead(site.status).end(site.body), site.delayMs ?? 0)
})
const port = await serveOnLoopback(t, target)
const closed = await closedPort()
const CONNECT_TO = `:443:127.0.0.1:${closed},:80:127.0.0.1:${port}`

/** The fields a check result had before expectations: an answer without `expect` has exactly these. */
const PLAIN_FIELDS = [
  'blocked',
  'cached',
  'checked_at',
  'domain',
  'locations',
  'locations_answered',
  'locations_total',
  'partial',
  'response_ms',
  'status'
]

async function check(stack: CheckStack, payload: unknown, url = '/api/v1/check') {
  const res = await stack.server.inject({
    method: 'POST',
    url,
    headers: { ...bearer(stack.key), 'content-type': 'application/json' },
    payload: JSON.stringify(payload)
  })
  return { status: res.statusCode, body: JSON.parse(res.payload), res }
}

/** Tracked sites' own expectations, as the service's in-memory states give them to the supervisor. */
const TRACKED: Record<string, Expectations> = {
  'tracked.site.test': { status: null, body_contains: 'Sign in', max_response_ms: 60_000 }
}

for (const engine of engines()) {
  t.test(`on-demand checks with expectations (${engine})`, async (t) => {
    const stack = await checkStack(t, {
      proxies: [null, null, null],
      connectTo: CONNECT_TO,
      engine,
      siteExpect: (domain) => TRACKED[domain] ?? null
    })

    t.test("a tracked site's check is judged by its own settings, and recorded only when judged so", async (t) => {
      const recorded = stack.results.length
      const own = await check(stack, { domain: 'tracked.site.test' })
      matchesOpenApi(t, own.res)
      t.match(own.body, { status: 'down', slow: false }, 'its body lacks the keyword its settings ask for')
      for (const l of own.body.locations) t.match(l, { status: 'down', error: 'expect: body_contains not found' })
      t.equal(stack.results.length, recorded + 1, 'recorded: judged as the site is judged')
      const same = await check(stack, { domain: 'tracked.site.test', expect: { body_contains: 'Sign in', max_response_ms: 60_000 } })
      t.match(same.body, { status: 'down', cached: true }, 'the same expectations share its result')
      const other = await check(stack, { domain: 'tracked.site.test', expect: { status: ['200-299'] } })
      t.match(other.body, { status: 'up', cached: false })
      t.notOk('slow' in other.body, 'judged by the check’s expectations alone')
      t.equal(stack.results.length, recorded + 1, 'a result judged by other expectations is not recorded')
    })

    t.test('a body without the keyword is down at every location, with it up', async (t) => {
      const missing = await check(stack, { domain: 'nokeyword.site.test', expect: { body_contains: 'Sign in' } })
      t.equal(missing.status, 200)
      matchesOpenApi(t, missing.res)
      t.equal(missing.body.status, 'down')
      t.equal(missing.body.locations.length, 3)
      for (const l of missing.body.locations) {
        t.match(l, { status: 'down', http_code: 200, error: 'expect: body_contains not found' })
      }
      const found = await check(stack, { domain: 'keyword.site.test', expect: { body_contains: 'Sign in' } })
      matchesOpenApi(t, found.res)
      t.equal(found.body.status, 'up')
      for (const l of found.body.locations) t.match(l, { status: 'up', error: null })
    })

    t.test('a status list decides the final status', async (t) => {
      const listed = await check(stack, { domain: 'auth.site.test', expect: { status: [401] } })
      matchesOpenApi(t, listed.res)
      t.equal(listed.body.status, 'up')
      for (const l of listed.body.locations) t.match(l, { status: 'up', http_code: 401, error: null })
      const unlisted = await check(stack, { domain: 'auth.site.test', expect: { status: ['200-299'] } })
      matchesOpenApi(t, unlisted.res)
      t.equal(unlisted.body.status, 'down')
      t.equal(unlisted.body.cached, false, 'not the result judged by the other list')
      for (const l of unlisted.body.locations) t.match(l, { status: 'down', http_code: 401, error: 'expect: status 401' })
    })

    t.test('max_response_ms says slow, and only when given', async (t) => {
      const slow = await check(stack, { domain: 'slow.site.test', expect: { max_response_ms: 100 } })
      matchesOpenApi(t, slow.res)
      t.match(slow.body, { status: 'up', slow: true })
      t.ok(slow.body.response_ms > 100)
      const patient = await check(stack, { domain: 'slow.site.test', expect: { max_response_ms: 60_000 } })
      t.match(patient.body, { status: 'up', slow: false, cached: false })
      const plain = await check(stack, { domain: 'slow.site.test' })
      t.notOk('slow' in plain.body, 'no slow field without max_response_ms')
    })

    t.test('checks with different expectations share no result; the same ones do', async (t) => {
      const domain = 'cache.site.test'
      const before = hits.get(domain) ?? 0
      const first = await check(stack, { domain, expect: { body_contains: 'ok' } })
      const other = await check(stack, { domain, expect: { body_contains: 'okay' } })
      t.match(first.body, { status: 'up', cached: false })
      t.match(other.body, { status: 'down', cached: false })
      // The same expectations in another spelling have the same normal form.
      const again = await check(stack, { domain, expect: { body_contains: 'ok', status: null } })
      t.match(again.body, { status: 'up', cached: true })
      const plain = await check(stack, { domain })
      t.match(plain.body, { status: 'up', cached: false }, 'a check without expect does not reuse one with')
      const empty = await check(stack, { domain, expect: {} })
      t.match(empty.body, { cached: true }, 'an empty expect is no expectation')
      t.equal((hits.get(domain) ?? 0) - before, 3 * 3, 'three probe runs of three locations')
    })

    t.test('a check without expect answers as before and is recorded; one with it is not', async (t) => {
      const recorded = stack.results.length
      const plain = await check(stack, { domain: 'plain.site.test' })
      matchesOpenApi(t, plain.res)
      t.same(Object.keys(plain.body).sort(), PLAIN_FIELDS)
      t.equal(stack.results.length, recorded + 1, 'handed to the recorder')
      await check(stack, { domain: 'judged.site.test', expect: { body_contains: 'ok' } })
      t.equal(stack.results.length, recorded + 1, 'a result judged by the check’s own expectations is not')
    })

    t.test('a bad expect is a clear 400', async (t) => {
      const cases: Array<[unknown, RegExp]> = [
        [{ status: [99] }, /"expect.status" must list status codes/],
        [{ status: ['300-200'] }, /"expect.status" must list status codes/],
        [{ body_contains: '' }, /"expect.body_contains" must not be empty/],
        [{ body_contains: 'x'.repeat(257) }, /at most 256 bytes/],
        [{ max_response_ms: '2000' }, /"expect.max_response_ms" must be a whole number/],
        [{ timeout: 5 }, /"expect" may hold only/],
        ['Sign in', /"expect" must be an object/]
      ]
      for (const [expect, message] of cases) {
        const res = await check(stack, { domain: 'keyword.site.test', expect })
        t.equal(res.status, 400, JSON.stringify(expect))
        t.match(res.body.error, message)
        matchesOpenApi(t, res.res)
      }
    })

    t.test('a batch takes one expect for all its domains', async (t) => {
      const res = await check(
        stack,
        { domains: ['keyword.site.test', 'nokeyword.site.test'], expect: { body_contains: 'Sign in', max_response_ms: 60_000 } },
        '/api/v1/checks'
      )
      t.equal(res.status, 200)
      matchesOpenApi(t, res.res)
      const byDomain = Object.fromEntries((res.body.results as Array<{ domain: string }>).map((r) => [r.domain, r]))
      t.match(byDomain['keyword.site.test'], { status: 'up', slow: false })
      t.match(byDomain['nokeyword.site.test'], { status: 'down', slow: false })
    })
  })
}
