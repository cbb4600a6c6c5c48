import { coveredMs, type Interval } from './intervals.js'
import { monitoredTime, uptimeFigure } from './uptime.js'
import { parseIsoInstant } from './instants.js'

const DAY_MS = 86_400_000
/** The window when the query names neither end, or only `to`: 30 days. */
export const SLA_DEFAULT_MS = 30 * DAY_MS
/** The longest window answered: 400 days (a year and a quarter, with room). */
export const SLA_MAX_MS = 400 * DAY_MS

export type SlaWindow = { ok: true; from: Date; to: Date } | { ok: false; error: string }

/**
 * The window [from, to) a query asks for: `to` defaults to now and `from` to 30 days before `to`.
 * Both must be ISO 8601, `from` before `to`, and the window at most 400 days long.
 */
export function slaWindow(query: { from?: string; to?: string }, now: Date): SlaWindow {
  const parsed: Partial<Record<'from' | 'to', Date>> = {}
  for (const name of ['from', 'to'] as const) {
    const text = query[name]
    if (text === undefined) continue
    const at = parseIsoInstant(text)
    if (at === null || Number.isNaN(at.getTime()))
      return {
        ok: false,
        error: `"${name}" must be an ISO 8601 date or date-time with a time zone from 1970 to 9999, such as 2026-11-01 or 2026-11-01T00:00:00Z`
      }
    parsed[name] = at
  }
  const to = parsed.to ?? now
  const from = parsed.from ?? new Date(to.getTime() - SLA_DEFAULT_MS)
  if (from.getTime() >= to.getTime()) return { ok: false, error: '"from" must be before "to"' }
  if (to.getTime() - from.getTime() > SLA_MAX_MS) return { ok: false, error: 'the window from "from" to "to" must be at most 400 days' }
  return { ok: true, from, to }
}

/** The part of [from, to) that was monitored: from the first recorded check to `until` (now, or the removal). */
export function monitoredSpan(firstCheckedAt: Date | null, from: Date, to: Date, until: Date): { start: Date; end: Date } {
  const { start, end } = monitoredTime([], firstCheckedAt, from.getTime(), to.getTime(), until.getTime())
  return { start: new Date(start), end: new Date(end) }
}

/**
 * An outage as the SLA reads it: epoch milliseconds, open-ended while ongoing. Numbers, not Dates:
 * a year of a flapping site is thousands of outages, and a Date each costs more than the arithmetic.
 */
export interface OutageInterval {
  started: number
  ended: number | null
}

/** The SLA figures of a window; seconds are whole. */
export interface SlaFigures<T extends OutageInterval> {
  uptime_percent: number
  /** Monitored time, maintenance excluded. */
  monitored_seconds: number
  /** Maintenance inside the monitored part; present when the maintenance was given. */
  maintenance_seconds?: number
  /** Outage time outside maintenance. */
  downtime_seconds: number
  /** How many outages were down in the monitored part of the window, outside maintenance. */
  incidents: number
  /** The longest time one outage was down inside the window, outside maintenance; 0 without outages. */
  longest_outage_seconds: number
  /** Mean whole duration of the outages that ended inside the window; null when none did. */
  mttr_seconds: number | null
  /** The outages counted, in the order given. */
  outages: T[]
}

/**
 * The SLA of [from, to): uptime over the monitored part (first recorded check to `until`, the
 * uptime rule), the outage time inside it, and the outages overlapping it. `outages` are the site's
 * outages in time order (they never overlap); an ongoing one lasts until `until`. `maintenance`
 * (sorted, disjoint) is taken out of both the monitored and the outage time: an outage only inside
 * maintenance is not counted, and one that outlasts a window's start is down until it.
 */
export function slaFigures<T extends OutageInterval>({
  outages,
  firstCheckedAt,
  from,
  to,
  until,
  maintenance
}: {
  outages: readonly T[]
  firstCheckedAt: Date | null
  from: Date
  to: Date
  until: Date
  maintenance?: readonly Interval[]
}): SlaFigures<T> {
  const { start, end } = monitoredTime([], firstCheckedAt, from.getTime(), to.getTime(), until.getTime())
  const hidden = maintenance ?? []
  const counted: T[] = []
  let downMs = 0
  let longestMs = 0
  let recoveredMs = 0
  let recovered = 0
  for (const o of outages) {
    const s = Math.max(o.started, start)
    const e = Math.min(o.ended ?? end, end)
    if (e <= s) continue
    const ms = e - s - coveredMs(s, e, hidden)
    if (ms <= 0) continue
    counted.push(o)
    downMs += ms
    longestMs = Math.max(longestMs, ms)
    if (o.ended !== null && o.ended <= end) {
      recovered++
      recoveredMs += o.ended - o.started
    }
  }
  const maintenanceMs = coveredMs(start, end, hidden)
  const monitoredMs = end - start - maintenanceMs
  downMs = Math.min(downMs, monitoredMs)
  return {
    uptime_percent: uptimeFigure(downMs, monitoredMs),
    monitored_seconds: Math.floor(monitoredMs / 1000),
    ...(maintenance === undefined ? {} : { maintenance_seconds: Math.floor(maintenanceMs / 1000) }),
    downtime_seconds: Math.floor(downMs / 1000),
    incidents: counted.length,
    longest_outage_seconds: Math.floor(longestMs / 1000),
    mttr_seconds: recovered === 0 ? null : Math.round(recoveredMs / recovered / 1000),
    outages: counted
  }
}
