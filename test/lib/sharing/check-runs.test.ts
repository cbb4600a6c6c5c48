import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import type { LocationResult } from '../../../lib/probing/locations/index.js'
import { CheckSupervisor, type Outcome, type Prober } from '../../../lib/probing/supervisor.js'
import { SharedCheckRuns } from '../../../lib/sharing/check-runs.js'
import type { Db } from '../../../lib/store/db.js'
import { migratedDb } from '../../helpers/db.js'
import { holds } from '../../helpers/poll.js'
import { redisDb, sharedRedis } from '../../helpers/redis.js'
import { bearer, testServer, type TestServer } from '../../helpers/server.js'

const REDIS_DB = 2

/** The target as every instance's locations see it: counts the probe runs, which end when the test says. */
class Target implements Prober {
  runs: string[] = []
  #release: () => void = () => {}
  #gate: Promise<void> = Promise.resolve()

  hold(): void {
    this.#gate = new Promise((resolve) => {
      this.#release = resolve
    })
  }

  release(): void {
    this.#release()
  }

  async probeAll(domain: string): Promise<LocationResult[]> {
    this.runs.push(domain)
    await this.#gate
    return [1, 2, 3].map((n) => ({
      location: `L ${n}, X`,
      status: 'up',
      http_code: 200,
      response_ms: 10 + this.runs.length,
      error: null,
      final_url: `https://${domain}/`,
      timings: { dns: 0, connect: 1, tls: 1, first_byte: 1, total: 10 }
    }))
  }
}

/** One instance: its own Redis connections, supervisor (with its own lru-cache and admission-free runs) and server. */
async function instance(
  t: Test,
  db: Db,
  url: string,
  redisUrl: string,
  target: Target,
  runMs = 5000
): Promise<TestServer & { shared: SharedCheckRuns<Outcome> }> {
  const { redis } = await sharedRedis(t, redisUrl)
  const shared = new SharedCheckRuns<Outcome>({ redis, ttlMs: 60_000, runMs })
  t.teardown(() => {
    shared.close()
  })
  const checks = new CheckSupervisor({
    prober: target,
    cacheTtlS: 60,
    policy: { allowPrivate: true },
    connectTo: [],
    lookup: async () => ['8.8.8.8'],
    shared
  })
  return { ...(await testServer({ db, env: { DATABASE_URL: url, RATE_LIMIT_PER_MIN: '1000' }, checks })), shared }
}

async function twoInstances(t: Test, runMs?: number) {
  const redisUrl = await redisDb(t, REDIS_DB)
  const { db, url } = await migratedDb('sqlite', t)
  const target = new Target()
  const a = await instance(t, db, url, redisUrl, target, runMs)
  const b = await instance(t, db, url, redisUrl, target, runMs)
  const key = await a.issueKey()
  const check = async (s: TestServer, domain: string) => {
    const r = await s.server.inject({ method: 'POST', url: '/api/v1/check', headers: bearer(key), payload: { domain } })
    return { status: r.statusCode, body: JSON.parse(r.payload) as { cached: boolean; checked_at: string; response_ms: number } }
  }
  return { redisUrl, target, a, b, check }
}

t.test('concurrent checks of one domain through two instances share one probe run', async (t) => {
  const { target, a, b, check } = await twoInstances(t)
  target.hold()
  const answers = Array.from({ length: 10 }, (_, i) => check(i % 2 === 0 ? a : b, 'shared.example.com'))
  t.ok(await holds(() => target.runs.length > 0, 5000), 'a probe run started')
  const waits = () => [a, b].map((s) => s.shared.waiting('shared.example.com'))
  t.ok(await holds(() => waits().includes(1), 5000), 'the other instance waits for that run')
  t.same(waits().sort(), [0, 1], 'one instance runs it, the other waits (its five checks as one)')
  target.release()
  const results = await Promise.all(answers)
  t.same(target.runs, ['shared.example.com'], 'the target was probed once for all ten checks')
  t.same(new Set(results.map((r) => r.status)), new Set([200]))
  t.equal(new Set(results.map((r) => r.body.checked_at)).size, 1, 'every check answered with that one run')
  t.same(new Set(results.map((r) => r.body.cached)), new Set([false]), 'a fresh result for each: none was reused from before')

  const later = await check(b, 'shared.example.com')
  t.equal(later.body.cached, true, 'a later check on either instance reuses it')
  t.equal(later.body.checked_at, results[0]?.body.checked_at)
  t.equal(target.runs.length, 1)
})

t.test('a result checked on one instance is reused by the other', async (t) => {
  const { target, a, b, check } = await twoInstances(t)
  const first = await check(a, 'one.example.com')
  t.equal(first.body.cached, false)
  const second = await check(b, 'one.example.com')
  t.equal(second.body.cached, true, 'reused by the other instance')
  t.equal(second.body.checked_at, first.body.checked_at)
  t.equal((await check(b, 'one.example.com')).body.cached, true, 'and then from its own memory')
  t.same(target.runs, ['one.example.com'])
  t.equal((await check(b, 'two.example.com')).body.cached, false, 'another domain is its own')
})

t.test('a run whose instance went away is waited for only as long as its lock lasts, then probed here', async (t) => {
  const { redisUrl, target, b, check } = await twoInstances(t, 1000)
  const raw = new Redis(redisUrl)
  t.teardown(() => {
    raw.disconnect()
  })
  // Another instance took the run and died before answering: its lock lasts its run time.
  await raw.set('site-status:check-run:orphan.example.com', 'gone', 'PX', 1000)
  const answer = await check(b, 'orphan.example.com')
  t.equal(answer.status, 200)
  t.equal(answer.body.cached, false)
  t.same(target.runs, ['orphan.example.com'], 'probed once the lock expired')

  // A lock deleted without a result (its instance stopped cleanly) is taken again at the next look.
  await raw.set('site-status:check-run:stopped.example.com', 'gone', 'PX', 60_000)
  const waiting = check(b, 'stopped.example.com')
  t.ok(await holds(() => b.shared.waiting('stopped.example.com') === 1, 5000), 'the check waits for that run')
  t.same(target.runs, ['orphan.example.com'], 'not probed while the other run holds the lock')
  await raw.del('site-status:check-run:stopped.example.com')
  t.equal((await waiting).status, 200)
  t.same(target.runs, ['orphan.example.com', 'stopped.example.com'])
})
