/** One outage as uptime sees it: a span of time, open-ended while ongoing. */
export interface OutageSpan {
  started_at: Date
  ended_at: Date | null
}

const HOUR = 3_600_000
export const UPTIME_WINDOWS = { day: 24 * HOUR, week: 7 * 24 * HOUR, month: 30 * 24 * HOUR } as const

export type UptimeWindows = { [K in keyof typeof UPTIME_WINDOWS]: number }

/**
 * 100 x (1 - outage time inside the window / monitored time inside the window), where monitored
 * time starts when the site became tracked. No monitored time yet means 100. Rounded to three
 * decimals and never above 100.
 */
export function uptimePercent(outages: readonly OutageSpan[], trackedSince: Date, now: Date, windowMs: number): number {
  const end = now.getTime()
  const from = Math.max(end - windowMs, trackedSince.getTime())
  const monitored = end - from
  if (monitored <= 0) return 100
  let down = 0
  for (const o of outages) {
    const s = Math.max(o.started_at.getTime(), from)
    const e = Math.min(o.ended_at?.getTime() ?? end, end)
    if (e > s) down += e - s
  }
  const percent = 100 * (1 - Math.min(down, monitored) / monitored)
  return Math.min(100, Math.round(percent * 1000) / 1000)
}

export function uptimeSummary(outages: readonly OutageSpan[], trackedSince: Date, now: Date): UptimeWindows {
  return {
    day: uptimePercent(outages, trackedSince, now, UPTIME_WINDOWS.day),
    week: uptimePercent(outages, trackedSince, now, UPTIME_WINDOWS.week),
    month: uptimePercent(outages, trackedSince, now, UPTIME_WINDOWS.month)
  }
}
