import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { Scheduler, type ScheduledSite } from '../../../lib/monitoring/scheduler.js'
import { nextPace, PACE_RULE, StartBucket } from '../../../lib/monitoring/start-pace.js'

t.test('the pace on starts: cut while the loop runs late, raised while it is quick, lifted once it no longer binds', async (t) => {
  const { highMs, lowMs, floorPerS } = PACE_RULE
  const cases: Array<[string, number | null, number, number, number | null]> = [
    ['no limit and a quick loop: still none', null, lowMs - 1, 900, null],
    ['no limit and a loop between the thresholds: still none', null, (highMs + lowMs) / 2, 900, null],
    ['a late loop cuts to three quarters of what was started', null, highMs + 1, 1000, 750],
    ['a late loop with a limit above the starts cuts from the starts', 2000, highMs + 20, 1000, 750],
    ['a late loop with a limit below the starts cuts from the limit', 800, highMs + 20, 1000, 600],
    ['never below the floor', 60, highMs + 50, 60, floorPerS],
    ['between the thresholds the limit holds', 600, (highMs + lowMs) / 2, 600, 600],
    ['a quick loop raises it by a tenth and one', 600, lowMs - 1, 600, 661],
    ['a limit well above the starts is lifted', 600, lowMs - 1, 200, null]
  ]
  for (const [name, limit, delay, started, expected] of cases) t.equal(nextPace(limit, delay, started), expected, name)
})

t.test('the start bucket allows the limit per second, half a second of it at once', async (t) => {
  const bucket = new StartBucket()
  t.ok(bucket.take(0), 'unlimited at first')
  bucket.set(100, 0)
  let taken = 0
  while (bucket.take(0)) taken++
  t.equal(taken, 0, 'a new limit starts with an empty bucket')
  let at = 0
  for (; at < 10_000; at += 10) if (bucket.take(at)) taken++
  t.ok(taken >= 995 && taken <= 1000, `about 100 a second over 10 s (${taken})`)
  at += 5000
  taken = 0
  while (bucket.take(at)) taken++
  t.equal(taken, 50, 'after a pause, half a second of starts at once, no more')
  bucket.set(null, at)
  t.ok(bucket.take(at), 'lifted')
})

const INTERVAL = 10_000
const sites = (n: number): ScheduledSite[] => Array.from({ length: n }, (_, i) => ({ id: i + 1, domain: `site${i + 1}.example.com` }))

t.test(
  'while the event loop runs late, scheduled starts slow down and what cannot start is shed; they recover when it is quick',
  async (t) => {
    const clock = FakeTimers.install({ now: 1_000_000 * INTERVAL, toFake: ['setInterval', 'clearInterval'] })
    t.teardown(() => {
      clock.uninstall()
    })
    let delay = 5
    const started: number[] = []
    const lateness: number[] = []
    // 2,000 sites every 10 s: 200 due a second; each check is done at once.
    const scheduler = new Scheduler({
      intervalMs: INTERVAL,
      concurrency: 500,
      now: () => clock.now,
      listSites: async () => sites(2000),
      runCheck: async (_site, dueAt) => {
        started.push(clock.now)
        lateness.push(clock.now - dueAt)
      },
      loopDelayP99Ms: () => delay
    })
    await scheduler.start()
    await clock.tickAsync(2 * INTERVAL)
    t.equal(scheduler.stats().pace, null, 'a quick loop: no limit')
    const before = scheduler.stats()
    t.equal(before.shed, 0, 'and nothing shed')

    delay = PACE_RULE.highMs + 30
    await clock.tickAsync(10_000)
    const paced = scheduler.stats()
    t.ok(paced.pace !== null && paced.pace <= 150, `a late loop cut the pace below the 200 due a second (${paced.pace?.toFixed(0)})`)
    const from = clock.now
    const startedBefore = lateness.length
    await clock.tickAsync(3 * INTERVAL)
    const latest = Math.max(...lateness.slice(startedBefore))
    t.ok(latest <= 5000, `what the pace lets start is on time: the latest started ${latest} ms after due`)
    const startedPerS = (started.filter((at) => at > from).length * 1000) / (3 * INTERVAL)
    t.ok(
      startedPerS <= PACE_RULE.floorPerS * 1.1,
      `starts held near the floor while the loop stays late (${startedPerS.toFixed(0)} a second)`
    )
    const late = scheduler.stats()
    t.ok(late.shed > before.shed, `the checks that could not start within an interval were shed (${late.shed})`)
    t.ok(late.queued <= 2000, 'nothing piles up beyond one per site')

    delay = 1
    await clock.tickAsync(6 * INTERVAL)
    t.equal(scheduler.stats().pace, null, 'a quick loop again: the limit grew until it no longer bound, then was lifted')
    const shedAfter = scheduler.stats().shed
    await clock.tickAsync(2 * INTERVAL)
    t.equal(scheduler.stats().shed, shedAfter, 'and nothing is shed any more')
    await scheduler.stop()
  }
)

t.test('without a loop-delay reading the starts are never limited', async (t) => {
  const clock = FakeTimers.install({ now: 1_000_000 * INTERVAL, toFake: ['setInterval', 'clearInterval'] })
  t.teardown(() => {
    clock.uninstall()
  })
  const scheduler = new Scheduler({
    intervalMs: INTERVAL,
    concurrency: 500,
    now: () => clock.now,
    listSites: async () => sites(2000),
    runCheck: async () => {}
  })
  await scheduler.start()
  await clock.tickAsync(3 * INTERVAL)
  t.match(scheduler.stats(), { pace: null, shed: 0, started: 6000 })
  await scheduler.stop()
})
