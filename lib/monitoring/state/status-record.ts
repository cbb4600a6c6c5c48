import type { StoredSiteState } from '../../store/site-states.js'
import type { SiteStatus } from '../../rules/consensus.js'
import { daysRemaining } from '../../rules/certificates.js'
import { durationSeconds } from '../../rules/outages.js'
import { siteIntervalMs } from '../../rules/site-interval.js'
import { settingsView, type SettingsView } from '../../rules/site-settings.js'
import { uptimeSummary, type OutageSpan, type UptimeWindows } from '../../rules/uptime.js'
import type { SiteMaintenance } from './site-maintenance.js'
import type { DownCause } from '../../rules/down-cause.js'

/** The status endpoint's record (spec 2.1). */
export interface StatusRecord {
  domain: string
  name: string
  status: SiteStatus
  blocked: boolean
  partial: boolean
  response_ms: number | null
  checked_at: string | null
  uptime_percent: UptimeWindows
  last_outage: { started_at: string; ended_at: string | null; duration_seconds: number } | null
  /** The certificate the newest check saw (the one a majority of its locations agree on); null when none. */
  tls: { expires_at: string; days_remaining: number; issuer: string | null } | null
  /** Up, but slower than the site's `max_response_ms` (the slow rule); false while the verdict is stale. */
  slow: boolean
  /** The site's own settings: only what is set. */
  settings: SettingsView
  /**
   * Why the newest check was not clean: its failing locations' errors, codes and HTTP statuses, and
   * the words they add up to; null when every location saw the site up, or the verdict is stale.
   */
  cause: DownCause | null
  url: string
  /** Present only during a maintenance window: when the maintenance ends, and why. */
  maintenance?: { until: string; reason: string | null }
}

/** What a badge needs to know about a site: no uptime arithmetic, so a badge hit stays cheap. */
export interface CurrentStatus {
  name: string
  status: SiteStatus
  blocked: boolean
  partial: boolean
  slow: boolean
  /** In a maintenance window now. */
  maintenance?: boolean
  /** Why the newest check was not clean, while it is fresh (see {@link StatusRecord.cause}). */
  cause?: DownCause | null
}

/** What uptime figures over any window up to the horizon are made of (`SiteStates.uptimeSource`). */
export interface UptimeSource {
  id: number
  /** The tracking period's first check; null: never checked. */
  firstCheckedAt: Date | null
  /** Outages ended inside the horizon or ongoing, oldest first: the state's own array, never to be changed. */
  outages: readonly OutageSpan[]
  /** The site's maintenance windows; undefined when it has none. */
  maintenance: SiteMaintenance | undefined
}

/** A site's {@link UptimeSource}: its state's own outages, not a copy. */
export function uptimeSource({ site, outages }: StoredSiteState, maintenance: SiteMaintenance | undefined): UptimeSource {
  return { id: site.id, firstCheckedAt: site.first_checked_at, outages, maintenance }
}

/** A newest check older than this many of the site's intervals means nobody knows: `unavailable` (`pending`: none yet). */
const FRESH_INTERVALS = 3

/** A site's stored verdict, as its row keeps it. */
export interface StoredVerdict {
  status: SiteStatus
  blocked: boolean
  partial: boolean
  response_ms: number | null
  checked_at: Date | null
  /** The site's own check interval in seconds; null: the service's. */
  interval_s: number | null
}

/**
 * The verdict to show for a site now: the stored one while its newest check is at most three of its
 * intervals old (its own, or `intervalMs`, CHECK_INTERVAL_S, when it has none), otherwise
 * `unavailable` with `blocked`, `partial` false and no response time; `pending` so while the site was
 * never checked. The status endpoint, badges,
 * pages and the operator tool all show sites through this rule.
 */
export function currentVerdict(site: StoredVerdict, now: Date, intervalMs: number): Omit<StoredVerdict, 'checked_at' | 'interval_s'> {
  return isFresh(site, now, intervalMs)
    ? { status: site.status, blocked: site.blocked, partial: site.partial, response_ms: site.response_ms }
    : { status: verdictStatus(site, now, intervalMs), blocked: false, partial: false, response_ms: null }
}

/** The current verdict's status alone, with no object made: counted for every site at each list render. */
export function verdictStatus(site: StoredVerdict, now: Date, intervalMs: number): SiteStatus {
  if (site.checked_at === null) return 'pending'
  return isFresh(site, now, intervalMs) ? site.status : 'unavailable'
}

/** Whether the site's newest check is recent enough for its verdict to stand (see {@link currentVerdict}). */
export function isFresh(site: StoredVerdict, now: Date, intervalMs: number): boolean {
  return (
    site.checked_at !== null && now.getTime() - site.checked_at.getTime() <= FRESH_INTERVALS * siteIntervalMs(site.interval_s, intervalMs)
  )
}

/**
 * A site's status record at `now`: its current verdict, uptime, last outage and certificate, and
 * the maintenance in force, if any (its time is left out of uptime).
 */
export function statusRecord(
  { site, outages, lastOutage }: StoredSiteState,
  now: Date,
  { intervalMs, publicUrl, maintenance }: { intervalMs: number; publicUrl: string; maintenance?: SiteMaintenance }
): StatusRecord {
  const verdict = currentVerdict(site, now, intervalMs)
  const inForce = maintenance?.at(now.getTime()) ?? null
  return {
    domain: site.domain,
    name: site.name,
    status: verdict.status,
    blocked: verdict.blocked,
    partial: verdict.partial,
    response_ms: verdict.response_ms,
    checked_at: site.checked_at?.toISOString() ?? null,
    uptime_percent: uptimeSummary(outages, site.first_checked_at, now, maintenance?.recent(now.getTime())),
    last_outage:
      lastOutage === null
        ? null
        : {
            started_at: lastOutage.started_at.toISOString(),
            ended_at: lastOutage.ended_at?.toISOString() ?? null,
            duration_seconds: durationSeconds(lastOutage.started_at, lastOutage.ended_at, now)
          },
    tls:
      site.tls_expires_at === null
        ? null
        : {
            expires_at: site.tls_expires_at.toISOString(),
            days_remaining: daysRemaining(site.tls_expires_at, now),
            issuer: site.tls_issuer
          },
    slow: site.slow && verdict.status === 'up',
    settings: settingsView(site),
    cause: isFresh(site, now, intervalMs) ? site.cause : null,
    url: `${publicUrl}/sites/${site.domain}`,
    ...(inForce === null ? {} : { maintenance: { until: new Date(inForce.until).toISOString(), reason: inForce.reason } })
  }
}
