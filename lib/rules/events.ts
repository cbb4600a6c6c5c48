import { daysRemaining, type SiteCertificate } from './certificates.js'
import { durationSeconds } from './outages.js'
import { monitorOf, type MonitorRef } from './monitor.js'

/** Every event type the service announces, on streams and to webhooks alike. */
export const EVENT_TYPES = [
  'outage.opened',
  'outage.closed',
  'site.added',
  'site.removed',
  'certificate.expiring',
  'site.slow',
  'site.slow_ended',
  'maintenance.started',
  'maintenance.ended',
  'heartbeat.late',
  'heartbeat.late_ended'
] as const
export type EventType = (typeof EVENT_TYPES)[number]

/**
 * The events that change what a status page shows, the ones its streams carry. `site.added` and
 * `site.removed` are on no page when delivered (a removed site leaves its pages in the same
 * transaction), and `certificate.expiring` is not on the page.
 */
export const PAGE_EVENT_TYPES = [
  'outage.opened',
  'outage.closed',
  'site.slow',
  'site.slow_ended',
  'maintenance.started',
  'maintenance.ended',
  'heartbeat.late',
  'heartbeat.late_ended'
] as const satisfies readonly EventType[]

/** A site as events name it. */
export interface EventSite {
  domain: string
  name: string
  /** The row's kind: a monitor's (tcp, tls, dns) events name it (`monitor`); absent or `http` for a web site. */
  kind?: string
}

/** A monitor's events name it, `monitor: {kind, slug}`, beside `site` (whose domain is `monitor:<slug>`); a web site's do not. */
function named(site: EventSite): { monitor?: MonitorRef } {
  const monitor = monitorOf(site)
  return monitor === null ? {} : { monitor }
}

/** The payload of `outage.opened` and `outage.closed`: the outage record plus its site. */
export interface OutageEventData {
  domain: string
  name: string
  started_at: string
  ended_at: string | null
  duration_seconds: number
  site: EventSite
  /** The monitor, for a monitor's event (tcp, tls, dns); absent for a web site's. */
  monitor?: MonitorRef
}

/** The payload of `site.added` and `site.removed`: the site and when it changed. */
export interface SiteEventData {
  site: EventSite
  at: string
  /** The monitor, for a monitor's event (tcp, tls, dns); absent for a web site's. */
  monitor?: MonitorRef
}

/** The payload of `certificate.expiring`: the site, its certificate, and the threshold crossed. */
export interface CertificateEventData {
  site: EventSite
  expires_at: string
  days_remaining: number
  threshold_days: number
  issuer: string | null
  /** When the check that saw the certificate ran. */
  at: string
  /** The monitor, for a monitor's event (tcp, tls, dns); absent for a web site's. */
  monitor?: MonitorRef
}

/** The payload of `site.slow` and `site.slow_ended`: the check that made it so, and the threshold. */
export interface SlowEventData {
  site: EventSite
  response_ms: number | null
  max_response_ms: number | null
  /** When the check ran. */
  at: string
  /** The monitor, for a monitor's event (tcp, tls, dns); absent for a web site's. */
  monitor?: MonitorRef
}

/** The payload of `maintenance.started` and `maintenance.ended`: the site, the window's end and reason. */
export interface MaintenanceEventData {
  site: EventSite
  /** When the maintenance ends (started) or ended (ended). */
  until: string
  reason: string | null
  /** When the check that saw the change ran. */
  at: string
  /** The monitor, for a monitor's event (tcp, tls, dns); absent for a web site's. */
  monitor?: MonitorRef
}

export type EventData =
  | OutageEventData
  | HeartbeatOutageEventData
  | HeartbeatLateEventData
  | SiteEventData
  | CertificateEventData
  | SlowEventData
  | MaintenanceEventData

/** An event to append: what changed, the site it concerns, its payload, when it happened. */
export interface NewEvent {
  type: EventType
  siteId: number | null
  data: EventData
  at: Date
}

/**
 * The event announcing an outage opened or closed by a check at `at`. The record is the one the
 * outages endpoint lists, as it stood when the event happened.
 */
export function outageEvent(
  kind: 'open' | 'close',
  site: EventSite & { id: number },
  outage: { started_at: Date; ended_at: Date | null },
  at: Date
): NewEvent {
  return {
    type: kind === 'open' ? 'outage.opened' : 'outage.closed',
    siteId: site.id,
    at,
    data: {
      domain: site.domain,
      name: site.name,
      started_at: outage.started_at.toISOString(),
      ended_at: outage.ended_at?.toISOString() ?? null,
      duration_seconds: durationSeconds(outage.started_at, outage.ended_at, at),
      site: { domain: site.domain, name: site.name },
      ...named(site)
    }
  }
}

/** The event announcing a site tracked (added, or resumed after a removal) or no longer tracked. */
export function siteEvent(kind: 'added' | 'removed', site: EventSite & { id: number }, at: Date): NewEvent {
  return {
    type: kind === 'added' ? 'site.added' : 'site.removed',
    siteId: site.id,
    at,
    data: { site: { domain: site.domain, name: site.name }, at: at.toISOString(), ...named(site) }
  }
}

/** The event announcing that a check at `at` found the site's certificate `thresholdDays` or fewer days from expiry. */
export function certificateEvent(
  site: EventSite & { id: number },
  certificate: SiteCertificate,
  thresholdDays: number,
  at: Date
): NewEvent {
  return {
    type: 'certificate.expiring',
    siteId: site.id,
    at,
    data: {
      site: { domain: site.domain, name: site.name },
      expires_at: certificate.expiresAt.toISOString(),
      days_remaining: daysRemaining(certificate.expiresAt, at),
      threshold_days: thresholdDays,
      issuer: certificate.issuer,
      at: at.toISOString(),
      ...named(site)
    }
  }
}

/** The event announcing that a check at `at` made the site slow, or ended its being slow. */
export function slowEvent(
  type: 'site.slow' | 'site.slow_ended',
  site: EventSite & { id: number },
  check: { response_ms: number | null; max_response_ms: number | null },
  at: Date
): NewEvent {
  return {
    type,
    siteId: site.id,
    at,
    data: {
      site: { domain: site.domain, name: site.name },
      response_ms: check.response_ms,
      max_response_ms: check.max_response_ms,
      at: at.toISOString(),
      ...named(site)
    }
  }
}

/** The event announcing that a check at `at` found the site's maintenance begun, or over. */
export function maintenanceEvent(
  kind: 'started' | 'ended',
  site: EventSite & { id: number },
  maintenance: { until: Date; reason: string | null },
  at: Date
): NewEvent {
  return {
    type: kind === 'started' ? 'maintenance.started' : 'maintenance.ended',
    siteId: site.id,
    at,
    data: {
      site: { domain: site.domain, name: site.name },
      until: maintenance.until.toISOString(),
      reason: maintenance.reason,
      at: at.toISOString(),
      ...named(site)
    }
  }
}

/** Whether an event type matches a subscription's list; no list means every type. */
export function wantsType(types: readonly string[] | null, type: string): boolean {
  return types === null || types.includes(type)
}

/** A heartbeat as its events name it: the monitor's kind and slug, and the heartbeat. */
export interface HeartbeatOutageEventData {
  domain: null
  name: string
  started_at: string
  ended_at: string | null
  duration_seconds: number
  monitor: { kind: 'heartbeat'; slug: string }
  heartbeat: { slug: string; name: string }
}

/**
 * The event announcing a heartbeat's outage opened or closed: the sites' `outage.opened` and
 * `outage.closed`, naming the heartbeat (`monitor`, `heartbeat`) where a site's name its site.
 */
export function heartbeatOutageEvent(
  kind: 'open' | 'close',
  heartbeat: { siteId: number; slug: string; name: string },
  outage: { started_at: Date; ended_at: Date | null },
  at: Date
): NewEvent {
  return {
    type: kind === 'open' ? 'outage.opened' : 'outage.closed',
    siteId: heartbeat.siteId,
    at,
    data: {
      domain: null,
      name: heartbeat.name,
      started_at: outage.started_at.toISOString(),
      ended_at: outage.ended_at?.toISOString() ?? null,
      duration_seconds: durationSeconds(outage.started_at, outage.ended_at, at),
      monitor: { kind: 'heartbeat', slug: heartbeat.slug },
      heartbeat: { slug: heartbeat.slug, name: heartbeat.name }
    }
  }
}

/** The payload of `heartbeat.late` and `heartbeat.late_ended`: the heartbeat, named as its outage events name it. */
export interface HeartbeatLateEventData {
  domain: null
  name: string
  monitor: { kind: 'heartbeat'; slug: string }
  heartbeat: { slug: string; name: string }
  /** `late`, or the state that ended it: `up` (a ping came within grace), `down` or `paused`. */
  state: 'late' | 'up' | 'down' | 'paused'
  /** When the ping was due (late), else null. */
  due_at: string | null
  /** When it goes down without a ping (late), else null. */
  down_at: string | null
  at: string
}

/**
 * The event announcing a heartbeat past due (`heartbeat.late`: its due time and when it goes down
 * without a ping), or no longer late (`heartbeat.late_ended`, with the state that ended it: a ping
 * within grace, the grace's end, a failure, a pause), as `site.slow` and `site.slow_ended` pair.
 */
export function heartbeatLateEvent(
  heartbeat: { siteId: number; slug: string; name: string },
  change: { state: HeartbeatLateEventData['state']; dueAt: Date | null; downAt: Date | null },
  at: Date
): NewEvent {
  const late = change.state === 'late'
  return {
    type: late ? 'heartbeat.late' : 'heartbeat.late_ended',
    siteId: heartbeat.siteId,
    at,
    data: {
      domain: null,
      name: heartbeat.name,
      monitor: { kind: 'heartbeat', slug: heartbeat.slug },
      heartbeat: { slug: heartbeat.slug, name: heartbeat.name },
      state: change.state,
      due_at: late ? (change.dueAt?.toISOString() ?? null) : null,
      down_at: late ? (change.downAt?.toISOString() ?? null) : null,
      at: at.toISOString()
    }
  }
}
