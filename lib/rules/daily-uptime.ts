import type { Interval } from './intervals.js'
import { uptimeFigure } from './uptime.js'

/**
 * A site's uptime per UTC day, by the status record's rule (lib/rules/uptime.ts): monitored time
 * starts at the site's first recorded check, an ongoing outage lasts until now, and maintenance time
 * is neither monitored nor down.
 */

const DAY_MS = 86_400_000

/** How many days a status page shows: today and the 89 before it. */
export const PAGE_DAYS = 90

/** An outage as epoch milliseconds, open-ended (null) while ongoing. */
export interface OutageMs {
  started: number
  ended: number | null
}

/** One UTC day's bar. */
export interface DayUptime {
  /** The UTC day, `YYYY-MM-DD`. */
  date: string
  /** Null when nothing of the day was monitored: no data is not 100 %. */
  uptime_percent: number | null
  /** Outage time inside the day's monitored time, whole seconds (rounded down). */
  down_seconds: number
  /** Outages with down time inside the day's monitored time. */
  outages: number
  /** Maintenance time inside the day, from the site's first check on, whole seconds. */
  maintenance_seconds: number
}

/** Midnight UTC of the day holding `at`. */
export function utcDayStart(at: number): number {
  return Math.floor(at / DAY_MS) * DAY_MS
}

/** The first of the `days` UTC days that end with the one holding `now`. */
export function firstDayStart(now: number, days = PAGE_DAYS): number {
  return utcDayStart(now) - (days - 1) * DAY_MS
}

// Every site of a page, and every page rendered that day, shows the same dates: made once a day.
let datesFrom = NaN
let dates: readonly string[] = []

function dayDates(from: number, days: number): readonly string[] {
  if (from !== datesFrom || dates.length !== days) {
    dates = Array.from({ length: days }, (_, i) => new Date(from + i * DAY_MS).toISOString().slice(0, 10))
    datesFrom = from
  }
  return dates
}

/** How much of [from, to) the sorted, disjoint `intervals` cover, looking from index `i` on. */
function coveredFrom(intervals: readonly Interval[], i: number, from: number, to: number): number {
  let ms = 0
  for (let k = i; k < intervals.length; k++) {
    const m = intervals[k] as Interval
    if (m.from >= to) break
    const s = Math.max(m.from, from)
    const e = Math.min(m.to, to)
    if (e > s) ms += e - s
  }
  return ms
}

/**
 * The site's `days` UTC days ending with today (so far), oldest first. `outages` sorted by start
 * (a site's outages never overlap, so their ends are in order too) and `maintenance` sorted and
 * disjoint, both as epoch ms; neither needs cutting to the days. One pass over each: a year of
 * history behind 90 days costs what overlaps them, plus the skip over what ends before.
 */
export function dailyUptime({
  outages,
  firstCheckedAt,
  maintenance = [],
  now,
  days = PAGE_DAYS
}: {
  outages: readonly OutageMs[]
  /** The site's first recorded check (epoch ms); null: none yet, nothing monitored. */
  firstCheckedAt: number | null
  maintenance?: readonly Interval[]
  now: number
  days?: number
}): DayUptime[] {
  const from = firstDayStart(now, days)
  const labels = dayDates(from, days)
  const result: DayUptime[] = new Array<DayUptime>(days)
  let o = 0
  let m = 0
  for (let d = 0; d < days; d++) {
    const dayStart = from + d * DAY_MS
    const end = Math.min(dayStart + DAY_MS, now)
    const start = firstCheckedAt === null ? end : Math.min(end, Math.max(dayStart, firstCheckedAt))
    while (m < maintenance.length && (maintenance[m] as Interval).to <= dayStart) m++
    while (o < outages.length && (outages[o] as OutageMs).ended !== null && ((outages[o] as OutageMs).ended as number) <= dayStart) o++
    const maintenanceMs = coveredFrom(maintenance, m, start, end)
    const monitoredMs = end - start - maintenanceMs
    let downMs = 0
    let count = 0
    for (let k = o; k < outages.length; k++) {
      const outage = outages[k] as OutageMs
      if (outage.started >= end) break
      const s = Math.max(outage.started, start)
      const e = Math.min(outage.ended ?? end, end)
      if (e <= s) continue
      const down = e - s - coveredFrom(maintenance, m, s, e)
      if (down > 0) {
        downMs += down
        count++
      }
    }
    downMs = Math.min(downMs, Math.max(monitoredMs, 0))
    result[d] = {
      date: labels[d] as string,
      uptime_percent: monitoredMs > 0 ? uptimeFigure(downMs, monitoredMs) : null,
      down_seconds: Math.floor(downMs / 1000),
      outages: count,
      maintenance_seconds: Math.floor(maintenanceMs / 1000)
    }
  }
  return result
}
