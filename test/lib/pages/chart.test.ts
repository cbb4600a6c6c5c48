import t from 'tap'
import { chartModel, niceCeiling } from '../../../lib/pages/chart.js'
import type { ResponseTimeBucket } from '../../../lib/store/response-times.js'

const T0 = Date.parse('2026-11-22T00:00:00.000Z')
const MIN = 60_000
const from = new Date(T0)
const to = new Date(T0 + 24 * 60 * MIN)
const bucketMs = 5 * MIN

function bucket(i: number, avg: number | null, extra: Partial<ResponseTimeBucket> = {}): ResponseTimeBucket {
  return { start: new Date(T0 + i * bucketMs), avg_ms: avg, max_ms: avg, checks: 5, answered: avg === null ? 0 : 5, down: 0, ...extra }
}

t.test('round tops for the y axis', async (t) => {
  const cases: Array<[number, number]> = [
    [0, 100],
    [1, 1],
    [3, 5],
    [7, 10],
    [120, 200],
    [200, 200],
    [201, 500],
    [999, 1000],
    [0.3, 0.5]
  ]
  for (const [value, top] of cases) t.equal(niceCeiling(value), top, String(value))
})

t.test('lines join answered buckets, unanswered checks and long silences break them, lone buckets are dots', async (t) => {
  const chart = chartModel(
    [bucket(0, 100), bucket(1, 200), bucket(3, 50), bucket(4, null), bucket(5, 80), bucket(20, 120), bucket(21, 100)],
    { from, to, bucketMs }
  )
  t.equal(chart.lines.length, 2, 'buckets 0-3 (a 10-minute hole is no silence) and 20-21')
  t.same(
    chart.dots.map((d) => d.x),
    [chart.plot.left + Math.round(((5.5 * bucketMs) / (24 * 60 * MIN)) * (chart.plot.right - chart.plot.left) * 10) / 10],
    'bucket 5 stands alone: an unanswered bucket before it, 75 silent minutes after it'
  )
  const points = (chart.lines[0] as string).split(' ').map((p) => p.split(',').map(Number) as [number, number])
  t.equal(points.length, 3)
  t.same(
    chart.yTicks.map((y) => y.label),
    ['0 ms', '100 ms', '200 ms'],
    'the axis tops at the round value above the slowest'
  )
  const [x0, y0] = points[0] as [number, number]
  const [x1, y1] = points[1] as [number, number]
  t.ok(x1 > x0, 'time runs left to right')
  t.ok(y1 < y0, 'slower is higher')
  t.equal(y1, chart.plot.top, 'the slowest bucket touches the top')
  for (const [x, y] of points)
    t.ok(x >= chart.plot.left && x <= chart.plot.right && y >= chart.plot.top && y <= chart.plot.bottom, 'inside the plot')
  t.same(
    chart.xTicks.map((x) => x.label),
    ['00:00 UTC', '06:00 UTC', '12:00 UTC', '18:00 UTC'],
    'a tick every six hours'
  )
  t.equal(chart.empty, false)
  t.equal(chart.summary, '35 checks: mean response time 108 ms, slowest 200 ms.')
})

t.test('down periods are marked and an empty day says so', async (t) => {
  const chart = chartModel([bucket(3, 90, { down: 2 }), bucket(4, null, { down: 5 })], { from, to, bucketMs })
  t.equal(chart.down.length, 2)
  t.ok((chart.down[0]?.width ?? 0) >= 1)
  const empty = chartModel([], { from, to, bucketMs })
  t.same([empty.lines, empty.dots, empty.empty, empty.summary], [[], [], true, 'No check answered in this period.'])
  t.same(
    empty.yTicks.map((y) => y.label),
    ['0 ms', '50 ms', '100 ms']
  )
})
