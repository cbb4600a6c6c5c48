import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { RateLimiter } from '../../../lib/rate-limit.js'
import { SharedRateLimiter } from '../../../lib/sharing/rate-limit.js'
import type { Db } from '../../../lib/store/db.js'
import { migratedDb } from '../../helpers/db.js'
import { until } from '../../helpers/poll.js'
import { redisDb, sharedRedis } from '../../helpers/redis.js'
import { bearer, testServer, type TestServer } from '../../helpers/server.js'

const REDIS_DB = 1

/** An instance of the service as far as limits go: a server with its own Redis connections and shared window. */
async function instance(
  t: Test,
  db: Db,
  url: string,
  redisUrl: string
): Promise<TestServer & { fallback: RateLimiter; limiter: SharedRateLimiter }> {
  const { redis } = await sharedRedis(t, redisUrl)
  const fallback = new RateLimiter()
  const limiter = new SharedRateLimiter({ redis, fallback })
  const made = await testServer({ db, env: { DATABASE_URL: url }, limiter })
  made.server.route([
    { method: 'GET', path: '/api/v1/ping', handler: () => ({ ok: true }) },
    { method: 'POST', path: '/api/v1/costly', options: { plugins: { rateLimit: { cost: 5 } } }, handler: () => ({ ok: true }) }
  ])
  await made.server.start()
  t.teardown(() => made.server.stop())
  return { ...made, fallback, limiter }
}

t.test('two instances on one Redis admit exactly the limit between them, and refused requests consume nothing', async (t) => {
  const redisUrl = await redisDb(t, REDIS_DB)
  const { db, url } = await migratedDb('sqlite', t)
  const a = await instance(t, db, url, redisUrl)
  const b = await instance(t, db, url, redisUrl)
  const key = await a.issueKey({ limit: 60 })
  const responses = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      fetch(`${(i % 2 === 0 ? a : b).server.info.uri}/api/v1/ping`, { headers: bearer(key) }).then(async (r) => ({
        status: r.status,
        remaining: Number(r.headers.get('ratelimit-remaining')),
        retryAfter: r.headers.get('retry-after')
      }))
    )
  )
  const ok = responses.filter((r) => r.status === 200)
  t.equal(ok.length, 60, 'exactly the limit is admitted across both instances')
  t.equal(responses.filter((r) => r.status === 429).length, 140, 'every other request is refused')
  t.equal(a.limiter.refused + b.limiter.refused, 140, 'and each instance counts the refusals it answered (for /metrics)')
  t.same(
    [...new Set(ok.map((r) => r.remaining))].sort((x, y) => x - y),
    Array.from({ length: 60 }, (_, i) => i),
    'each admitted request saw a distinct remaining count: one window, not two'
  )
  for (const r of responses.filter((r) => r.status === 429)) t.match(r.retryAfter, /^[1-9]\d*$/)
  for (const instance of [a, b]) {
    const budget = await instance.server.inject({ url: '/api/v1/rate_limit', headers: bearer(key) })
    t.match(JSON.parse(budget.payload), { limit: 60, remaining: 0, used: 60 }, '140 refusals consumed nothing, as either instance sees')
  }
  t.equal(a.fallback.peek(String(1), 60).remaining, 60, 'the in-memory window was never used')
})

t.test('a refused costly request leaves its units for cheaper ones on the other instance', async (t) => {
  const redisUrl = await redisDb(t, REDIS_DB)
  const { db, url } = await migratedDb('sqlite', t)
  const a = await instance(t, db, url, redisUrl)
  const b = await instance(t, db, url, redisUrl)
  const key = await a.issueKey({ limit: 10 })
  const ping = (s: TestServer) => s.server.inject({ url: '/api/v1/ping', headers: bearer(key) })
  const costly = (s: TestServer) => s.server.inject({ method: 'POST', url: '/api/v1/costly', headers: bearer(key) })
  t.equal((await costly(a)).headers['ratelimit-remaining'], '5')
  for (let i = 0; i < 2; i++) t.equal((await ping(b)).statusCode, 200)
  const refused = await costly(b)
  t.equal(refused.statusCode, 429, 'a cost of 5 does not fit in the 3 left')
  t.equal(refused.headers['ratelimit-remaining'], '3', 'and took none of them')
  t.match(refused.headers['retry-after'], /^(59|60)$/, 'it fits once the first request ages out')
  for (let i = 0; i < 3; i++) t.equal((await ping(a)).statusCode, 200, 'the 3 units are spent on the other instance')
  t.equal((await ping(b)).statusCode, 429)
  const other = await a.issueKey({ limit: 10 })
  t.equal(
    (await a.server.inject({ url: '/api/v1/ping', headers: bearer(other) })).headers['ratelimit-remaining'],
    '9',
    'keys have their own windows'
  )
})

t.test('the shared window: refunds, costs over the limit, and keys that expire', async (t) => {
  const redisUrl = await redisDb(t, REDIS_DB)
  const { redis } = await sharedRedis(t, redisUrl)
  const limiter = new SharedRateLimiter({ redis })
  const first = await limiter.take('k', 10, 5)
  const second = await limiter.take('k', 10, 5)
  t.match(first, { allowed: true, remaining: 5, resetMs: 60_000 })
  t.type(first.token, 'string', 'an admission carries the entry a refund removes')
  t.equal((await limiter.take('k', 10, 1)).allowed, false, 'full')
  t.equal((await limiter.refund('k', 10, first)).remaining, 5, "the first request's units are back")
  t.equal((await limiter.refund('k', 10, first)).remaining, 5, 'and are not given twice')
  t.equal((await limiter.take('k', 10, 5)).allowed, true)
  t.equal((await limiter.take('k', 10, 0)).allowed, true, 'cost 0 is always admitted')
  const part = await limiter.take('other', 100, 50)
  const left = await limiter.refund('other', 100, part, 15)
  t.match(left, { remaining: 65, cost: 35, admittedAt: part.admittedAt }, 'a part of an admission is refunded')
  t.not(left.token, part.token, 'what is left is an entry of its own')
  t.equal((await limiter.refund('other', 100, part, 15)).remaining, 65, 'the old entry is gone: nothing is given twice')
  t.equal((await limiter.refund('other', 100, left)).remaining, 100, 'and the rest by what is left')
  const over = await limiter.take('k', 10, 11)
  t.match(over, { allowed: false, retryAfterMs: 60_000 }, 'a cost above the whole limit never fits: a minute to wait')
  const peek = await limiter.peek('k', 10)
  t.match(peek, { remaining: 0, allowed: true }, 'peek charges nothing')
  t.ok(second.admittedAt !== undefined && peek.resetMs <= 60_000 && peek.resetMs > 0)

  const check = new Redis(redisUrl)
  t.teardown(() => {
    check.disconnect()
  })
  const keys = (await check.keys('*')).sort()
  t.same(
    keys.filter((k) => k.includes(':k:')),
    ['site-status:rl:k:entries', 'site-status:rl:k:totals'],
    'everything lives under the prefix'
  )
  t.ok(keys.every((k) => k.startsWith('site-status:rl:')))
  for (const name of keys) {
    const ttl = await check.pttl(name)
    t.ok(ttl > 0 && ttl <= 60_000, `${name} expires a window after the newest admission`)
  }
  await limiter.peek('idle', 10)
  t.equal(await check.exists('site-status:rl:idle:totals', 'site-status:rl:idle:entries'), 0, 'a key never charged leaves nothing')
})

t.test('the shared window slides: units come back a window after they were admitted, not before', async (t) => {
  const redisUrl = await redisDb(t, REDIS_DB)
  const { redis } = await sharedRedis(t, redisUrl)
  const windowMs = 600
  const limiter = new SharedRateLimiter({ redis, windowMs })
  const first = await limiter.take('k', 3, 2)
  t.equal(first.allowed, true)
  t.equal((await limiter.take('k', 3, 1)).allowed, true)
  const refused = await limiter.take('k', 3, 2)
  t.equal(refused.allowed, false, 'full')
  t.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= windowMs, 'it fits once the first admission ages out')
  const admitted = await until(
    () => limiter.take('k', 3, 2),
    (state) => state.allowed,
    10_000,
    10
  )
  t.equal(admitted.allowed, true, 'admitted once the first admission aged out')
  // Both times are the limiter's own clock (Redis TIME), which decides: no reading of the test's.
  const aged = (admitted.admittedAt ?? 0) - (first.admittedAt ?? Infinity)
  t.ok(aged >= windowMs, `not before the first admission aged out (${aged} ms after it, window ${windowMs} ms)`)
  // The second admission (1 unit, a moment after the first) may have aged out too by the time of the poll.
  t.ok(admitted.remaining === 0 || admitted.remaining === 1, `the new two units are counted (remaining ${admitted.remaining})`)
  const check = new Redis(redisUrl)
  t.teardown(() => {
    check.disconnect()
  })
  t.equal(Number(await check.hget('site-status:rl:k:totals', 'used')), 3 - admitted.remaining, 'the total follows the entries')
  t.equal(await check.zcard('site-status:rl:k:entries'), admitted.remaining === 0 ? 2 : 1, 'aged-out entries are dropped')
})
