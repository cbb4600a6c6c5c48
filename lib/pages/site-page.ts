import type { StatusRecord } from '../monitoring/state/status-record.js'
import { expiresSoon } from '../rules/certificates.js'
import type { SiteStatus } from '../rules/consensus.js'
import { durationSeconds } from '../rules/outages.js'
import type { EventRow } from '../store/events.js'
import type { ListedOutage } from '../store/outages.js'
import type { ResponseTimeBucket } from '../store/response-times.js'
import { chartModel } from './chart.js'
import { embedCode, siteBadgeEmbeds } from './embed.js'
import { causeContext, humanDuration, humanMs, humanPercent, humanTime, statusExplanation, statusLabel } from './format.js'

/** The chart's period and resolution: a day in five-minute buckets, 288 points at most. */
export const CHART_PERIOD_MS = 24 * 3_600_000
export const CHART_BUCKET_MS = 5 * 60_000

/** How many of a site's outages its page lists. */
export const PAGE_OUTAGES = 10

/** How many of a site's events (kept 7 days) its page lists. */
export const PAGE_EVENTS = 20

/** Each event type in words. */
const EVENT_LABELS: Record<string, string> = {
  'outage.opened': 'Outage started',
  'outage.closed': 'Outage ended',
  'site.added': 'Monitoring started',
  'site.removed': 'Monitoring stopped',
  'certificate.expiring': 'Certificate expiring soon',
  'maintenance.started': 'Maintenance started',
  'maintenance.ended': 'Maintenance ended'
}

const WINDOWS = [
  { key: 'day', window: 'Last 24 hours' },
  { key: 'week', window: 'Last 7 days' },
  { key: 'month', window: 'Last 30 days' }
] as const

/** The site page's template context: every value is text for Handlebars to escape, or a number. */
export function sitePageContext({
  record,
  outages,
  buckets,
  events = [],
  publicUrl,
  now
}: {
  record: StatusRecord
  outages: readonly ListedOutage[]
  /** The site's recent events, newest first. */
  events?: readonly EventRow[]
  buckets: readonly ResponseTimeBucket[]
  publicUrl: string
  now: Date
}): Record<string, unknown> {
  return {
    title: record.name,
    site: {
      name: record.name,
      domain: record.domain,
      status: record.status,
      label: statusLabel(record),
      explanation: statusExplanation(record),
      checkedAt: record.checked_at === null ? null : humanTime(record.checked_at),
      checkedAtIso: record.checked_at,
      responseTime: humanMs(record.response_ms),
      cause: causeContext(record.cause)
    },
    maintenance: maintenanceContext(record.maintenance),
    certificate: certificateContext(record.tls),
    badgePath: `/api/badge/${record.domain}`,
    uptime: WINDOWS.map(({ key, window }) => ({ key, window, value: humanPercent(record.uptime_percent[key]) })),
    chart: chartModel(buckets, { from: new Date(now.getTime() - CHART_PERIOD_MS), to: now, bucketMs: CHART_BUCKET_MS }),
    outages: outages.map((o) => {
      const startedIso = o.started_at.toISOString()
      const endedIso = o.ended_at?.toISOString() ?? null
      return {
        started: humanTime(startedIso),
        startedIso,
        ended: endedIso === null ? null : humanTime(endedIso),
        endedIso,
        duration: humanDuration(durationSeconds(o.started_at, o.ended_at, now)),
        cause: causeContext(o.cause)
      }
    }),
    events: events.map((e) => {
      const iso = e.created_at.toISOString()
      return { type: e.type, label: EVENT_LABELS[e.type] ?? e.type, at: humanTime(iso), atIso: iso }
    }),
    embed: embedCode({ publicUrl, domain: record.domain, name: record.name }),
    badges: siteBadgeEmbeds({ publicUrl, domain: record.domain, name: record.name })
  }
}

/** The maintenance line of a site page, during a window. */
function maintenanceContext(maintenance: StatusRecord['maintenance']): Record<string, unknown> | null {
  if (maintenance === undefined) return null
  return { until: humanTime(maintenance.until), untilIso: maintenance.until, reason: maintenance.reason }
}

/** The certificate line of a site page, and its warning when it expires in under 14 days. */
function certificateContext(tls: StatusRecord['tls']): Record<string, unknown> | null {
  if (tls === null) return null
  const days = tls.days_remaining
  const left = days < 0 ? 'expired' : days === 0 ? 'less than a day left' : days === 1 ? '1 day left' : `${days} days left`
  return {
    expires: humanTime(tls.expires_at),
    expiresIso: tls.expires_at,
    left,
    issuer: tls.issuer,
    warning: expiresSoon(days)
      ? `The TLS certificate expires on ${humanTime(tls.expires_at)} (${left}). Renew it before then, or visitors will see a security error.`
      : null
  }
}

/** Sites listed on one page of `/`. */
export const SITES_PER_PAGE = 500

/** The site list's template context for page `page` (1-based) of the tracked sites. */
export function siteListContext({
  total,
  counts,
  records,
  page
}: {
  total: number
  counts: Readonly<Record<SiteStatus, number>>
  records: readonly StatusRecord[]
  page: number
}): Record<string, unknown> {
  const pages = Math.max(1, Math.ceil(total / SITES_PER_PAGE))
  const statuses: SiteStatus[] = ['up', 'down', 'unconfirmed', 'unavailable', 'pending']
  return {
    title: 'Tracked sites',
    total,
    counts: statuses.filter((s) => counts[s] > 0).map((status) => ({ status, count: counts[status] })),
    // The records of this page only (see SiteStates.listPage).
    sites: records.map((r) => ({
      name: r.name,
      domain: r.domain,
      status: r.status,
      label: statusLabel(r),
      maintenance: r.maintenance !== undefined,
      responseTime: humanMs(r.response_ms),
      uptimeDay: humanPercent(r.uptime_percent.day),
      checkedAt: r.checked_at === null ? null : humanTime(r.checked_at),
      checkedAtIso: r.checked_at
    })),
    page,
    pages: pages > 1 ? pages : null,
    previous: page > 1 ? page - 1 : null,
    next: page < pages ? page + 1 : null
  }
}
