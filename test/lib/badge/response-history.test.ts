import t from 'tap'
import { HOUR_MS, REFRESH_MS, ResponseHistory, type HourlySeries, type ListHours } from '../../../lib/badge/response-history.js'
import type { ResponseTimeBucket } from '../../../lib/store/response-times.js'

const DAY = 24 * HOUR_MS
const NOW = Date.parse('2026-11-28T12:30:00.000Z')

/** Checks as a store would hold them: [time, response ms]. A reader over them that counts its reads. */
function store(checks: Array<[number, number]>) {
  const reads: Array<{ from: number; to: number }> = []
  const list: ListHours = async ({ from, to }) => {
    reads.push({ from: from.getTime(), to: to.getTime() })
    const buckets = new Map<number, { sum: number; n: number }>()
    for (const [at, ms] of checks) {
      if (at < from.getTime() || at >= to.getTime()) continue
      const hour = Math.floor(at / HOUR_MS) * HOUR_MS
      const b = buckets.get(hour) ?? { sum: 0, n: 0 }
      b.sum += ms
      b.n++
      buckets.set(hour, b)
    }
    return [...buckets].map(([start, b]): ResponseTimeBucket => ({
      start: new Date(start),
      avg_ms: b.sum / b.n,
      max_ms: null,
      checks: b.n,
      answered: b.n,
      down: 0
    }))
  }
  return { checks, reads, list }
}

const hourly = (hours: number, ms: number, from = NOW): Array<[number, number]> =>
  Array.from({ length: hours }, (_, k): [number, number] => [from - (k + 1) * HOUR_MS, ms])

t.test('the first look reads once and waits; later looks answer from memory, re-reading only the open hours every 30 s', async (t) => {
  const s = store(hourly(100 * 24, 100))
  const history = new ResponseHistory({ list: s.list })
  const since = new Date(NOW - 100 * DAY)
  const first = history.series(1, since, NOW)
  t.ok(first instanceof Promise, 'the first look waits for a read')
  const again = history.series(1, since, NOW)
  t.equal(again, first, 'a second look meanwhile shares it')
  const series = await first
  t.equal(s.reads.length, 1)
  t.equal(s.reads[0]?.to, NOW)
  t.equal(s.reads[0]?.from, Math.floor(NOW / HOUR_MS) * HOUR_MS - 90 * DAY, 'at most 90 days back, from an hour')
  t.same(series.mean(DAY, NOW), { value: 100, coveredMs: null })

  for (let i = 0; i < 100; i++) t.equal(history.series(1, since, NOW + 29_000), series, 'held')
  t.equal(s.reads.length, 1, 'no read within 30 s')

  s.checks.push([NOW + 10_000, 400])
  t.equal(history.series(1, since, NOW + REFRESH_MS), series, 'past 30 s: the series held answers')
  for (let i = 0; i < 50; i++) void history.series(1, since, NOW + REFRESH_MS + i)
  await history.idle()
  t.equal(s.reads.length, 2, 'one read in the background, however many looks meanwhile')
  t.same(s.reads[1], { from: Math.floor(NOW / HOUR_MS) * HOUR_MS, to: NOW + REFRESH_MS }, 'of the open hour only')
  t.same(series.mean(DAY, NOW + REFRESH_MS), { value: (24 * 100 + 400) / 25, coveredMs: null }, 'the new check is in')
})

t.test('an hour is read again until its checks have settled, then never', async (t) => {
  const s = store(hourly(48, 100))
  const history = new ResponseHistory({ list: s.list })
  const since = new Date(NOW - 2 * DAY)
  const hour = Math.floor(NOW / HOUR_MS) * HOUR_MS
  await history.series(1, since, NOW)
  // 13:02: the hour that ended two minutes ago may still get checks written late.
  const at = hour + HOUR_MS + 2 * 60_000
  s.checks.push([hour + 59 * 60_000, 1000])
  void history.series(1, since, at)
  await history.idle()
  t.equal(s.reads.at(-1)?.from, hour, 'the hour before is read again')
  // Written at 13:04, after that read.
  s.checks.push([hour + 58 * 60_000, 1000])
  const later = at + 10 * 60_000
  void history.series(1, since, later)
  await history.idle()
  t.equal(s.reads.at(-1)?.from, hour, 'the first read after it settled (13:05) reads it once more')
  void history.series(1, since, later + REFRESH_MS)
  await history.idle()
  t.equal(s.reads.at(-1)?.from, hour + HOUR_MS, 'then it is final: only the open hour is read')
  const series = await history.series(1, since, later)
  t.equal(series.counts[series.counts.length - 2], 2, 'both late checks of the hour before were taken')
})

t.test('coverage: a series whose first answered hour comes after the window says how much it covers', async (t) => {
  const s = store(hourly(72, 300))
  const history = new ResponseHistory({ list: s.list })
  const series = await history.series(2, new Date(NOW - 3 * DAY), NOW)
  t.same(series.mean(DAY, NOW), { value: 300, coveredMs: null }, 'the last day is covered')
  t.same(series.mean(7 * DAY, NOW), { value: 300, coveredMs: 3 * DAY }, '3 days of 7')
  const none = await new ResponseHistory({ list: store([]).list }).series(3, new Date(NOW - DAY), NOW)
  t.same(none.mean(DAY, NOW), { value: null, coveredMs: null }, 'no check answered: no data')
})

t.test('a series drops the hours past 90 days as time goes on', async (t) => {
  const s = store(hourly(91 * 24, 50))
  const history = new ResponseHistory({ list: s.list })
  const since = new Date(NOW - 200 * DAY)
  const series = await history.series(4, since, NOW)
  t.equal(series.sums.length, 90 * 24 + 1)
  const at = NOW + 3 * DAY
  void history.series(4, since, at)
  await history.idle()
  t.equal(series.sums.length, 90 * 24 + 1, 'still the longest window and its first hour')
  t.equal(series.base, Math.floor(at / HOUR_MS) - 90 * 24)
  t.same(series.mean(90 * DAY, at).value, 50)
})

t.test('a failed re-read keeps the series and waits 30 s before trying again; a failed first read is not kept', async (t) => {
  let fail = false
  let reads = 0
  const list: ListHours = async () => {
    reads++
    if (fail) throw new Error('database unavailable')
    return []
  }
  const history = new ResponseHistory({ list })
  const since = new Date(NOW - DAY)
  const series = await history.series(5, since, NOW)
  fail = true
  void history.series(5, since, NOW + REFRESH_MS)
  await history.idle()
  t.equal(reads, 2)
  for (let i = 0; i < 20; i++) t.equal(history.series(5, since, NOW + REFRESH_MS + 1000), series)
  t.equal(reads, 2, 'not a read per look while the database is away')
  await t.rejects(history.series(6, since, NOW) as Promise<HourlySeries>, /database unavailable/)
  fail = false
  t.same((await history.series(6, since, NOW)).mean(24 * HOUR_MS, NOW), { value: null, coveredMs: null }, 'the next look reads again')
})

t.test('the series kept are bounded by bytes', async (t) => {
  const s = store([])
  const history = new ResponseHistory({ list: s.list, maxBytes: 200_000 })
  for (let id = 1; id <= 50; id++) await history.series(id, new Date(NOW - 30 * DAY), NOW)
  t.ok(history.size < 50 && history.size >= 10, `${history.size} of 50 series of 30 days kept in 200 kB`)
  const reads = s.reads.length
  await history.series(1, new Date(NOW - 30 * DAY), NOW)
  t.equal(s.reads.length, reads + 1, 'a series dropped is read again')
})
