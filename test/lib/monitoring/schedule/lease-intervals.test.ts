import t, { type Test } from 'tap'
import FakeTimers, { type Clock } from '@sinonjs/fake-timers'
import { addSites } from '../../../../lib/monitoring/add-sites.js'
import { LeaseScheduler } from '../../../../lib/monitoring/schedule/lease-scheduler.js'
import { phaseOf } from '../../../../lib/monitoring/schedule/phase-wheel.js'
import { toDate, type Db } from '../../../../lib/store/db.js'
import { migratedDb } from '../../../helpers/db.js'

// Leases are how several instances share one MySQL database (SQLite keeps one instance and its
// phase wheels): these run on MySQL, as the other lease tests do.
const DEFAULT = 60_000
const SHORT = 30_000
const LONG = 300_000
/** Midnight: the top of every interval used here. */
const T0 = Date.parse('2026-12-01T00:00:00.000Z')

interface Run {
  domain: string
  dueAt: number
}

/**
 * A lease scheduler on a fake clock (its ticks and beats; its claim rounds are driven here) over
 * `sites`, each with its own interval (null: the default), checks recording their time on the row
 * as the recorder would.
 */
async function leaseScheduler(t: Test, sites: Array<[string, number | null]>) {
  const { db } = await migratedDb('mysql', t)
  await addSites({ db, entries: sites.map(([domain]) => ({ domain, name: null })), now: new Date(T0 - 1000) })
  for (const [domain, intervalS] of sites) await setInterval(db, domain, intervalS, T0 - 1000)
  const clock: Clock = FakeTimers.install({ now: T0, toFake: ['setInterval', 'clearInterval'] })
  const runs: Run[] = []
  const writes = new Set<Promise<unknown>>()
  const scheduler = new LeaseScheduler({
    db,
    owner: 'a',
    intervalMs: DEFAULT,
    now: () => clock.now,
    concurrency: 50,
    tracked: () => true,
    learn: async () => {},
    sites: () => sites.length,
    runCheck: async (site, dueAt) => {
      runs.push({ domain: site.domain, dueAt })
      const write = db('sites')
        .where({ id: site.id })
        .update({ checked_at: new Date(clock.now) })
      writes.add(write)
      await write
      writes.delete(write)
    }
  })
  t.teardown(async () => {
    await scheduler.stop()
    clock.uninstall()
  })
  await scheduler.start()
  /**
   * Moves the clock to `end`: a claim round at each second where a check falls due (both awaited, so
   * that one began at this very moment), the ticks that hand the claimed checks over, and a jump
   * over the seconds where nothing is due.
   */
  const runUntil = async (end: number): Promise<void> => {
    while (clock.now < end) {
      await scheduler.refreshNow()
      await scheduler.refreshNow()
      await clock.tickAsync(Math.min(1000, end - clock.now))
      await Promise.all(writes)
      const next = toDate((await db('sites').whereNull('removed_at').min({ at: 'due_at' }).first())?.at)?.getTime() ?? end
      const to = Math.min(end, next - 1000)
      if (to > clock.now) await clock.tickAsync(to - clock.now)
    }
  }
  const dues = (domain: string): number[] => runs.filter((r) => r.domain === domain).map((r) => r.dueAt)
  return { db, clock, scheduler, runUntil, dues }
}

/** Gives the site `domain` its own interval, as the sites API does (a change bumps `changed_at`). */
async function setInterval(db: Db, domain: string, intervalS: number | null, at: number): Promise<void> {
  await db('sites')
    .where({ domain })
    .update({ interval_s: intervalS, changed_at: new Date(at) })
}

/** A domain whose phase in `intervalMs` lies between `from` and `to`. */
function domainAt(prefix: string, intervalMs: number, from: number, to: number): string {
  for (let n = 0; ; n++) {
    const phase = phaseOf(`${prefix}${n}.example.com`, intervalMs)
    if (phase >= from && phase < to) return `${prefix}${n}.example.com`
  }
}

const gaps = (dues: readonly number[]): number[] => dues.slice(1).map((d, i) => d - (dues[i] as number))

t.test('each site is claimed and checked once per its own interval, at its phase in it', async (t) => {
  const sites: Array<[string, number | null]> = [
    ['short-a.example.com', 30],
    ['short-b.example.com', 30],
    ['default-a.example.com', null],
    ['default-b.example.com', 60],
    ['long-a.example.com', 300],
    ['long-b.example.com', 300]
  ]
  const { runUntil, dues } = await leaseScheduler(t, sites)
  await runUntil(T0 + 2 * LONG)
  for (const [domain, intervalS] of sites) {
    const intervalMs = (intervalS ?? 60) * 1000
    const got = dues(domain)
    t.equal(got.length, (2 * LONG) / intervalMs, `${domain}: ${got.length} checks in 10 minutes`)
    t.ok(
      gaps(got).every((g) => g === intervalMs),
      `${domain}: one interval of its own apart`
    )
    t.ok(
      got.every((d) => (d - T0) % intervalMs === phaseOf(domain, intervalMs)),
      `${domain}: at its phase`
    )
  }
})

t.test('the load is each site once per its own interval, and follows a change of interval', async (t) => {
  const sites: Array<[string, number | null]> = [
    ...Array.from({ length: 30 }, (_, i): [string, number] => [`short${i}.example.com`, 30]),
    ...Array.from({ length: 30 }, (_, i): [string, number] => [`long${i}.example.com`, 300])
  ]
  const { db, clock, scheduler } = await leaseScheduler(t, sites)
  // 30 sites every 30 s and 30 every 300 s: 1.1 a second, where one interval for all would say 1.
  t.equal(scheduler.load().duePerS, 1.1)
  for (let i = 0; i < 30; i++) await setInterval(db, `long${i}.example.com`, null, clock.now)
  await scheduler.refreshNow()
  t.equal(scheduler.load().duePerS, 1.5, 'the 300 s sites back at the default 60 s')
})

t.test('a site whose interval shortens is checked within its new interval, then at its phase in it', async (t) => {
  const domain = domainAt('shortened', LONG, 10_000, 20_000)
  const { db, clock, scheduler, runUntil, dues } = await leaseScheduler(t, [[domain, 300]])
  // 300 s after its first check it would be due again; the interval becomes 30 s 100 s after it.
  await runUntil(T0 + phaseOf(domain, LONG) + 100_000)
  t.same(dues(domain), [T0 + phaseOf(domain, LONG)], 'checked once at its phase in 300 s')
  const changedAt = clock.now
  await setInterval(db, domain, 30, changedAt)
  await scheduler.refreshNow()
  await runUntil(changedAt + SHORT)
  const after = dues(domain).slice(1)
  t.equal(after.length, 1, 'checked once in the 30 s after the change')
  t.ok(
    (after[0] as number) > changedAt && (after[0] as number) <= changedAt + SHORT,
    `${(after[0] as number) - changedAt} ms after the change`
  )
  await runUntil(changedAt + SHORT + LONG)
  const later = dues(domain).slice(1)
  t.equal(later.length, 11, 'then every 30 s')
  t.ok(
    gaps(later).every((g) => g === SHORT),
    '30 s apart'
  )
  t.ok(
    later.every((d) => d % SHORT === phaseOf(domain, SHORT)),
    'at its phase in 30 s'
  )
})

t.test('a site whose interval lengthens is not checked again for half its new interval, then at its phase in it', async (t) => {
  // Its phase in 300 s comes soon after the change (less than half of 300 s after its last check).
  const domain = domainAt('lengthened', LONG, 80_000, 90_000)
  const { db, clock, scheduler, runUntil, dues } = await leaseScheduler(t, [[domain, 30]])
  // Lengthened to 300 s 5 s after its second check: the 30 s interval's next one is not run.
  await runUntil(T0 + SHORT + phaseOf(domain, SHORT) + 5000)
  const before = dues(domain)
  t.same(gaps(before), [SHORT], 'checked every 30 s')
  const last = before.at(-1) as number
  await setInterval(db, domain, 300, clock.now)
  await scheduler.refreshNow()
  await runUntil(last + LONG / 2 - 1)
  t.equal(dues(domain).length, 2, 'no check for half the new interval after the last')
  await runUntil(last + 3 * LONG)
  const after = dues(domain).slice(2)
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
  t.ok(after.length >= 2, `${after.length} checks in the 15 minutes after`)
})
