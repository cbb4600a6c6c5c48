import { dailyUptime } from '../rules/daily-uptime.js'
import type { HeartbeatState } from '../rules/heartbeat.js'
import type { Interval } from '../rules/intervals.js'
import type { PageSiteState } from '../rules/page-state.js'
import { UPTIME_WINDOWS, uptimePercent } from '../rules/uptime.js'
import type { SiteOutageTimes } from '../store/outages.js'
import type { StatusPageHeartbeat } from '../store/status-pages.js'
import type { StatusPageHeartbeatView } from './status-page-view.js'

/**
 * A heartbeat's state as the page state reads a site's: late is degraded (as a slow site), never
 * pinged is pending, down is down. Paused is left out: a job stopped on purpose says nothing of
 * the page.
 */
export function heartbeatPageState(state: HeartbeatState): PageSiteState | null {
  const base = { partial: false, slow: false, maintenance: false }
  if (state === 'paused') return null
  if (state === 'late') return { ...base, status: 'up', slow: true }
  if (state === 'new') return { ...base, status: 'pending' }
  return { ...base, status: state }
}

/**
 * A page's heartbeat as the public sees it: its name on the page, its state as stored by the last
 * ping or deadline, its 30-day uptime and 90 days from its outages and maintenance, by the sites'
 * rules (monitored from its first ping). Only these: the ping URL, schedule and last message are
 * for `read` keys.
 */
export function heartbeatView({
  heartbeat,
  state,
  outages,
  firstPingAt,
  maintenance,
  now
}: {
  heartbeat: StatusPageHeartbeat
  state: HeartbeatState
  outages: readonly SiteOutageTimes[]
  firstPingAt: number | null
  maintenance: Interval[]
  now: number
}): StatusPageHeartbeatView {
  const spans = outages.map((o) => ({ started_at: new Date(o.started), ended_at: o.ended === null ? null : new Date(o.ended) }))
  return {
    anchor: `h${heartbeat.site_id}`,
    name: heartbeat.display_name ?? heartbeat.name,
    state,
    uptime_percent:
      firstPingAt === null ? null : uptimePercent(spans, new Date(firstPingAt), new Date(now), UPTIME_WINDOWS.month, maintenance),
    days: dailyUptime({ outages, firstCheckedAt: firstPingAt, maintenance, now })
  }
}
