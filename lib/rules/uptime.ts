import { coveredMs, type Interval } from './intervals.js'

/** One outage as uptime sees it: a span of time, open-ended while ongoing. */
export interface OutageSpan {
  started_at: Date
  ended_at: Date | null
}

const HOUR = 3_600_000
export const UPTIME_WINDOWS = { day: 24 * HOUR, week: 7 * 24 * HOUR, month: 30 * 24 * HOUR } as const

export type UptimeWindows = { [K in keyof typeof UPTIME_WINDOWS]: number }

/**
 * How far back the in-memory state keeps outages and maintenance time: the longest window any
 * uptime figure served from memory covers (the status record's 30 days, the badges' 90).
 */
export const UPTIME_HORIZON_MS = 90 * 24 * HOUR

/** The monitored part of a window and the outage time inside it, in milliseconds. */
export interface WindowTime {
  /** Start of the monitored part (ms since the epoch); equal to `end` when nothing was monitored. */
  start: number
  end: number
  monitoredMs: number
  downMs: number
}

/**
 * The monitored part of [from, to): from the site's first recorded check (time before it is unknown,
 * not up) to `until` (now, or when tracking stopped), and the outage time inside it. An ongoing
 * outage lasts until `until`. No first check yet: nothing was monitored. `maintenance` (sorted,
 * disjoint) counts as neither monitored nor down.
 */
export function monitoredTime(
  outages: readonly OutageSpan[],
  firstCheckedAt: Date | null,
  from: number,
  to: number,
  until: number,
  maintenance: readonly Interval[] = []
): WindowTime {
  const end = Math.min(to, until)
  const start = firstCheckedAt === null ? end : Math.min(end, Math.max(from, firstCheckedAt.getTime()))
  let downMs = 0
  for (const o of outages) {
    const s = Math.max(o.started_at.getTime(), start)
    const e = Math.min(o.ended_at?.getTime() ?? end, end)
    if (e > s) downMs += e - s - coveredMs(s, e, maintenance)
  }
  const monitoredMs = end - start - coveredMs(start, end, maintenance)
  return { start, end, monitoredMs, downMs: Math.min(downMs, monitoredMs) }
}

/** 100 x (1 - down / monitored), rounded to three decimals, never above 100; 100 when nothing was monitored. */
export function uptimeFigure(downMs: number, monitoredMs: number): number {
  if (monitoredMs <= 0) return 100
  const percent = 100 * (1 - Math.min(downMs, monitoredMs) / monitoredMs)
  return Math.min(100, Math.round(percent * 1000) / 1000)
}

/**
 * 100 x (1 - outage time inside the window / monitored time inside the window) over the window that
 * ends now, where monitored time starts at the site's first recorded check.
 */
export function uptimePercent(
  outages: readonly OutageSpan[],
  firstCheckedAt: Date | null,
  now: Date,
  windowMs: number,
  maintenance: readonly Interval[] = []
): number {
  const end = now.getTime()
  const { downMs, monitoredMs } = monitoredTime(outages, firstCheckedAt, end - windowMs, end, end, maintenance)
  return uptimeFigure(downMs, monitoredMs)
}

export function uptimeSummary(
  outages: readonly OutageSpan[],
  firstCheckedAt: Date | null,
  now: Date,
  maintenance: readonly Interval[] = []
): UptimeWindows {
  return {
    day: uptimePercent(outages, firstCheckedAt, now, UPTIME_WINDOWS.day, maintenance),
    week: uptimePercent(outages, firstCheckedAt, now, UPTIME_WINDOWS.week, maintenance),
    month: uptimePercent(outages, firstCheckedAt, now, UPTIME_WINDOWS.month, maintenance)
  }
}
