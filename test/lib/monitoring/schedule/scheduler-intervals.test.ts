import t, { type Test } from 'tap'
import FakeTimers, { type Clock } from '@sinonjs/fake-timers'
import { Scheduler, phaseOf, type ScheduledSite } from '../../../../lib/monitoring/schedule/scheduler.js'

const DEFAULT = 60_000
const SHORT = 30_000
const LONG = 300_000
/** A moment at the top of every interval used here. */
const T0 = 1_000_000 * LONG

/** The scheduler's timers on a fake clock the test moves; nothing else in the process is faked. */
function fakeTimers(t: Test, now = T0): Clock {
  const clock = FakeTimers.install({ now, toFake: ['setInterval', 'clearInterval'] })
  t.teardown(() => {
    clock.uninstall()
  })
  return clock
}

/** Every check's due time by site, and the most checks of one site running at once. */
function recorder(clock: Clock) {
  const dues = new Map<number, number[]>()
  const running = new Map<number, number>()
  let most = 0
  return {
    dues: (id: number): number[] => dues.get(id) ?? [],
    get most() {
      return most
    },
    runCheck: (site: ScheduledSite, dueAt: number): Promise<void> => {
      dues.set(site.id, [...(dues.get(site.id) ?? []), dueAt])
      const now = (running.get(site.id) ?? 0) + 1
      running.set(site.id, now)
      most = Math.max(most, now)
      // A check takes a second of the fake clock.
      return new Promise((resolve) => {
        clock.setTimeout(() => {
          running.set(site.id, (running.get(site.id) ?? 1) - 1)
          resolve()
        }, 1000)
      })
    }
  }
}

const gaps = (dues: readonly number[]): number[] => dues.slice(1).map((d, i) => d - (dues[i] as number))

t.test('each site is checked once per its own interval, at its phase in it', async (t) => {
  const clock = fakeTimers(t)
  const checks = recorder(clock)
  const list: ScheduledSite[] = [
    { id: 1, domain: 'short-a.example.com', interval_s: 30 },
    { id: 2, domain: 'short-b.example.com', interval_s: 30 },
    { id: 3, domain: 'default-a.example.com', interval_s: null },
    { id: 4, domain: 'default-b.example.com', interval_s: 60 },
    { id: 5, domain: 'long-a.example.com', interval_s: 300 },
    { id: 6, domain: 'long-b.example.com', interval_s: 300 }
  ]
  const scheduler = new Scheduler({
    intervalMs: DEFAULT,
    concurrency: 100,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: checks.runCheck
  })
  await scheduler.start()
  await clock.tickAsync(3 * LONG)
  const stopping = scheduler.stop()
  await clock.tickAsync(1000)
  await stopping
  for (const site of list) {
    const intervalMs = (site.interval_s ?? 60) * 1000
    const dues = checks.dues(site.id)
    t.equal(dues.length, (3 * LONG) / intervalMs, `${site.domain}: ${dues.length} checks in 15 minutes`)
    t.ok(
      gaps(dues).every((g) => g === intervalMs),
      `${site.domain}: one interval of its own apart`
    )
    t.ok(
      dues.every((d) => (d - T0) % intervalMs === phaseOf(site.domain, intervalMs)),
      `${site.domain}: at its phase in its interval`
    )
  }
  const stats = scheduler.stats()
  t.match(stats, { started: 30 + 30 + 15 + 15 + 3 + 3, skipped: 0, shed: 0, late: 0, sites: 6 })
})

t.test("the last minute's checks due a second add up each site's own interval", async (t) => {
  const clock = fakeTimers(t)
  const list: ScheduledSite[] = [
    ...Array.from({ length: 60 }, (_, i) => ({ id: i + 1, domain: `short${i}.example.com`, interval_s: 30 })),
    ...Array.from({ length: 60 }, (_, i) => ({ id: i + 100, domain: `long${i}.example.com`, interval_s: 300 }))
  ]
  const scheduler = new Scheduler({
    intervalMs: DEFAULT,
    concurrency: 1000,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: async () => {}
  })
  await scheduler.start()
  await clock.tickAsync(2 * LONG)
  const load = scheduler.load()
  // 60 sites every 30 s and 60 every 300 s: 2.2 a second, where one interval for all would say 2.
  t.ok(load.duePerS >= 2.1 && load.duePerS <= 2.3, `due per second ${load.duePerS}`)
  t.ok(load.runPerS >= 2.1 && load.runPerS <= 2.3, `run per second ${load.runPerS}`)
  await scheduler.stop()
})

/** A domain whose phase in `intervalMs` lies between `from` and `to`. */
function domainAt(prefix: string, intervalMs: number, from: number, to: number): string {
  for (let n = 0; ; n++) {
    const phase = phaseOf(`${prefix}${n}.example.com`, intervalMs)
    if (phase >= from && phase < to) return `${prefix}${n}.example.com`
  }
}

t.test('a site whose interval shortens is checked within its new interval, then at its phase in it', async (t) => {
  const clock = fakeTimers(t)
  const checks = recorder(clock)
  // Due a minute into each 300 s interval; its phase in 30 s is past the middle of those.
  const domain = domainAt('shortened', LONG, 60_000, 61_000)
  let list: ScheduledSite[] = [{ id: 1, domain, interval_s: 300 }]
  const scheduler = new Scheduler({
    intervalMs: DEFAULT,
    concurrency: 10,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: checks.runCheck
  })
  await scheduler.start()
  // 300 s after its first check it would be due again; the interval becomes 30 s 100 s after it.
  await clock.tickAsync(phaseOf(domain, LONG) + 100_000)
  t.same(checks.dues(1), [T0 + phaseOf(domain, LONG)], 'checked once at its phase in 300 s')
  const changedAt = clock.now
  list = [{ id: 1, domain, interval_s: 30 }]
  await scheduler.refreshNow()
  await clock.tickAsync(SHORT)
  const after = checks.dues(1).slice(1)
  t.equal(after.length, 1, 'checked once in the 30 s after the change')
  t.ok(
    (after[0] as number) > changedAt && (after[0] as number) <= changedAt + SHORT,
    `${(after[0] as number) - changedAt} ms after the change`
  )
  await clock.tickAsync(LONG)
  const later = checks.dues(1).slice(1)
  t.equal(later.length, 11, 'then every 30 s')
  t.ok(
    gaps(later).every((g) => g === SHORT),
    '30 s apart'
  )
  t.ok(
    later.every((d) => d % SHORT === phaseOf(domain, SHORT)),
    'at its phase in 30 s'
  )
  t.equal(checks.most, 1, 'never two checks of the site at once')
  await scheduler.stop()
})

t.test('a site whose interval lengthens is not checked again for half its new interval, then at its phase in it', async (t) => {
  const clock = fakeTimers(t)
  const checks = recorder(clock)
  // Its phase in 300 s comes soon after the change (less than half of 300 s after its last check).
  const domain = domainAt('lengthened', LONG, 80_000, 90_000)
  let list: ScheduledSite[] = [{ id: 1, domain, interval_s: 30 }]
  const scheduler = new Scheduler({
    intervalMs: DEFAULT,
    concurrency: 10,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: checks.runCheck
  })
  await scheduler.start()
  // Lengthened to 300 s 5 s after its second check: the 30 s interval's next one is not run.
  await clock.tickAsync(SHORT + phaseOf(domain, SHORT) + 5000)
  const before = checks.dues(1)
  t.same(gaps(before), [SHORT], 'checked every 30 s')
  const last = before.at(-1) as number
  list = [{ id: 1, domain, interval_s: 300 }]
  await scheduler.refreshNow()
  await clock.tickAsync(LONG / 2 - 5000 - 1)
  t.equal(checks.dues(1).length, 2, 'no check for half the new interval after the last')
  await clock.tickAsync(3 * LONG)
  const after = checks.dues(1).slice(2)
  t.ok(
    (after[0] as number) - last >= LONG / 2 && (after[0] as number) - last < 1.5 * LONG,
    `next check ${(after[0] as number) - last} ms after the last`
  )
  t.ok(
    after.every((d) => d % LONG === phaseOf(domain, LONG)),
    'at its phase in 300 s'
  )
  t.ok(
    gaps(after).every((g) => g === LONG),
    'then 300 s apart'
  )
  t.ok(after.length >= 3, `${after.length} checks in the 15 minutes after`)
  await scheduler.stop()
})

t.test('a site changing interval while its check runs is not started twice, and none is lost on the way', async (t) => {
  const clock = fakeTimers(t)
  const releases: Array<() => void> = []
  const dues: number[] = []
  let list: ScheduledSite[] = [{ id: 1, domain: 'busy.example.com', interval_s: 300 }]
  const scheduler = new Scheduler({
    intervalMs: DEFAULT,
    concurrency: 10,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: (_site, dueAt) => {
      dues.push(dueAt)
      return new Promise<void>((resolve) => releases.push(resolve))
    }
  })
  await scheduler.start()
  await clock.tickAsync(LONG)
  t.equal(dues.length, 1, 'its check runs (and hangs)')
  list = [{ id: 1, domain: 'busy.example.com', interval_s: 30 }]
  await scheduler.refreshNow()
  await clock.tickAsync(LONG / 2)
  t.equal(dues.length, 1, 'not started again while it runs')
  t.ok(scheduler.stats().skipped >= 1, 'its due times meanwhile are skipped')
  for (const release of releases.splice(0)) release()
  await clock.tickAsync(SHORT)
  t.equal(dues.length, 2, 'once it ends, checked at its new interval')
  for (const release of releases.splice(0)) release()
  await scheduler.stop()
})

t.test('a new site whose interval changes before its first check is checked once, at its new interval', async (t) => {
  const clock = fakeTimers(t)
  const checks = recorder(clock)
  // Another site keeps the 300 s wheel turning meanwhile.
  let list: ScheduledSite[] = [{ id: 1, domain: 'old.example.com', interval_s: 300 }]
  const scheduler = new Scheduler({
    intervalMs: DEFAULT,
    refreshMs: 3_600_000,
    concurrency: 10,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: checks.runCheck
  })
  await scheduler.start()
  await clock.tickAsync(DEFAULT)
  // Added while running, its phase in 300 s just passed: a first check is placed within the interval.
  // Then changed at once, twice: that first check, left on the wheel it came from, must not run.
  const domain = domainAt('new', LONG, 0, 50_000)
  list = [...list, { id: 2, domain, interval_s: 300 }]
  await scheduler.refreshNow()
  list = [...list.slice(0, 1), { id: 2, domain, interval_s: 30 }]
  await scheduler.refreshNow()
  list = [...list.slice(0, 1), { id: 2, domain, interval_s: 300 }]
  await scheduler.refreshNow()
  const addedAt = clock.now
  await clock.tickAsync(LONG)
  const dues = checks.dues(2)
  t.equal(dues.length, 1, 'checked once in its first 300 s')
  t.ok((dues[0] as number) >= addedAt && (dues[0] as number) <= addedAt + LONG, 'within its interval')
  await clock.tickAsync(2 * LONG)
  t.ok(
    checks
      .dues(2)
      .slice(1)
      .every((d) => d % LONG === phaseOf(domain, LONG)),
    'then at its phase'
  )
  await scheduler.stop()
})
