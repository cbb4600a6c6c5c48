import t, { type Test } from 'tap'
import { setTimeout as sleepFor } from 'node:timers/promises'
import type { Request, Server } from '@hapi/hapi'
import { SiteStatusClient } from '../../../lib/client/index.js'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import { Admission } from '../../../lib/probing/admission.js'
import { CheckSupervisor, type Prober } from '../../../lib/probing/supervisor.js'
import { RateLimiter } from '../../../lib/rate-limit.js'
import { migratedDb } from '../../helpers/db.js'
import { turnsUntil } from '../../helpers/fake-clock.js'
import { bearer, testServer } from '../../helpers/server.js'

// The client's budget and retries against the real server: its rate limiter, its admission of
// checks, its Retry-After and RateLimit-* headers. The probes answer nothing (the checks' results
// are not the subject); the clocks are the real one, or one the server and the client share.

interface Seen {
  path: string
  status: number
  /** performance.now() when the request reached the server. */
  at: number
  retryAfter: string | undefined
  /** The domain of a check. */
  domain: string | undefined
}

/** Every request the server answers: its path, status, arrival time and Retry-After. */
function watchAnswers(server: Server): Seen[] {
  const seen: Seen[] = []
  const arrivals = new WeakMap<Request, number>()
  server.ext('onRequest', (request, h) => {
    arrivals.set(request, performance.now())
    return h.continue
  })
  server.events.on('response', (request) => {
    // By now an error is a response too, its headers as the error named them.
    const response = request.response as unknown as { statusCode: number; headers: Record<string, string> }
    const status = response.statusCode
    const retryAfter = Object.entries(response.headers).find(([name]) => name.toLowerCase() === 'retry-after')?.[1]
    const domain = (request.payload as { domain?: string } | null)?.domain
    seen.push({ path: request.path, status, at: arrivals.get(request) ?? 0, retryAfter, domain })
  })
  return seen
}

async function listening(t: Test, server: Server): Promise<string> {
  await server.start()
  t.teardown(() => server.stop())
  return `http://127.0.0.1:${server.info.port}`
}

/** The in-memory states the sites list is answered from (none tracked). */
const noSites = () => new SiteStates({ intervalMs: 60_000, publicUrl: 'https://status.example.net' })

const quietChecks = (prober: Prober = { probeAll: async () => [] }, admission?: Admission) =>
  new CheckSupervisor({ prober, admission, cacheTtlS: 0, policy: { allowPrivate: true }, connectTo: [] })

t.test('a key with a small per-minute limit: the client waits for its budget, and the server refuses nothing', async (t) => {
  // A minute of the server's limiter lasts a second here; the client keeps the same clock and
  // sleeps by it, so its waits are real waits of a shorter minute.
  const SCALE = 60
  const start = Date.now()
  const now = () => start + (Date.now() - start) * SCALE
  const limiter = new RateLimiter({ now })
  const { db } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, limiter, checks: quietChecks(), states: noSites() })
  const seen = watchAnswers(server)
  const baseUrl = await listening(t, server)
  const key = await issueKey({ limit: 10 })
  const waits: number[] = []
  const client = new SiteStatusClient({
    baseUrl,
    key,
    now,
    sleep: (ms, signal) => {
      waits.push(ms)
      return sleepFor(ms / SCALE, undefined, { signal })
    }
  })

  // 30 units against a limit of 10 a minute, all asked for at once.
  const calls = [
    ...Array.from({ length: 20 }, () => client.listSites()),
    client.checkDomain('a.example.com'),
    client.checkDomain('b.example.com')
  ]
  const answers = await Promise.all(calls)
  t.equal(answers.length, 22, 'every call answered')
  t.equal(limiter.refused, 0, 'the server refused nothing')
  t.same(
    seen.filter((s) => s.status !== 200).map((s) => s.status),
    [],
    'no 429 was sent'
  )
  const looks = seen.filter((s) => s.path === '/api/v1/rate_limit').length
  t.equal(looks, 1, 'the calls behind the first asked the free budget route once, rather than wait for the first answer')
  t.equal(seen.length - looks, 22, 'one request per call: nothing was retried')
  t.ok(waits.length >= 2, `the client waited for its budget (${waits.length} waits)`)
  t.ok(
    waits.every((ms) => ms <= 61_000),
    'each wait at most until RateLimit-Reset'
  )
})

t.test('a 429 with Retry-After is waited, not hammered', async (t) => {
  // The limiter's clock runs 59 s ahead once the budget is spent, so that the window frees up
  // about a second later by the real clock the client waits with.
  let skewMs = 0
  const limiter = new RateLimiter({ now: () => Date.now() + skewMs })
  const { db } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, limiter, states: noSites() })
  const seen = watchAnswers(server)
  const baseUrl = await listening(t, server)
  const key = await issueKey({ limit: 5 })
  // Another consumer of the same key spends its budget: the client cannot know.
  for (let i = 0; i < 5; i++) t.equal((await server.inject({ url: '/api/v1/sites', headers: bearer(key) })).statusCode, 200)
  skewMs = 59_000
  seen.length = 0

  const client = new SiteStatusClient({ baseUrl, key })
  t.match(await client.listSites(), { sites: [] })
  t.same(
    seen.map((s) => s.status),
    [429, 200],
    'refused once, then admitted'
  )
  const [refused, retried] = seen as [Seen, Seen]
  const retryAfterMs = Number(refused.retryAfter) * 1000
  t.ok(retryAfterMs >= 1000, `with Retry-After (${refused.retryAfter} s)`)
  // A timer may fire a millisecond before its time by performance.now().
  t.ok(retried.at - refused.at >= retryAfterMs - 2, `the retry came ${Math.round(retried.at - refused.at)} ms after the 429, no sooner`)

  t.test('and when Retry-After is longer than the client may wait, the call fails at once', async (t) => {
    for (let i = 0; i < 4; i++) await server.inject({ url: '/api/v1/sites', headers: bearer(key) })
    seen.length = 0
    const impatient = new SiteStatusClient({ baseUrl, key, maxRetryWaitMs: 100 })
    await t.rejects(impatient.listSites(), { name: 'SiteStatusError', status: 429, code: 'rate_limited', retryAfterS: Number })
    t.same(
      seen.map((s) => s.status),
      [429],
      'one request, no retry'
    )
  })
})

t.test('a check refused over capacity (503 with Retry-After) is retried once a slot is free', async (t) => {
  // One on-demand slot, held by another key's check until the test releases it.
  const admission = new Admission({ capacity: 2, keyShare: 1, maxCheckMs: 1000 })
  let release = (): void => {}
  const prober: Prober = {
    probeAll: (domain) =>
      domain === 'held.example.com'
        ? new Promise((resolve) => {
            release = () => {
              resolve([])
            }
          })
        : Promise.resolve([])
  }
  const { db } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, checks: quietChecks(prober, admission) })
  const seen = watchAnswers(server)
  const baseUrl = await listening(t, server)
  const [key, other] = [await issueKey({ limit: 100 }), await issueKey({ name: 'other', limit: 100 })]
  const held = server.inject({
    method: 'POST',
    url: '/api/v1/check',
    headers: { ...bearer(other), 'content-type': 'application/json' },
    payload: JSON.stringify({ domain: 'held.example.com' })
  })
  await turnsUntil(() => admission.stats().demand === 1)
  // Once the server has refused the client, the held check ends and frees the slot.
  server.events.on('response', (request) => {
    if (request.path === '/api/v1/check' && seen.some((s) => s.status === 503)) release()
  })

  const client = new SiteStatusClient({ baseUrl, key })
  t.match(await client.checkDomain('free.example.com'), { domain: 'free.example.com' })
  await held
  const mine = seen.filter((s) => s.domain === 'free.example.com')
  t.same(
    mine.map((s) => s.status),
    [503, 200],
    "the client's check refused, then admitted"
  )
  const [refused, retried] = mine as [Seen, Seen]
  const retryAfterMs = Number(refused.retryAfter) * 1000
  t.ok(retried.at - refused.at >= retryAfterMs - 2, `the retry waited Retry-After (${refused.retryAfter} s)`)
  t.match(await client.getRateLimit(), { remaining: 95 }, 'the refused check cost nothing; the admitted one 5')
})
