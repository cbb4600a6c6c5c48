import type { SiteStatus } from '../rules/consensus.js'
import type { HeartbeatState } from '../rules/heartbeat.js'
import type { PageState } from '../rules/page-state.js'
import type { PublicCause } from '../rules/down-cause.js'
import type { MonitorKind } from '../rules/monitor.js'

/**
 * What a public status page shows, as `GET /status/{slug}.json` answers it; the HTML page, the Atom
 * feed and the page badge are made from the same view. Only what the page lists: never keys,
 * settings, expectations or other sites (decisions.md, Status pages).
 */
export interface StatusPageView {
  slug: string
  title: string
  description: string | null
  logo_url: string | null
  state: PageState
  /** When the view was made (ISO 8601, UTC). */
  generated_at: string
  /** When what the page shows last changed: the page itself, or an incident starting or ending. */
  updated_at: string
  sites: StatusPageSiteView[]
  /** The page's heartbeats, in its order: name, state, uptime and days only, never a ping URL or message. */
  heartbeats: StatusPageHeartbeatView[]
  /** The page's tcp, tls and dns monitors, in its order: name, kind, state, uptime and days only, never a target or check. */
  monitors: StatusPageMonitorView[]
  /**
   * Outages of the page's sites, heartbeats and monitors in the days shown: the ongoing ones first, then by start, newest
   * first; at most {@link PAGE_INCIDENTS}.
   */
  incidents: StatusPageIncident[]
}

export interface StatusPageSiteView {
  /** The site's anchor on the HTML page (`#site-ANCHOR`): its domain, or `s` and a number when the page names it by a display name. */
  anchor: string
  /** Null when the page names the site by a display name: the domain behind it is not shown. */
  domain: string | null
  /** The page's display name for the site, or the site's own name. */
  name: string
  /** Its uptime over the last 30 days (the status record's `uptime_percent.month`); null before it is known here. */
  uptime_percent: number | null
  status: SiteStatus
  partial: boolean
  slow: boolean
  /** Present only during a maintenance window. */
  maintenance?: { until: string; reason: string | null }
  /** Why its newest check was not clean, in public words; null when every location saw it up. */
  cause: PublicCause | null
  /** The last 90 UTC days, oldest first, today (so far) included; a day nothing was monitored has a null uptime. */
  days: StatusPageDay[]
}

/** A heartbeat as a public page shows it: no slug, ping URL, schedule or last message. */
export interface StatusPageHeartbeatView {
  /** Its anchor on the HTML page (`#site-ANCHOR`): `h` and a number. */
  anchor: string
  /** The page's display name for it, or its own name. */
  name: string
  state: HeartbeatState
  /** Its uptime over the last 30 days; null before its first ping. */
  uptime_percent: number | null
  /** The last 90 UTC days, as a site's. */
  days: StatusPageDay[]
}

/**
 * A tcp, tls or dns monitor as a public page shows it: its state by a site's rules, but no slug,
 * target host, port, resolver answer or cause (whose error texts may name them).
 */
export interface StatusPageMonitorView {
  /** Its anchor on the HTML page (`#site-ANCHOR`): `m` and a number. */
  anchor: string
  /** The page's display name for it, or its own name. */
  name: string
  kind: MonitorKind
  status: SiteStatus
  partial: boolean
  slow: boolean
  /** Present only during a maintenance window. */
  maintenance?: { until: string; reason: string | null }
  /** Its uptime over the last 30 days; null before it is known here. */
  uptime_percent: number | null
  /** The last 90 UTC days, as a site's. */
  days: StatusPageDay[]
}

export interface StatusPageDay {
  /** The UTC day, `YYYY-MM-DD`. */
  date: string
  /** That day's uptime by the status record's rule; null when nothing of the day was monitored. */
  uptime_percent: number | null
  /** Outage time inside the day (maintenance excluded), whole seconds. */
  down_seconds: number
  /** Outages that were down during the day. */
  outages: number
  /** Maintenance time inside the day, whole seconds. */
  maintenance_seconds: number
}

/** How many incidents a page shows at most: three a week over the 90 days, a long list for people to read. */
export const PAGE_INCIDENTS = 50

export interface StatusPageIncident {
  /** The outage's id: stable, the feed's entry ids are made from it. */
  id: number
  /** Null when the page names the site by a display name. */
  domain: string | null
  /** As the page names the site. */
  name: string
  started_at: string
  ended_at: string | null
  duration_seconds: number
}
