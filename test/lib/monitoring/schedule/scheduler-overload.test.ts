import t, { type Test } from 'tap'
import FakeTimers, { type Clock } from '@sinonjs/fake-timers'
import { Scheduler, type ScheduledSite } from '../../../../lib/monitoring/schedule/scheduler.js'
import type { ScheduleLoad } from '../../../../lib/monitoring/schedule/schedule-load.js'

const INTERVAL = 60_000

const sites = (n: number, from = 1): ScheduledSite[] =>
  Array.from({ length: n }, (_, i) => ({ id: from + i, domain: `site${from + i}.example.com` }))

/** The scheduler's timers on a fake clock the test moves; nothing else in the process is faked. */
function fakeTimers(t: Test): Clock {
  const clock = FakeTimers.install({ now: 1_000_000 * INTERVAL, toFake: ['setInterval', 'clearInterval'] })
  t.teardown(() => {
    clock.uninstall()
  })
  return clock
}

/** Checks that take `ms` of fake time each, recording how late each one started. */
function timedChecks(clock: Clock, ms: number) {
  const lateness: number[] = []
  return {
    lateness,
    runCheck: (_site: ScheduledSite, dueAt: number): Promise<void> => {
      lateness.push(clock.now - dueAt)
      return new Promise((resolve) => {
        clock.setTimeout(() => {
          resolve()
        }, ms)
      })
    }
  }
}

/** Stops the scheduler, letting the fake clock run the checks in flight to their end. */
async function stopWith(clock: Clock, scheduler: Scheduler): Promise<void> {
  const stopping = scheduler.stop()
  await clock.tickAsync(INTERVAL)
  await stopping
}

t.test('a check that cannot start within one interval of its due time is shed, not kept waiting', async (t) => {
  const clock = fakeTimers(t)
  const releases: Array<() => void> = []
  const started: Array<{ id: number; late: number }> = []
  const scheduler = new Scheduler({
    intervalMs: INTERVAL,
    concurrency: 1,
    now: () => clock.now,
    listSites: async () => sites(3),
    runCheck: (site, dueAt) => {
      started.push({ id: site.id, late: clock.now - dueAt })
      return new Promise<void>((resolve) => releases.push(resolve))
    }
  })
  await scheduler.start()
  await clock.tickAsync(INTERVAL)
  t.match(scheduler.stats(), { started: 1, running: 1, queued: 2, shed: 0, skipped: 0 })
  let maxQueued = 0
  for (let i = 0; i < 10; i++) {
    await clock.tickAsync(INTERVAL)
    maxQueued = Math.max(maxQueued, scheduler.stats().queued)
  }
  t.equal(maxQueued, 2, 'one waiting check per site at most, however long the slot stays taken')
  t.match(
    scheduler.stats(),
    { started: 1, queued: 2, skipped: 10, shed: 20 },
    'each interval the running site is skipped and both waiting checks are shed for fresher ones'
  )
  releases.shift()?.()
  await clock.tickAsync(1)
  t.equal(started.length, 2)
  t.ok((started[1]?.late ?? Infinity) < INTERVAL, `the next check started ${started[1]?.late} ms after due, within one interval`)
  for (const release of releases.splice(0)) release()
  await scheduler.stop()
})

t.test('the queue is bounded: past maxQueued a due check is shed at once', async (t) => {
  const clock = fakeTimers(t)
  const releases: Array<() => void> = []
  const scheduler = new Scheduler({
    intervalMs: INTERVAL,
    concurrency: 2,
    maxQueued: 5,
    now: () => clock.now,
    listSites: async () => sites(20),
    runCheck: () => new Promise<void>((resolve) => releases.push(resolve))
  })
  await scheduler.start()
  await clock.tickAsync(INTERVAL)
  t.match(scheduler.stats(), { started: 2, running: 2, queued: 5, shed: 13 })
  t.match(scheduler.stats().lastMinute, { due: 20, started: 2, shed: 13, behind: true })
  for (const release of releases.splice(0)) release()
  await clock.tickAsync(1)
  t.match(scheduler.stats(), { started: 4, queued: 3 }, 'the waiting ones start as slots free up')
  for (const release of releases.splice(0)) release()
  await scheduler.stop()
})

t.test('past capacity: checks that start do so within an interval, and one warning a minute tells the figures', async (t) => {
  const clock = fakeTimers(t)
  // 120 sites a minute, one slot, a second per check: capacity is half the load.
  const checks = timedChecks(clock, 1000)
  const warnings: Array<{ at: number; load: ScheduleLoad }> = []
  const scheduler = new Scheduler({
    intervalMs: INTERVAL,
    concurrency: 1,
    now: () => clock.now,
    listSites: async () => sites(120),
    runCheck: checks.runCheck,
    onBehind: (load) => warnings.push({ at: clock.now, load })
  })
  await scheduler.start()
  await clock.tickAsync(6 * INTERVAL)
  const stats = scheduler.stats()
  t.ok(stats.shed > 0, `${stats.shed} checks shed`)
  t.ok(Math.max(...checks.lateness) < INTERVAL, `no check started an interval or more after due (worst ${Math.max(...checks.lateness)} ms)`)
  t.ok(stats.queued <= 120, 'at most one waiting check per site')
  t.ok(warnings.length >= 5 && warnings.length <= 6, `${warnings.length} warnings in 6 minutes`)
  for (let i = 1; i < warnings.length; i++) {
    t.ok((warnings[i]?.at as number) - (warnings[i - 1]?.at as number) >= 60_000, 'never two within a minute')
  }
  const last = stats.lastMinute
  t.equal(last.seconds, 60)
  t.ok(last.duePerS >= 1.9 && last.duePerS <= 2.1, `due per second ${last.duePerS}, about 120 a minute`)
  t.ok(last.runPerS >= 0.9 && last.runPerS <= 1.1, `run per second ${last.runPerS}, one check a second`)
  t.ok(last.shed + last.skipped > 0 && last.behind, 'behind, with what was dropped')
  const warned = warnings.at(-1)?.load
  t.ok(warned !== undefined && warned.behind && warned.duePerS >= 1.9 && warned.runPerS <= 1.1, 'the warning carries the same figures')
  await stopWith(clock, scheduler)
})

t.test('within capacity: not behind and no warning; behind ends a minute after the load drops', async (t) => {
  const clock = fakeTimers(t)
  const checks = timedChecks(clock, 1000)
  let list = sites(60)
  let warnings = 0
  const scheduler = new Scheduler({
    intervalMs: INTERVAL,
    refreshMs: 1000,
    concurrency: 10,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: checks.runCheck,
    onBehind: () => {
      warnings++
    }
  })
  await scheduler.start()
  await clock.tickAsync(3 * INTERVAL)
  t.match(scheduler.stats(), { shed: 0, late: 0, skipped: 0 })
  t.match(scheduler.stats().lastMinute, { due: 60, started: 60, behind: false })
  t.equal(warnings, 0, 'nothing said while keeping up')

  list = sites(2000)
  await clock.tickAsync(2 * INTERVAL)
  t.equal(scheduler.load().behind, true, 'behind while 2,000 sites need more than 10 slots can run')
  t.ok(warnings >= 1, 'and said so')
  list = sites(60)
  // The sites still tracked start late while the queue drains, for a few seconds at ten a second.
  await clock.tickAsync(INTERVAL + 15_000)
  t.equal(scheduler.load().behind, false, 'no longer behind once a minute has passed with nothing late or shed')
  const said = warnings
  await clock.tickAsync(2 * INTERVAL)
  t.equal(warnings, said, 'and silent again')
  await stopWith(clock, scheduler)
})
