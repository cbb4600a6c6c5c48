import type { Interval } from '../rules/intervals.js'
import { monitoredTime, type OutageSpan } from '../rules/uptime.js'
import { BadgeOptionError, type BadgeContent } from './describe.js'

/**
 * The figures badges show (uptime and mean response time over a window), their windows, the
 * colour thresholds and the words: docs/decisions.md, "Figure badges".
 */

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR

export const BADGE_WINDOWS = ['24h', '7d', '30d', '90d'] as const
export type BadgeWindow = (typeof BADGE_WINDOWS)[number]

export const WINDOW_MS: Readonly<Record<BadgeWindow, number>> = { '24h': DAY, '7d': 7 * DAY, '30d': 30 * DAY, '90d': 90 * DAY }

/** Each window's place in arrays of per-window values (memos). */
export const WINDOW_INDEX: Readonly<Record<BadgeWindow, number>> = { '24h': 0, '7d': 1, '30d': 2, '90d': 3 }

/** The response-time chart's windows: hourly points, 25 or 169 of them. */
export const CHART_WINDOWS = ['24h', '7d'] as const satisfies readonly BadgeWindow[]
export type ChartWindow = (typeof CHART_WINDOWS)[number]

/** The window a badge URL without `window` gets: the status record's month for uptime, the last day for speed. */
export const DEFAULT_WINDOWS = { uptime: '30d', responseTime: '24h', chart: '24h' } as const

/** A figure over a window: null when nothing of the window is known. */
export interface WindowFigure {
  value: number | null
  /** How much of the window the figure covers (ms), when it starts after the window does; null: all of it. */
  coveredMs: number | null
}

export const NO_DATA: WindowFigure = Object.freeze({ value: null, coveredMs: null })

/** Uptime colours: from 99.9 % green, from 99 % yellow, from 95 % orange, below red (the status page's day bars). */
export const UPTIME_THRESHOLDS: ReadonlyArray<readonly [number, BadgeContent['color']]> = [
  [99.9, 'green'],
  [99, 'yellow'],
  [95, 'orange']
]

/** Response-time colours by default: below 300 ms green, below 1,000 yellow, below 3,000 orange, from there red. */
export const RESPONSE_THRESHOLDS_MS: readonly [number, number, number] = [300, 1000, 3000]

/** Bounds of `?thresholds=` values: whole milliseconds from 1 ms to a minute. */
export const THRESHOLD_BOUNDS = { min: 1, max: 60_000 } as const

const RESPONSE_COLOURS = ['green', 'yellow', 'orange'] as const

/** `window` from a badge URL, or the default; anything else is refused with the values it may take. */
export function parseWindow<W extends BadgeWindow>(raw: unknown, allowed: readonly W[], fallback: W): W {
  if (raw === undefined) return fallback
  if (typeof raw === 'string' && (allowed as readonly string[]).includes(raw)) return raw as W
  throw new BadgeOptionError(`"window" must be one of ${allowed.join(', ')}`)
}

const THRESHOLDS_MESSAGE = `"thresholds" must be three whole numbers of milliseconds from ${THRESHOLD_BOUNDS.min} to ${THRESHOLD_BOUNDS.max}, ascending, separated by commas (for example 300,1000,3000)`

/** `thresholds` from a badge URL (`200,500,2000`: the upper bounds of green, yellow and orange), or the defaults. */
export function parseThresholds(raw: unknown): readonly [number, number, number] {
  if (raw === undefined) return RESPONSE_THRESHOLDS_MS
  if (typeof raw !== 'string' || !/^\d{1,5},\d{1,5},\d{1,5}$/.test(raw)) throw new BadgeOptionError(THRESHOLDS_MESSAGE)
  const values = raw.split(',').map(Number) as [number, number, number]
  const inBounds = values.every((v) => v >= THRESHOLD_BOUNDS.min && v <= THRESHOLD_BOUNDS.max)
  if (!inBounds || values[0] >= values[1] || values[1] >= values[2]) throw new BadgeOptionError(THRESHOLDS_MESSAGE)
  return values
}

/** "2 d", "5 h", "40 min", "< 1 min": how much of a window is known, rounded down. */
export function spanText(ms: number): string {
  if (ms >= 2 * DAY) return `${Math.floor(ms / DAY)} d`
  if (ms >= HOUR) return `${Math.floor(ms / HOUR)} h`
  return ms >= MIN ? `${Math.floor(ms / MIN)} min` : '< 1 min'
}

const qualified = (text: string, figure: WindowFigure): string =>
  figure.coveredMs === null ? text : `${text} (${spanText(figure.coveredMs)} of data)`

/**
 * "99.95 %": two decimals rounded down, so that any down time shows (99.999 is 99.99, never 100);
 * exactly 100 only without any.
 */
export function percentText(value: number): string {
  return value >= 100 ? '100 %' : `${(Math.floor(value * 100) / 100).toFixed(2)} %`
}

/** A response time as the badge shows it: whole milliseconds below a second, tens of them from there. */
export function shownMs(value: number): number {
  return value < 999.5 ? Math.round(value) : Math.round(value / 10) * 10
}

/** "182 ms", "1.25 s" (of a value as {@link shownMs} rounds it). */
export function msText(shown: number): string {
  return shown < 1000 ? `${shown} ms` : `${(shown / 1000).toFixed(2)} s`
}

export type FigureKind = 'uptime' | 'response-time'

/** A figure badge's label unless the URL gives one: `uptime 30d`, `response time 24h`. */
export function figureLabel(kind: FigureKind, window: BadgeWindow): string {
  return kind === 'uptime' ? `uptime ${window}` : `response time ${window}`
}

/** The uptime badge: `uptime 30d | 99.95 %`, or `no data` in grey; a window known only in part says how much is. */
export function uptimeContent(figure: WindowFigure, window: BadgeWindow, label?: string): BadgeContent {
  const shown = label ?? figureLabel('uptime', window)
  if (figure.value === null) return { label: shown, message: 'no data', color: 'lightgrey' }
  const value = figure.value
  const color = UPTIME_THRESHOLDS.find(([from]) => value >= from)?.[1] ?? 'red'
  return { label: shown, message: qualified(percentText(value), figure), color }
}

/** The response-time badge: `response time 24h | 182 ms`, coloured by `thresholds`, or `no data` in grey. */
export function responseTimeContent(
  figure: WindowFigure,
  window: BadgeWindow,
  thresholds: readonly [number, number, number] = RESPONSE_THRESHOLDS_MS,
  label?: string
): BadgeContent {
  const words = label ?? figureLabel('response-time', window)
  if (figure.value === null) return { label: words, message: 'no data', color: 'lightgrey' }
  // Coloured by the value shown, so that the same words always come in the same colour.
  const value = shownMs(figure.value)
  const band = thresholds.findIndex((upper) => value < upper)
  return {
    label: words,
    message: qualified(msText(value), figure),
    color: band === -1 ? 'red' : (RESPONSE_COLOURS[band] as BadgeContent['color'])
  }
}

/**
 * The mean of several figures over the same window (a status page's sites): those with no data
 * are left out. It covers the window in part only when every figure does, and then says the
 * longest span known.
 */
export function meanFigure(figures: readonly WindowFigure[]): WindowFigure {
  let sum = 0
  let known = 0
  let partial = true
  let covered = 0
  for (const f of figures) {
    if (f.value === null) continue
    sum += f.value
    known++
    if (f.coveredMs === null) partial = false
    else covered = Math.max(covered, f.coveredMs)
  }
  if (known === 0) return NO_DATA
  return { value: sum / known, coveredMs: partial ? covered : null }
}

/** What an uptime figure is made of: a monitor's outages, its first check and its maintenance time. */
export interface UptimeInputs {
  outages: readonly OutageSpan[]
  firstCheckedAt: Date | null
  /** Maintenance time (sorted, disjoint) covering the longest window before `at`; undefined: none. */
  maintenance?: { recent(at: number): readonly Interval[] }
}

/**
 * Uptime over the window that ends at `at`, by the status record's rule (lib/rules/uptime.ts):
 * monitored time starts at the first check, maintenance is neither monitored nor down. Unlike the
 * record, nothing monitored is no data, not 100.
 */
export function windowUptime(inputs: UptimeInputs, windowMs: number, at: number): WindowFigure {
  const from = at - windowMs
  const time = monitoredTime(inputs.outages, inputs.firstCheckedAt, from, at, at, inputs.maintenance?.recent(at) ?? [])
  if (time.monitoredMs <= 0) return NO_DATA
  return { value: 100 * (1 - time.downMs / time.monitoredMs), coveredMs: time.start > from ? time.end - time.start : null }
}
