import { alertKindOf } from '../rules/alert-policy.js'
import type { AlertKind } from '../rules/alert-timeline.js'
import { listPolicies } from '../store/alert-config.js'
import { endAlerts, insertAlerts, moveAlertCursor, readAlertCursor, type AlertInsert, type AlertSubject } from '../store/alert-state.js'
import { listMonitorAlerting } from '../store/alert-targets.js'
import type { Db } from '../store/db.js'
import { latestEventId, listEventsAfter, type EventRow } from '../store/events.js'

/** Events read per round. */
const BATCH = 500

/** The event types alerting reads; the others only move the cursor. */
const READ = new Set(['outage.opened', 'outage.closed', 'site.slow', 'site.slow_ended', 'certificate.expiring', 'heartbeat.late'])

type Data = Record<string, unknown>
const obj = (v: unknown): Data | null => (typeof v === 'object' && v !== null ? (v as Data) : null)
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null)

/**
 * The monitor an event names: a site (`site: {domain, name}`), or another kind (`monitor: {kind,
 * slug}` with `heartbeat: {slug, name}` and the like), as the events' payloads carry them.
 */
export function subjectOf(data: Data): AlertSubject {
  const monitor = obj(data.monitor)
  const kind = str(monitor?.kind) ?? 'http'
  const named = obj(data.site) ?? obj(data[kind]) ?? obj(data.heartbeat)
  const domain = str(named?.domain) ?? str(data.domain)
  const slug = str(monitor?.slug) ?? str(named?.slug)
  const name = str(named?.name) ?? str(data.name) ?? domain ?? slug ?? 'monitor'
  return { monitor: kind, domain, slug, name }
}

/** A notice's detail line, from its event's payload. */
function detailOf(type: string, data: Data): string | null {
  if (type === 'certificate.expiring' && typeof data.days_remaining === 'number') {
    const days = data.days_remaining
    return days <= 0 ? 'the certificate has expired' : `the certificate expires in ${days} day${days === 1 ? '' : 's'}`
  }
  if (type === 'site.slow' && typeof data.response_ms === 'number')
    return `${data.response_ms} ms${typeof data.max_response_ms === 'number' ? `, over ${data.max_response_ms} ms` : ''}`
  return null
}

const time = (v: unknown, fallback: Date): Date => {
  const ms = typeof v === 'string' ? Date.parse(v) : NaN
  return Number.isNaN(ms) ? fallback : new Date(ms)
}

/**
 * Turns the events committed since the cursor into alerts (one per policy that wants each) and
 * ends the alerts their end events close, moving the cursor past them in the same transaction: an
 * event is judged once, by one instance, and one committed before a crash is judged after it.
 * A monitor's policies: its own; otherwise those of the status pages that list it; otherwise the
 * default one. Returns how many events were read.
 */
export async function takeInEvents({ db, now, batch = BATCH }: { db: Db; now: Date; batch?: number }): Promise<number> {
  let read = 0
  for (;;) {
    const from = await readAlertCursor({ db })
    if (from >= (await latestEventId({ db }))) return read
    const events = await listEventsAfter({ db, afterId: from, limit: batch })
    const last = events.at(-1)?.id
    if (last === undefined) return read
    const moved = await db.transaction(async (trx) => {
      if (!(await moveAlertCursor({ db: trx, from, to: last }))) return false
      await judge(
        trx,
        events.filter((e) => READ.has(e.type) && e.site_id !== null),
        now
      )
      return true
    })
    // Another instance took these events: read on from where it left the cursor.
    if (moved) read += events.length
    if (moved && events.length < batch) return read
  }
}

async function judge(db: Db, events: readonly EventRow[], now: Date): Promise<void> {
  if (events.length === 0) return
  const policies = await listPolicies({ db })
  const byId = new Map(policies.map((p) => [p.id, p]))
  const fallback = policies.find((p) => p.is_default)
  const settings = await listMonitorAlerting({ db, siteIds: events.map((e) => e.site_id as number) })
  const alerts: AlertInsert[] = []
  for (const event of events) {
    const siteId = event.site_id as number
    let data: Data
    try {
      data = obj(JSON.parse(event.data)) ?? {}
    } catch {
      continue
    }
    const ended = endOf(event.type)
    if (ended !== null) {
      // Alerts this batch opened first: an outage that opened and closed within it ends too.
      await insertAlerts({ db, alerts: alerts.splice(0), now })
      const dedup = ended === 'outage' ? `outage:${siteId}:${time(data.started_at, event.created_at).getTime()}` : null
      await endAlerts({ db, siteId, kind: ended, dedup, endedAt: time(data.ended_at, event.created_at), now })
      continue
    }
    const own = settings.get(siteId)
    const ids =
      own?.alert_policy_id != null
        ? [own.alert_policy_id]
        : own?.page_policy_ids.length
          ? own.page_policy_ids
          : fallback
            ? [fallback.id]
            : []
    for (const policyId of ids) {
      const policy = byId.get(policyId)
      const kind = policy === undefined ? null : alertKindOf(policy, event.type)
      if (policy === undefined || kind === null) continue
      const started = kind === 'outage' ? time(data.started_at, event.created_at) : event.created_at
      alerts.push({
        policy_id: policy.id,
        site_id: siteId,
        kind,
        dedup: kind === 'outage' ? `outage:${siteId}:${started.getTime()}` : `${kind}:${siteId}:${event.id}`,
        subject: subjectOf(data),
        detail: detailOf(event.type, data),
        started_at: started,
        // A certificate's or a heartbeat's notice is about a moment: over as it is said.
        ended_at: kind === 'certificate' || kind === 'late' ? started : null
      })
    }
  }
  await insertAlerts({ db, alerts, now })
}

/** The kind of alert an end event closes, or null for an event that opens one. */
function endOf(type: string): AlertKind | null {
  if (type === 'outage.closed') return 'outage'
  if (type === 'site.slow_ended') return 'slow'
  return null
}
