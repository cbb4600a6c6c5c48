/*
 * Monitors of kind tcp, tls and dns (issue 47): one check on one target host, with an identity of
 * their own, a slug. Each owns a `sites` row of its kind whose domain is `monitor:<slug>`, which no
 * domain can be (a heartbeat's is `heartbeat:<slug>`), so outages, uptime, SLA, maintenance,
 * events, alerts and the schedule are the sites' own, keyed by the row's id.
 */

/** The kinds a monitor may be: an http check is a site's (`POST /api/v1/sites`). */
export const MONITOR_KINDS = ['tcp', 'tls', 'dns'] as const
export type MonitorKind = (typeof MONITOR_KINDS)[number]

/** How events and outages name a monitor. */
export interface MonitorRef {
  kind: MonitorKind
  slug: string
}

const PREFIX = 'monitor:'

/** The `sites` row's domain of a monitor. */
export const monitorDomain = (slug: string): string => `${PREFIX}${slug}`

export const isMonitorKind = (kind: string): kind is MonitorKind => (MONITOR_KINDS as readonly string[]).includes(kind)

/** A `sites` row's monitor, when it is one (a web site, a heartbeat: null). */
export function monitorOf(row: { domain: string; kind?: string }): MonitorRef | null {
  if (row.kind === undefined || !isMonitorKind(row.kind) || !row.domain.startsWith(PREFIX)) return null
  // A removed monitor's row keeps its history under `monitor:<slug>~<id>`.
  return { kind: row.kind, slug: row.domain.slice(PREFIX.length).replace(/~\d+$/, '') }
}

/** Whether a `sites` row's domain is a monitor's identity rather than a web site's domain. */
export const isMonitorDomain = (domain: string): boolean => domain.startsWith(PREFIX)
