/**
 * Memory stays flat under load: the on-demand check cache must not hold expired results until its
 * 10,000-entry bound evicts them, or a stream of new domains grows it for minutes.
 */
import t, { type Test } from 'tap'
import FakeTimers, { type Clock } from '@sinonjs/fake-timers'
import type { LocationResult } from '../../lib/probing/locations/index.js'
import { CheckSupervisor, type Prober } from '../../lib/probing/supervisor.js'

const prober: Prober = {
  async probeAll(domain: string): Promise<LocationResult[]> {
    return [1, 2, 3].map((n) => ({
      location: `L ${n}, X`,
      status: 'up',
      http_code: 200,
      response_ms: 10,
      error: null,
      final_url: `https://${domain}/`,
      timings: { dns: 0, connect: 1, tls: 1, first_byte: 1, total: 10 }
    }))
  }
}

/** The cache's clock (performance.now, and the timer lru-cache uses to refresh its reading) on a fake the test moves. */
function fakeTimers(t: Test): Clock {
  const clock = FakeTimers.install({ toFake: ['performance', 'setTimeout', 'clearTimeout'] })
  t.teardown(() => {
    clock.uninstall()
  })
  // lru-cache takes a start time of 0 for "no TTL": the fake clock must not begin there.
  clock.tick(1000)
  return clock
}

t.test('expired on-demand results are purged as new ones are stored', async (t) => {
  const clock = fakeTimers(t)
  const ttlS = 0.2
  const checks = new CheckSupervisor({
    prober,
    cacheTtlS: ttlS,
    policy: { allowPrivate: true },
    connectTo: [],
    lookup: async () => ['8.8.8.8']
  })
  for (let i = 0; i < 50; i++) await checks.check(`old-${i}.example.com`)
  t.equal(checks.cachedOutcomes(), 50, 'fresh results are kept')
  t.equal((await checks.check('old-1.example.com')).cached, true, 'and reused')
  // Past two TTLs every old result has expired and a purge is due.
  await clock.tickAsync(ttlS * 2000 + 100)
  await checks.check('new.example.com')
  t.equal(checks.cachedOutcomes(), 1, 'storing a new result dropped the 50 expired ones')
  t.equal((await checks.check('new.example.com')).cached, true, 'the new one is reused')
  t.equal((await checks.check('old-2.example.com')).cached, false, 'an expired one is checked afresh')
})

t.test('with many new domains the cache holds about what two TTLs bring, not its 10,000 bound', async (t) => {
  const clock = fakeTimers(t)
  const ttlS = 0.1
  const checks = new CheckSupervisor({
    prober,
    cacheTtlS: ttlS,
    policy: { allowPrivate: true },
    connectTo: [],
    lookup: async () => ['8.8.8.8']
  })
  let most = 0
  let n = 0
  // 20 TTLs, a round every 10 ms: at a steady rate the cache holds at most two TTLs' worth, a tenth
  // of the domains here.
  const started = performance.now()
  for (let round = 0; round < 100 || performance.now() - started < 20 * ttlS * 1000; round++) {
    for (let i = 0; i < 20; i++) await checks.check(`d-${n++}.example.com`)
    most = Math.max(most, checks.cachedOutcomes())
    await clock.tickAsync(10)
  }
  t.ok(
    most < n / 3,
    `the cache held at most ${most} results of ${n} checked over ${Math.round((performance.now() - started) / (ttlS * 1000))} TTLs`
  )
})
