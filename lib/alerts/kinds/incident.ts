import { itemLine, shortId, titleOf, type MessageBody, type MessageItem } from '../message.js'

/** How long Alertmanager keeps a firing alert without hearing of it again; re-sent every minute meanwhile. */
export const ALERTMANAGER_FIRING_MS = 5 * 60_000
/** The client named in PagerDuty events. */
const CLIENT = 'Site Status API'

const ALERT_NAMES = { outage: 'MonitorDown', slow: 'MonitorSlow', certificate: 'CertificateExpiring', late: 'HeartbeatLate' } as const

/**
 * Alertmanager API v2: every item as its own alert, identified by its labels (the alert's name,
 * the monitor and its kind), resolved by `endsAt`. A firing alert's `endsAt` is a few minutes
 * ahead and moved on by each re-send, as Prometheus does: if the service stops sending, the alert
 * resolves by itself rather than firing for ever.
 */
export function alertmanagerPayload(items: readonly MessageItem[], now: Date, link: string): Array<Record<string, unknown>> {
  const seen = new Set<string>()
  const alerts: Array<Record<string, unknown>> = []
  // The latest word on each alert wins: a resolution after its opening in one message.
  for (const item of [...items].reverse()) {
    const key = `${item.kind}:${shortId(item.subject)}`
    if (seen.has(key)) continue
    seen.add(key)
    const ended = item.what === 'resolved' ? (item.ended_at ?? now.toISOString()) : null
    alerts.push({
      labels: {
        alertname: ALERT_NAMES[item.kind],
        monitor: item.subject.monitor,
        instance: shortId(item.subject),
        ...(item.subject.domain === null ? {} : { domain: item.subject.domain }),
        ...(item.subject.slug === null ? {} : { slug: item.subject.slug }),
        source: 'site-status'
      },
      annotations: {
        summary: itemLine(item, now),
        name: item.subject.name,
        ...(item.detail === null ? {} : { description: item.detail })
      },
      startsAt: item.started_at,
      endsAt: ended ?? new Date(now.getTime() + ALERTMANAGER_FIRING_MS).toISOString(),
      generatorURL: link
    })
  }
  return alerts.reverse()
}

/**
 * PagerDuty Events API v2: one event per incident the message touches. Items new to the channel
 * share the incident the composer gave them (one outage: its own key; a group: one key for the
 * group); a resolution resolves its incident only once every outage in it has ended.
 */
export function pagerdutyEvents(
  body: MessageBody,
  at: Date,
  link: string,
  routingKey: string,
  severity: string
): Array<Record<string, unknown>> {
  const byIncident = new Map<string, MessageItem[]>()
  for (const item of body.items) {
    const list = byIncident.get(item.incident)
    if (list) list.push(item)
    else byIncident.set(item.incident, [item])
  }
  const events: Array<Record<string, unknown>> = []
  for (const [incident, items] of byIncident) {
    const firing = items.filter((i) => i.what !== 'resolved')
    const dedupKey = `site-status/${incident}`.slice(0, 255)
    if (firing.length > 0) {
      const first = firing[0] as MessageItem
      events.push({
        routing_key: routingKey,
        event_action: 'trigger',
        dedup_key: dedupKey,
        payload: {
          summary: titleOf(firing, at).slice(0, 1024),
          source: firing.length === 1 ? shortId(first.subject) : 'site-status',
          severity: first.kind === 'outage' ? severity : 'warning',
          timestamp: first.started_at,
          component: first.subject.monitor,
          group: body.policy ?? 'site-status',
          class: first.kind,
          custom_details: { monitors: firing.slice(0, 100).map((i) => itemLine(i, at)), count: firing.length }
        },
        client: CLIENT,
        client_url: link,
        links: [{ href: link, text: 'Site Status API' }]
      })
    } else if (items.some((i) => i.resolves)) {
      events.push({ routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey })
    }
  }
  return events
}
