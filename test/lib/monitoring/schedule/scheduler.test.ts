import t, { type Test } from 'tap'
import FakeTimers, { type Clock } from '@sinonjs/fake-timers'
import { Scheduler, phaseOf, type ScheduledSite } from '../../../../lib/monitoring/schedule/scheduler.js'

const sites = (n: number, from = 1): ScheduledSite[] =>
  Array.from({ length: n }, (_, i) => ({ id: from + i, domain: `site${from + i}.example.com` }))

/** The scheduler's timers on a fake clock the test moves; nothing else in the process is faked. */
function fakeTimers(t: Test, now = 0): Clock {
  const clock = FakeTimers.install({ now, toFake: ['setInterval', 'clearInterval'] })
  t.teardown(() => {
    clock.uninstall()
  })
  return clock
}

/** Lets every promise settle, so a released check has finished and the next one in the queue has started. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Checks that hang until the test releases them, oldest first. */
function gate() {
  const waiting: Array<() => void> = []
  return {
    wait: () => new Promise<void>((resolve) => waiting.push(resolve)),
    releaseOne: async () => {
      waiting.shift()?.()
      await flush()
    },
    releaseAll: () => {
      for (const resolve of waiting.splice(0)) resolve()
    }
  }
}

t.test('every site is checked once per interval, at due times spread across it', async (t) => {
  const startedAt = 1_000_123
  const clock = fakeTimers(t, startedAt)
  const dues = new Map<number, number[]>()
  let early = 0
  const list = sites(100)
  const scheduler = new Scheduler({
    intervalMs: 500,
    tickMs: 10,
    concurrency: 1000,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: async (site, dueAt) => {
      if (clock.now < dueAt) early++
      dues.set(site.id, [...(dues.get(site.id) ?? []), dueAt])
    }
  })
  await scheduler.start()
  await clock.tickAsync(2100)
  await scheduler.stop()
  const intervals = (clock.now - startedAt) / 500
  for (const site of list) {
    const d = dues.get(site.id) ?? []
    t.ok(
      d.length >= Math.floor(intervals) - 1 && d.length <= Math.ceil(intervals) + 1,
      `${site.domain} ran ${d.length} times in ${intervals.toFixed(1)} intervals`
    )
    for (let i = 1; i < d.length; i++) t.equal((d[i] as number) - (d[i - 1] as number), 500, 'one interval apart')
  }
  t.equal(early, 0, 'no check started before it was due')
  const firstSoon = [...dues.values()].filter((d) => (d[0] as number) < startedAt + 100).length
  t.ok(firstSoon <= 40, `no burst at start: ${firstSoon} of 100 sites were first due within 100 ms`)
  const slices = new Array<number>(10).fill(0)
  for (const d of dues.values()) for (const due of d) slices[Math.floor((due % 500) / 50)] = (slices[Math.floor((due % 500) / 50)] ?? 0) + 1
  const total = slices.reduce((a, b) => a + b, 0)
  t.ok(Math.max(...slices) <= total * 0.3, `no tenth of the interval holds more than 30% of starts: ${slices.join(' ')}`)
  const stats = scheduler.stats()
  t.equal(stats.late, 0)
  t.equal(stats.onTime, stats.started)
  t.equal(stats.skipped, 0)
})

t.test('a domain keeps its phase across scheduler instances started at different times', async (t) => {
  const phases = async (at: number): Promise<Map<string, number>> => {
    const clock = FakeTimers.install({ now: at, toFake: ['setInterval', 'clearInterval'] })
    const seen = new Map<string, number>()
    let retro = 0
    try {
      const s = new Scheduler({
        intervalMs: 60_000,
        tickMs: 5,
        concurrency: 100,
        now: () => clock.now,
        listSites: async () => sites(30),
        runCheck: async (site, dueAt) => {
          if (dueAt <= at) retro++
          if (!seen.has(site.domain)) seen.set(site.domain, dueAt % 60_000)
        }
      })
      await s.start()
      await clock.tickAsync(70_000)
      await s.stop()
    } finally {
      clock.uninstall()
    }
    t.equal(retro, 0, 'at start every site waits for its phase, none is due in the past')
    return seen
  }
  const first = await phases(1_000_000)
  const second = await phases(7_654_321)
  t.equal(first.size, 30, 'every site was checked within an interval')
  t.same(second, first)
  t.ok(new Set(first.values()).size >= 25, 'different domains get different phases')
  t.equal(first.get('site1.example.com'), phaseOf('site1.example.com', 60_000))
})

t.test('concurrency is bounded and due sites wait their turn in order', async (t) => {
  const clock = fakeTimers(t)
  const hang = gate()
  let running = 0
  let max = 0
  const order: number[] = []
  const scheduler = new Scheduler({
    intervalMs: 60_000,
    tickMs: 5,
    concurrency: 3,
    now: () => clock.now,
    listSites: async () => sites(10),
    runCheck: async (_site, dueAt) => {
      order.push(dueAt)
      max = Math.max(max, ++running)
      await hang.wait()
      running--
    }
  })
  await scheduler.start()
  await clock.tickAsync(60_000)
  t.match(scheduler.stats(), { started: 3, running: 3, queued: 7 })
  for (let i = 0; i < 7; i++) await hang.releaseOne()
  t.match(scheduler.stats(), { started: 10, running: 3, queued: 0 })
  t.equal(max, 3, 'never more than 3 at once')
  t.same(
    order,
    [...order].sort((a, b) => a - b),
    'started in the order they fell due'
  )
  hang.releaseAll()
  await scheduler.stop()
})

t.test('a few hanging checks do not stop other sites being checked', async (t) => {
  const clock = fakeTimers(t)
  const hang = gate()
  const checked = new Map<number, number>()
  const scheduler = new Scheduler({
    intervalMs: 400,
    tickMs: 5,
    concurrency: 5,
    now: () => clock.now,
    listSites: async () => sites(40),
    runCheck: async (site) => {
      checked.set(site.id, (checked.get(site.id) ?? 0) + 1)
      if (site.id <= 3) await hang.wait()
      else
        await new Promise<void>((resolve) => {
          clock.setTimeout(() => {
            resolve()
          }, 2)
        })
    }
  })
  await scheduler.start()
  await clock.tickAsync(1100)
  const others = sites(37, 4).filter((s) => (checked.get(s.id) ?? 0) >= 2).length
  t.equal(others, 37, 'every other site was checked at least twice while three hung')
  for (const id of [1, 2, 3]) t.equal(checked.get(id), 1, `hanging site ${id} was not started again`)
  t.ok(scheduler.stats().skipped >= 3, 'the hanging sites were counted as skipped when due again')
  hang.releaseAll()
  const stopping = scheduler.stop()
  await clock.tickAsync(2)
  await stopping
})

t.test('a site due again while running or queued is skipped or replaced, never queued twice', async (t) => {
  const clock = fakeTimers(t)
  const hang = gate()
  const scheduler = new Scheduler({
    intervalMs: 60_000,
    tickMs: 5,
    concurrency: 1,
    now: () => clock.now,
    listSites: async () => sites(2),
    runCheck: () => hang.wait()
  })
  await scheduler.start()
  await clock.tickAsync(60_000)
  t.match(scheduler.stats(), { started: 1, running: 1, queued: 1, skipped: 0 })
  await clock.tickAsync(120_000)
  t.match(
    scheduler.stats(),
    { started: 1, queued: 1, skipped: 2, shed: 2 },
    'both sites due twice more: the running one skipped twice, the waiting one shed twice for its fresher check'
  )
  await hang.releaseOne()
  await hang.releaseOne()
  t.match(scheduler.stats(), { started: 2, running: 0, queued: 0, skipped: 2, shed: 2 })
  await scheduler.stop()
})

t.test('sites added or removed are picked up at the next refresh, new ones at their phase', async (t) => {
  const clock = fakeTimers(t)
  let list = sites(5)
  const count = new Map<number, number>()
  const scheduler = new Scheduler({
    intervalMs: 60_000,
    refreshMs: 10,
    tickMs: 5,
    concurrency: 100,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: async (site) => {
      count.set(site.id, (count.get(site.id) ?? 0) + 1)
    }
  })
  await scheduler.start()
  await clock.tickAsync(60_000)
  t.same([...count.values()], [1, 1, 1, 1, 1])
  list = [...sites(4), ...sites(3, 100)]
  await clock.tickAsync(10)
  t.equal(scheduler.stats().sites, 7, 'the next refresh read the new list')
  t.notOk(
    [100, 101, 102].some((id) => count.has(id)),
    'new sites are not started in a burst'
  )
  await clock.tickAsync(60_000)
  for (const id of [100, 101, 102]) t.equal(count.get(id), 1, `new site ${id} checked within one interval`)
  for (const id of [1, 2, 3, 4]) t.equal(count.get(id), 2, `site ${id} kept its schedule`)
  t.equal(count.get(5), 1, 'the removed site was not checked again')
  await scheduler.stop()
})

t.test('failures of the list, of a check or of the error handler do not stop the scheduler', async (t) => {
  const clock = fakeTimers(t)
  let calls = 0
  const checks = new Map<number, number>()
  const errors = new Set<string>()
  const scheduler = new Scheduler({
    intervalMs: 60_000,
    refreshMs: 10,
    tickMs: 5,
    concurrency: 10,
    now: () => clock.now,
    listSites: async () => {
      if (++calls > 1) throw new Error('database down')
      return sites(3)
    },
    runCheck: (site) => {
      checks.set(site.id, (checks.get(site.id) ?? 0) + 1)
      if (site.id === 1) throw new Error('thrown')
      return Promise.reject(new Error('rejected'))
    },
    onError: (_err, what) => {
      errors.add(what)
      throw new Error('the handler fails too')
    }
  })
  await scheduler.start()
  await clock.tickAsync(20)
  t.equal(calls, 3, 'the list was read twice more, and failed')
  await clock.tickAsync(120_000 - 20)
  t.same([...checks.values()], [2, 2, 2], 'checks kept running on the last known list')
  t.same([...errors].sort(), ['check', 'list'], 'both failures were reported')
  t.match(scheduler.stats(), { sites: 3, started: 6, running: 0 })
  await scheduler.stop()
})

t.test('a slow site list is not read again while a read is pending', async (t) => {
  const clock = fakeTimers(t)
  let calls = 0
  const scheduler = new Scheduler({
    intervalMs: 1000,
    refreshMs: 5,
    tickMs: 5,
    concurrency: 1,
    now: () => clock.now,
    listSites: () => (++calls === 1 ? Promise.resolve(sites(1)) : new Promise<ScheduledSite[]>(() => {})),
    runCheck: async () => {}
  })
  await scheduler.start()
  await clock.tickAsync(100)
  t.equal(calls, 2, 'nineteen refreshes came while the second read hung')
  await scheduler.stop()
})

t.test('stop waits for running checks, starts nothing afterwards and leaves no timer', async (t) => {
  const clock = fakeTimers(t)
  const hang = gate()
  let calls = 0
  const scheduler = new Scheduler({
    intervalMs: 60_000,
    refreshMs: 10,
    tickMs: 5,
    concurrency: 2,
    now: () => clock.now,
    listSites: async () => {
      calls++
      return sites(3)
    },
    runCheck: () => hang.wait()
  })
  await scheduler.start()
  t.equal(clock.countTimers(), 2, 'one timer for the ticks, one for the list')
  await clock.tickAsync(60_000)
  t.match(scheduler.stats(), { started: 2, running: 2, queued: 1 })
  let resolved = 0
  const stops = [scheduler.stop(), scheduler.stop()].map((p) => p.then(() => resolved++))
  const callsAtStop = calls
  await clock.tickAsync(120_000)
  t.equal(resolved, 0, 'stop waits while checks run')
  t.equal(scheduler.stats().started, 2, 'nothing started after stop, not even the queued site')
  hang.releaseAll()
  await Promise.all(stops)
  t.match(scheduler.stats(), { started: 2, running: 0, queued: 0 })
  t.equal(calls, callsAtStop, 'the list is not read after stop')
  t.equal(clock.countTimers(), 0, 'no timer left')

  let release = (): void => {}
  const late = new Scheduler({
    intervalMs: 60_000,
    tickMs: 5,
    concurrency: 1,
    now: () => clock.now,
    listSites: () =>
      new Promise((resolve) => {
        release = () => {
          resolve(sites(3))
        }
      }),
    runCheck: async () => {
      t.fail('no check after stop')
    }
  })
  const starting = late.start()
  await late.stop()
  release()
  await starting
  await clock.tickAsync(60_000)
  t.equal(clock.countTimers(), 0, 'stopped while starting: no timer left')
})

t.test('checks that wait for a slot past onTimeMs count as late', async (t) => {
  const clock = fakeTimers(t)
  const hang = gate()
  const scheduler = new Scheduler({
    intervalMs: 20_000,
    onTimeMs: 2000,
    tickMs: 5,
    concurrency: 1,
    now: () => clock.now,
    listSites: async () => sites(3),
    runCheck: () => hang.wait()
  })
  await scheduler.start()
  for (let i = 0; i < 80; i++) {
    const { started, queued } = scheduler.stats()
    if (started + queued === 3) break
    await clock.tickAsync(500)
  }
  t.match(scheduler.stats(), { started: 1, queued: 2, onTime: 1, late: 0 })
  await clock.tickAsync(3000)
  await hang.releaseOne()
  await hang.releaseOne()
  await hang.releaseOne()
  t.match(scheduler.stats(), { started: 3, onTime: 1, late: 2 })
  await scheduler.stop()
})

t.test('a site added while the list is being read is first checked within one interval of being added', async (t) => {
  // The site is added just after a read of the list began and only the next read, 9 s later, sees
  // it; its phase passes in between. Waiting for its next phase would check it 60 s after it was noticed.
  const INTERVAL = 60_000
  let n = 0
  while (!(phaseOf(`new${n}.example.com`, INTERVAL) > 31_000 && phaseOf(`new${n}.example.com`, INTERVAL) < 38_000)) n++
  const added: ScheduledSite = { id: 100, domain: `new${n}.example.com` }
  const clock = fakeTimers(t)
  let list = sites(3)
  let held: (() => void) | null = null
  let holdNext = false
  const dues: number[] = []
  const scheduler = new Scheduler({
    intervalMs: INTERVAL,
    refreshMs: 10,
    tickMs: 5,
    concurrency: 10,
    now: () => clock.now,
    listSites: () => {
      const snapshot = list
      if (!holdNext) return Promise.resolve(snapshot)
      holdNext = false
      return new Promise((resolve) => {
        held = () => {
          resolve(snapshot)
        }
      })
    },
    runCheck: async (site, dueAt) => {
      if (site.id === added.id) dues.push(dueAt)
    }
  })
  await scheduler.start()
  await clock.tickAsync(30_000)
  holdNext = true
  await clock.tickAsync(10)
  t.type(held, 'function', 'a read of the list is under way')
  const addedAt = clock.now
  list = [...list, added]
  await clock.tickAsync(9000)
  ;(held as unknown as () => void)()
  await clock.tickAsync(10)
  t.equal(scheduler.stats().sites, 4, 'the next read sees the new site')
  t.equal(dues.length, 0, 'not checked at once')
  await clock.tickAsync(INTERVAL)
  t.ok(dues.length >= 1, 'checked')
  t.ok((dues[0] as number) <= addedAt + INTERVAL, `first due ${(dues[0] as number) - addedAt} ms after being added`)
  t.ok((dues[0] as number) > clock.now - INTERVAL - 9000, 'and not before it was seen')
  const phase = phaseOf(added.domain, INTERVAL)
  const later = dues.slice(1)
  t.ok(later.length >= 1 && later.every((d) => d % INTERVAL === phase), 'afterwards it keeps its phase')
  await scheduler.stop()
})

t.test('sites imported in bulk while running are spread over the interval, not started at once', async (t) => {
  const clock = fakeTimers(t)
  let list = sites(1)
  const firsts = new Map<number, number>()
  const scheduler = new Scheduler({
    intervalMs: 60_000,
    refreshMs: 10,
    tickMs: 5,
    concurrency: 1000,
    now: () => clock.now,
    listSites: async () => list,
    runCheck: async (site, dueAt) => {
      if (!firsts.has(site.id)) firsts.set(site.id, dueAt)
    }
  })
  await scheduler.start()
  await clock.tickAsync(20_000)
  const addedAt = clock.now
  list = [...list, ...sites(500, 1000)]
  await clock.tickAsync(10)
  t.equal(scheduler.stats().sites, 501, 'the next refresh read the import')
  await clock.tickAsync(60_000)
  const dues = [...firsts].filter(([id]) => id >= 1000).map(([, due]) => due - addedAt)
  t.equal(dues.length, 500, 'every imported site was checked')
  t.ok(
    dues.every((d) => d >= 0 && d <= 60_000),
    'each within one interval of the import'
  )
  const tenths = new Array<number>(10).fill(0)
  for (const d of dues) {
    const tenth = Math.min(9, Math.floor(d / 6000))
    tenths[tenth] = (tenths[tenth] ?? 0) + 1
  }
  t.ok(Math.max(...tenths) <= 150, `spread over the interval: ${tenths.join(' ')}`)
  await scheduler.stop()
})

t.test('refreshNow reads the list after a read already under way, and callers meanwhile share that read', async (t) => {
  fakeTimers(t)
  let list = sites(1)
  let reads = 0
  let hold: (() => void) | null = null
  const scheduler = new Scheduler({
    intervalMs: 60_000,
    concurrency: 1,
    refreshMs: 3_600_000,
    runCheck: async () => {},
    listSites: async () => {
      reads++
      const seen = list
      if (reads === 2) await new Promise<void>((resolve) => (hold = resolve))
      return seen
    }
  })
  await scheduler.start()
  t.teardown(() => scheduler.stop())
  t.equal(scheduler.stats().sites, 1)

  const first = scheduler.refreshNow()
  await flush()
  t.equal(reads, 2, 'a read is under way, holding the old list')
  list = sites(3)
  const second = scheduler.refreshNow()
  const third = scheduler.refreshNow()
  t.equal(second, third, 'callers arriving while a read waits share it')
  ;(hold as (() => void) | null)?.()
  await Promise.all([first, second, third])
  t.equal(reads, 3, 'one more read, begun after the one under way')
  t.equal(scheduler.stats().sites, 3, 'and the wheel holds the change made while the first read ran')
})
