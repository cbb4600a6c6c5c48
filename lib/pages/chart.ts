import type { ResponseTimeBucket } from '../store/response-times.js'

/** Everything the template needs to draw the response-time chart as inline SVG: numbers and our own labels only. */
export interface ChartModel {
  width: number
  height: number
  /** The plot area. */
  plot: { left: number; top: number; right: number; bottom: number }
  /** Polyline `points` attributes, one per run of consecutive buckets. */
  lines: string[]
  /** Buckets with no neighbour to join, drawn as dots. */
  dots: Array<{ x: number; y: number }>
  /** Buckets holding a `down` check, marked under the axis. */
  down: Array<{ x: number; width: number }>
  yTicks: Array<{ y: number; label: string }>
  xTicks: Array<{ x: number; label: string }>
  empty: boolean
  /** The chart in words, for readers who cannot see it. */
  summary: string
}

const WIDTH = 720
const HEIGHT = 220
const PLOT = { left: 56, top: 12, right: WIDTH - 12, bottom: HEIGHT - 28 }
/** Longer than this without a check, the line breaks: monitoring was not running. */
const GAP_MS = 30 * 60_000

/** The smallest 1, 2 or 5 times a power of ten at or above `value`: a round top for the y axis. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 100
  const power = 10 ** Math.floor(Math.log10(value))
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power
  return 10 * power
}

const round1 = (n: number): number => Math.round(n * 10) / 10

/**
 * Lays out a series of response-time buckets over [from, to) on fixed axes: time left to right,
 * milliseconds bottom to top from zero, a tick every six hours, gaps where no check answered.
 * `buckets` must be in time order.
 */
export function chartModel(
  buckets: readonly ResponseTimeBucket[],
  { from, to, bucketMs }: { from: Date; to: Date; bucketMs: number }
): ChartModel {
  const span = to.getTime() - from.getTime()
  const answered = buckets.filter((b) => b.avg_ms !== null)
  const top = niceCeiling(Math.max(0, ...answered.map((b) => b.avg_ms as number)))
  const x = (t: number): number => round1(PLOT.left + ((t - from.getTime()) / span) * (PLOT.right - PLOT.left))
  const y = (ms: number): number => round1(PLOT.bottom - (ms / top) * (PLOT.bottom - PLOT.top))
  // Each bucket is drawn at its middle.
  const at = (b: ResponseTimeBucket): number => x(b.start.getTime() + bucketMs / 2)

  // A line runs through answered buckets; it breaks where checks got no answer, and where no check
  // ran for longer than GAP_MS (checks may be sparser than buckets at long check intervals).
  const runs: ResponseTimeBucket[][] = []
  let broken = true
  for (const b of buckets) {
    if (b.avg_ms === null) {
      broken = true
      continue
    }
    const run = runs[runs.length - 1]
    const previous = run?.[run.length - 1]
    if (!broken && run && previous && b.start.getTime() - previous.start.getTime() <= Math.max(GAP_MS, bucketMs)) run.push(b)
    else runs.push([b])
    broken = false
  }
  const lines = runs.filter((r) => r.length > 1).map((r) => r.map((b) => `${at(b)},${y(b.avg_ms as number)}`).join(' '))
  const dots = runs
    .filter((r) => r.length === 1)
    .map(([b]) => ({ x: at(b as ResponseTimeBucket), y: y((b as ResponseTimeBucket).avg_ms as number) }))
  const down = buckets
    .filter((b) => b.down > 0)
    .map((b) => ({ x: x(b.start.getTime()), width: Math.max(1, round1((bucketMs / span) * (PLOT.right - PLOT.left))) }))

  const yTicks = [0, top / 2, top].map((ms) => ({ y: y(ms), label: `${ms} ms` }))
  const xTicks: ChartModel['xTicks'] = []
  const sixHours = 6 * 3_600_000
  for (let t = Math.ceil(from.getTime() / sixHours) * sixHours; t < to.getTime(); t += sixHours) {
    xTicks.push({ x: x(t), label: `${new Date(t).toISOString().slice(11, 16)} UTC` })
  }

  const checks = buckets.reduce((n, b) => n + b.checks, 0)
  let summary = 'No check answered in this period.'
  if (answered.length > 0) {
    const weighted = answered.reduce((n, b) => n + (b.avg_ms as number) * b.answered, 0) / answered.reduce((n, b) => n + b.answered, 0)
    const worst = Math.max(...answered.map((b) => b.max_ms ?? 0))
    summary = `${checks} checks: mean response time ${Math.round(weighted)} ms, slowest ${Math.round(worst)} ms.`
  }
  return { width: WIDTH, height: HEIGHT, plot: PLOT, lines, dots, down, yTicks, xTicks, empty: answered.length === 0, summary }
}
