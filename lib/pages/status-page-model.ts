import { maintenanceOf } from '../monitoring/state/site-maintenance.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import { dailyUptime, firstDayStart, PAGE_DAYS } from '../rules/daily-uptime.js'
import { durationSecondsMs } from '../rules/outages.js'
import type { Interval } from '../rules/intervals.js'
import { publicCause, type PublicCause } from '../rules/down-cause.js'
import { pageState, type PageSiteState } from '../rules/page-state.js'
import type { Db } from '../store/db.js'
import { listMaintenanceWindows, type StoredWindow } from '../store/maintenance.js'
import { listSitesOutageTimes, type SiteOutageTimes } from '../store/outages.js'
import { listHeartbeatStates } from '../store/heartbeats.js'
import { listFirstCheckedAt } from '../store/sites.js'
import { findStatusPage, type StatusPageMonitor, type StatusPageSite } from '../store/status-pages.js'
import { heartbeatPageState, heartbeatView } from './status-page-heartbeats.js'
import {
  PAGE_INCIDENTS,
  type StatusPageIncident,
  type StatusPageMonitorView,
  type StatusPageSiteView,
  type StatusPageView
} from './status-page-view.js'

const iso = (ms: number): string => new Date(ms).toISOString()

/** A site the page lists but the in-memory state does not hold yet (added a moment ago): not checked yet. */
const UNKNOWN: PageSiteState = { status: 'pending', partial: false, slow: false, maintenance: false }

/** The site's current state as the page shows it, and its maintenance in force, from memory. */
function siteNow(
  states: SiteStates,
  site: StatusPageSite | StatusPageMonitor,
  now: Date
): { state: PageSiteState; name: string; view: Partial<StatusPageSiteView>; cause: PublicCause | null } {
  const current = states.current(site.domain, now)
  if (current === null) return { state: UNKNOWN, name: site.display_name ?? site.name, view: { uptime_percent: null }, cause: null }
  const state: PageSiteState = {
    status: current.status,
    partial: current.partial,
    slow: current.slow,
    maintenance: current.maintenance === true
  }
  const record = states.statusRecord(site.domain, now)
  const maintenance = state.maintenance ? record?.maintenance : undefined
  // A site never checked has no uptime yet, not 100 %.
  const view: Partial<StatusPageSiteView> = { uptime_percent: record && record.checked_at !== null ? record.uptime_percent.month : null }
  if (maintenance !== undefined) view.maintenance = maintenance
  return { state, name: site.display_name ?? current.name, view, cause: publicCause(current.cause ?? null) }
}

/**
 * A site's maintenance time in the page's days. Shared with the in-memory state and worked out once
 * a day per set of windows: a weekly window's time-zone arithmetic over 90 days is a quarter of a
 * millisecond, fifty times a render.
 */
function maintenanceTime(windows: readonly StoredWindow[] | undefined, from: number): Interval[] {
  return windows === undefined || windows.length === 0 ? [] : maintenanceOf(windows).days(from, PAGE_DAYS)
}

/** Ongoing first, then newest start first; ties by id, newest first, so the order never flickers. */
function incidentOrder(a: StatusPageIncident & { started: number }, b: StatusPageIncident & { started: number }): number {
  const ongoing = Number(b.ended_at === null) - Number(a.ended_at === null)
  return ongoing || b.started - a.started || b.id - a.id
}

/**
 * The public view of the page `slug` at `now`, or null when there is no such page: its sites' and
 * monitors' current state from memory, its heartbeats' as stored, the page state by its rule over
 * all three, each one's 90 daily bars, and the incidents. Five reads whatever the page's size: the
 * page, the outages of what it lists overlapping the 90 days (one query), their maintenance
 * windows, their first checks (a heartbeat's first ping) and the heartbeats' states. Only what the
 * page lists goes in: never keys, settings, expectations, a monitor's target or other sites
 * (decisions.md, Status pages).
 */
export async function loadStatusPageView({
  db,
  states,
  slug,
  now
}: {
  db: Db
  states: SiteStates
  slug: string
  now: Date
}): Promise<StatusPageView | null> {
  const page = await findStatusPage({ db, slug })
  if (page === null) return null
  const at = now.getTime()
  const from = firstDayStart(at, PAGE_DAYS)
  const heartbeatIds = page.heartbeats.map((h) => h.site_id)
  const ids = [...page.sites.map((s) => s.site_id), ...heartbeatIds, ...page.monitors.map((m) => m.site_id)]
  const [outages, windows, firstChecks, heartbeatStates] = await Promise.all([
    listSitesOutageTimes({ db, siteIds: ids, from: new Date(from), to: now }),
    listMaintenanceWindows({ db, siteIds: ids }),
    listFirstCheckedAt({ db, siteIds: ids }),
    listHeartbeatStates({ db, siteIds: heartbeatIds })
  ])
  const bySite = new Map<number, SiteOutageTimes[]>()
  for (const o of outages) {
    const list = bySite.get(o.site_id)
    if (list) list.push(o)
    else bySite.set(o.site_id, [o])
  }

  const siteStates: PageSiteState[] = []
  const incidents: Array<StatusPageIncident & { started: number }> = []
  let updated = page.changed_at.getTime()
  /** A listed monitor's outages as the page's incidents, under the name (and domain) the page shows. */
  const addIncidents = (own: readonly SiteOutageTimes[], domain: string | null, name: string): void => {
    for (const o of own) {
      updated = Math.max(updated, o.ended ?? o.started)
      incidents.push({
        id: o.id,
        domain,
        name,
        started_at: iso(o.started),
        ended_at: o.ended === null ? null : iso(o.ended),
        duration_seconds: durationSecondsMs(o.started, o.ended, at),
        started: o.started
      })
    }
  }
  const sites = page.sites.map((site): StatusPageSiteView => {
    const { state, name, view, cause } = siteNow(states, site, now)
    siteStates.push(state)
    // A display name stands for the site: its domain is not shown to the public (decisions.md).
    const domain = site.display_name === null ? site.domain : null
    const own: readonly SiteOutageTimes[] = bySite.get(site.site_id) ?? []
    addIncidents(own, domain, name)
    return {
      anchor: domain ?? `s${site.site_id}`,
      domain,
      name,
      uptime_percent: null,
      status: state.status,
      partial: state.partial,
      slow: state.slow,
      cause,
      ...view,
      days: dailyUptime({
        outages: own,
        firstCheckedAt: firstChecks.get(site.site_id)?.getTime() ?? null,
        maintenance: maintenanceTime(windows.get(site.site_id), from),
        now: at
      })
    }
  })
  const monitors = page.monitors.map((monitor): StatusPageMonitorView => {
    // Its cause is left out: a connect or resolver error names the target the page does not show.
    const { state, name, view } = siteNow(states, monitor, now)
    siteStates.push(state)
    const own: readonly SiteOutageTimes[] = bySite.get(monitor.site_id) ?? []
    addIncidents(own, null, name)
    return {
      anchor: `m${monitor.site_id}`,
      name,
      kind: monitor.kind,
      status: state.status,
      partial: state.partial,
      slow: state.slow,
      uptime_percent: null,
      ...view,
      days: dailyUptime({
        outages: own,
        firstCheckedAt: firstChecks.get(monitor.site_id)?.getTime() ?? null,
        maintenance: maintenanceTime(windows.get(monitor.site_id), from),
        now: at
      })
    }
  })
  const heartbeats = page.heartbeats.map((heartbeat) => {
    const own: readonly SiteOutageTimes[] = bySite.get(heartbeat.site_id) ?? []
    const view = heartbeatView({
      heartbeat,
      state: heartbeatStates.get(heartbeat.site_id) ?? 'new',
      outages: own,
      firstPingAt: firstChecks.get(heartbeat.site_id)?.getTime() ?? null,
      maintenance: maintenanceTime(windows.get(heartbeat.site_id), from),
      now: at
    })
    const counted = heartbeatPageState(view.state)
    if (counted !== null) siteStates.push(counted)
    addIncidents(own, null, view.name)
    return view
  })
  incidents.sort(incidentOrder)
  return {
    slug: page.slug,
    title: page.title,
    description: page.description,
    logo_url: page.logo_url,
    state: pageState(siteStates),
    generated_at: now.toISOString(),
    updated_at: iso(Math.min(updated, at)),
    sites,
    heartbeats,
    monitors,
    incidents: incidents.slice(0, PAGE_INCIDENTS).map(({ started: _started, ...incident }) => incident)
  }
}
