import { humanDuration, humanTime } from '../pages/format.js'
import type { OutageSpan } from '../rules/uptime.js'
import { WINDOW_MS, type ChartWindow } from './figures.js'
import { HOUR_MS, type HourlySeries } from './response-history.js'

/**
 * The response-time chart badge (`chart.svg`): a sparkline of a site's hourly mean response time,
 * broken where no check answered or an outage came between two hours, outages marked in red. No
 * script, no external resource; a title and a description say what it shows, with the figures.
 */

export const CHART_WIDTH = 240
export const CHART_HEIGHT = 48
const PAD = 4
const PLOT_TOP = 4
const PLOT_BOTTOM = 38
const BAND_Y = 42
const LINE = '#0969da'
const DOWN = '#cf222e'

const WINDOW_WORDS: Record<ChartWindow, string> = { '24h': 'last 24 hours', '7d': 'last 7 days' }

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

/** Text for XML content and attribute values. */
export function xmlText(text: string): string {
  return text.replace(CONTROL, ' ').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

const r1 = (n: number): number => Math.round(n * 10) / 10
const ms = (n: number): string => `${Math.round(n)} ms`
const utc = (at: number): string => humanTime(new Date(at).toISOString()).slice(0, 16) + ' UTC'

export interface SparklineInput {
  /** The site's hourly series; null when it has none (never checked). */
  series: HourlySeries | null
  outages: readonly OutageSpan[]
  window: ChartWindow
  at: number
  name: string
  domain: string
}

/**
 * The chart's SVG. Its x axis runs over whole UTC hours, from the hour the window starts in to the
 * end of the current one, so the drawing changes with the data, not with every second.
 */
export function sparkline({ series, outages, window, at, name, domain }: SparklineInput): string {
  const first = Math.floor((at - WINDOW_MS[window]) / HOUR_MS)
  const last = Math.floor(at / HOUR_MS)
  const from = first * HOUR_MS
  const span = (last + 1 - first) * HOUR_MS
  const x = (t: number): number => r1(PAD + ((t - from) / span) * (CHART_WIDTH - 2 * PAD))

  const means: Array<number | null> = []
  for (let h = first; h <= last; h++) {
    const i = series === null ? -1 : h - series.base
    const count = series === null || i < 0 ? 0 : (series.counts[i] ?? 0)
    means.push(count > 0 ? ((series as HourlySeries).sums[i] as number) / count : null)
  }
  const known = means.filter((m): m is number => m !== null)
  // From zero, with room above the slowest hour, so that a steady line does not run along the edge.
  const top = Math.max(1, ...known) * 1.2
  const y = (value: number): number => r1(PLOT_BOTTOM - (value / top) * (PLOT_BOTTOM - PLOT_TOP))

  const down = outages
    .map((o) => ({ start: Math.max(o.started_at.getTime(), from), end: Math.min(o.ended_at?.getTime() ?? at, at) }))
    .filter((o) => o.end > o.start)
  const between = (a: number, b: number): boolean => down.some((o) => o.start < b && o.end > a)

  // Runs of answered hours; a run breaks at an hour without an answer or an outage between two.
  const runs: Array<Array<[number, number]>> = []
  let previous: number | null = null
  means.forEach((mean, k) => {
    const centre = from + (k + 0.5) * HOUR_MS
    if (mean === null) {
      previous = null
      return
    }
    const point: [number, number] = [x(centre), y(mean)]
    const run = runs[runs.length - 1]
    if (previous !== null && run !== undefined && !between(previous, centre)) run.push(point)
    else runs.push([point])
    previous = centre
  })

  const parts: string[] = [`<rect width="${CHART_WIDTH}" height="${CHART_HEIGHT}" rx="3" fill="#fff" stroke="#d0d7de"/>`]
  for (const o of down) {
    const x1 = x(o.start)
    // Two pixels at least: an hour of a week is one and a half.
    const width = Math.max(2, r1(x(o.end) - x1))
    parts.push(`<rect x="${x1}" y="${PLOT_TOP}" width="${width}" height="${BAND_Y + 3 - PLOT_TOP}" fill="${DOWN}" fill-opacity="0.15"/>`)
    parts.push(`<rect x="${x1}" y="${BAND_Y}" width="${width}" height="3" fill="${DOWN}"/>`)
  }
  for (const run of runs) {
    if (run.length === 1) {
      const [[cx, cy]] = run as [[number, number]]
      parts.push(`<circle cx="${cx}" cy="${cy}" r="1.5" fill="${LINE}"/>`)
    } else {
      const points = run.map(([px, py]) => `${px},${py}`).join(' ')
      parts.push(
        `<polyline points="${points}" fill="none" stroke="${LINE}" stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round"/>`
      )
    }
  }
  if (known.length === 0) {
    parts.push(
      `<text x="${CHART_WIDTH / 2}" y="${CHART_HEIGHT / 2 + 4}" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" fill="#57606a">no data</text>`
    )
  }

  const title = `${name}: response time, ${WINDOW_WORDS[window]}`
  const desc = describe({ means, known, down, series, first, at, name, domain })
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" role="img" aria-labelledby="chart-title chart-desc">` +
    `<title id="chart-title">${xmlText(title)}</title><desc id="chart-desc">${xmlText(desc)}</desc>${parts.join('')}</svg>`
  )
}

/** The chart in words: the period, the mean, fastest and slowest hours, and the outages. */
function describe({
  means,
  known,
  down,
  series,
  first,
  at,
  name,
  domain
}: {
  means: ReadonlyArray<number | null>
  known: readonly number[]
  down: ReadonlyArray<{ start: number; end: number }>
  series: HourlySeries | null
  first: number
  at: number
  name: string
  domain: string
}): string {
  const period = `Hourly mean response time of ${name} (${domain}) from ${utc(first * HOUR_MS)} to ${utc(at)}`
  if (known.length === 0) return `${period}: no check answered in this period.`
  let sum = 0
  let count = 0
  means.forEach((mean, k) => {
    if (mean === null || series === null) return
    const i = first + k - series.base
    sum += series.sums[i] as number
    count += series.counts[i] as number
  })
  const firstKnown = means.findIndex((m) => m !== null)
  const since = firstKnown > 0 ? ` Data from ${utc((first + firstKnown) * HOUR_MS)} on.` : ''
  const downMs = down.reduce((n, o) => n + o.end - o.start, 0)
  const outages =
    down.length === 0
      ? 'No outage.'
      : `${down.length} ${down.length === 1 ? 'outage' : 'outages'}, ${humanDuration(downMs / 1000)} down, marked in red.`
  return `${period}: mean ${ms(sum / count)}, fastest hour ${ms(Math.min(...known))}, slowest hour ${ms(Math.max(...known))}.${since} ${outages}`
}
