import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { Scheduler, type ScheduledSite } from '../../../lib/checks/scheduler.js'

const sites = (n: number, from = 1): ScheduledSite[] => Array.from({ length: n }, (_, i) => ({ id: from + i, domain: `site${from + i}.example.com` }))

t.test('every site is checked once per interval, spread across it', async (t) => {
  const starts = new Map<number, number[]>()
  const list = sites(100)
  const scheduler = new Scheduler({
    intervalMs: 500,
    tickMs: 10,
    concurrency: 1000,
    listSites: async () => list,
    runCheck: async (site, dueAt) => { starts.set(site.id, [...(starts.get(site.id) ?? []), dueAt]) }
  })
  await scheduler.start()
  await sleep(2100)
  await scheduler.stop()
  for (const site of list) {
    const dues = starts.get(site.id) ?? []
    t.ok(dues.length >= 3 && dues.length <= 5, `${site.domain} ran ${dues.length} times in ~4 intervals`)
    for (let i = 1; i < dues.length; i++) t.equal((dues[i] as number) - (dues[i - 1] as number), 500, 'exactly one interval apart')
  }
  const slices = new Array(10).fill(0)
  for (const dues of starts.values()) for (const d of dues) slices[Math.floor((d % 500) / 50)]++
  const total = slices.reduce((a, b) => a + b, 0)
  t.ok(Math.max(...slices) <= total * 0.3, `no tenth of the interval holds more than 30% of starts: ${slices.join(' ')}`)
  t.equal(scheduler.stats().late, 0)
})

t.test('a domain keeps its phase across scheduler instances', async (t) => {
  const firstDue = async () => {
    let due = -1
    const s = new Scheduler({ intervalMs: 400, tickMs: 5, concurrency: 1, listSites: async () => sites(1, 7), runCheck: async (_site, d) => { if (due < 0) due = d } })
    await s.start()
    await sleep(900)
    await s.stop()
    return due % 400
  }
  t.equal(await firstDue(), await firstDue())
})

t.test('concurrency is bounded and hanging checks do not hold up other sites', async (t) => {
  let running = 0
  let max = 0
  const checked = new Set<number>()
  const release: Array<() => void> = []
  const scheduler = new Scheduler({
    intervalMs: 400,
    tickMs: 5,
    concurrency: 5,
    listSites: async () => sites(40),
    runCheck: async (site) => {
      running++
      max = Math.max(max, running)
      // Three sites hang until released; the rest take a moment.
      if (site.id <= 3) await new Promise<void>((resolve) => release.push(resolve))
      else await sleep(5)
      checked.add(site.id)
      running--
    }
  })
  await scheduler.start()
  await sleep(1000)
  t.ok(max <= 5, `at most 5 at once (saw ${max})`)
  t.ok(checked.size >= 37, `all ${checked.size} others were checked while three hung`)
  t.ok(scheduler.stats().skipped >= 3, 'the hanging sites were skipped when due again')
  for (const r of release) r()
  await scheduler.stop()
})

t.test('sites added or removed are picked up within about an interval', async (t) => {
  let list = sites(5)
  const seen = new Map<number, number>()
  const scheduler = new Scheduler({
    intervalMs: 300,
    refreshMs: 100,
    tickMs: 5,
    concurrency: 100,
    listSites: async () => list,
    runCheck: async (site) => { if (!seen.has(site.id) || site.id === 5) seen.set(site.id, Date.now()) }
  })
  await scheduler.start()
  await sleep(400)
  list = [...sites(4), ...sites(3, 100)]
  const changedAt = Date.now()
  await sleep(700)
  for (const id of [100, 101, 102]) t.ok((seen.get(id) ?? Infinity) - changedAt <= 500, `new site ${id} checked within refresh + interval`)
  t.ok((seen.get(5) ?? 0) <= changedAt + 150, 'the removed site stopped being checked')
  await scheduler.stop()
})

t.test('failures of the list or of a check do not stop the scheduler', async (t) => {
  let calls = 0
  let checks = 0
  const errors: string[] = []
  const scheduler = new Scheduler({
    intervalMs: 200,
    refreshMs: 50,
    tickMs: 5,
    concurrency: 10,
    listSites: async () => { if (++calls > 1) throw new Error('database down'); return sites(3) },
    runCheck: async () => { checks++; throw new Error('boom') },
    onError: (_err, what) => { errors.push(what) }
  })
  await scheduler.start()
  await sleep(700)
  await scheduler.stop()
  t.ok(checks >= 6, `checks kept running on the last known list (${checks})`)
  t.ok(errors.includes('list') && errors.includes('check'), 'both failures were reported')
  t.equal(scheduler.stats().sites, 3)
})

t.test('stop waits for running checks and starts nothing afterwards', async (t) => {
  let finished = 0
  let startedAfterStop = 0
  let stopped = false
  const scheduler = new Scheduler({
    intervalMs: 100,
    tickMs: 5,
    concurrency: 10,
    listSites: async () => sites(5),
    runCheck: async () => { if (stopped) startedAfterStop++; await sleep(150); finished++ }
  })
  await scheduler.start()
  await sleep(250)
  const before = scheduler.stats().started
  await scheduler.stop()
  stopped = true
  t.equal(scheduler.stats().running, 0, 'nothing runs after stop resolves')
  t.equal(finished, before, 'every started check finished')
  await sleep(300)
  t.equal(startedAfterStop, 0)
})

t.test('checks started late are counted as late', async (t) => {
  let now = 1_000_000
  const scheduler = new Scheduler({
    intervalMs: 60_000,
    tickMs: 5,
    onTimeMs: 5000,
    concurrency: 1,
    now: () => now,
    listSites: async () => sites(50),
    runCheck: async () => { now += 1000 }
  })
  await scheduler.start()
  now += 60_000
  await sleep(100)
  await scheduler.stop()
  const stats = scheduler.stats()
  t.ok(stats.started >= 40, `${stats.started} started`)
  t.ok(stats.late > 0 && stats.onTime > 0, `on time ${stats.onTime}, late ${stats.late}`)
  t.equal(stats.onTime + stats.late, stats.started)
})
