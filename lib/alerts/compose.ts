import { composeChannel, MESSAGES_PER_MINUTE } from '../rules/alert-grouping.js'
import { listPolicies } from '../store/alert-config.js'
import { channelHistory, insertMessage } from '../store/alert-messages.js'
import {
  assignMessage,
  channelsWithPending,
  incidentsOf,
  listPendingNotifications,
  openInIncident,
  type PendingItem
} from '../store/alert-state.js'
import type { Db } from '../store/db.js'
import { forUpdate } from '../store/sites.js'
import { titleOf, type MessageBody, type MessageItem } from './message.js'

/**
 * Composes the notifications waiting on each channel into messages, by the grouping and rate
 * rules (lib/rules/alert-grouping.ts). Each channel is composed in a transaction that locks its
 * row, so instances composing at once never make two messages of one notification. Returns how
 * many messages were made.
 */
export async function composeMessages({
  db,
  now,
  perMinute = MESSAGES_PER_MINUTE
}: {
  db: Db
  now: Date
  perMinute?: number
}): Promise<number> {
  let made = 0
  for (const channelId of await channelsWithPending({ db })) {
    made += await db.transaction(async (trx) => {
      const locked = await forUpdate(trx, trx('alert_channels').where({ id: channelId }).select('id'))
      if (locked.length === 0) return 0
      const pending = await listPendingNotifications({ db: trx, channelId })
      if (pending.length === 0) return 0
      const policies = new Map((await listPolicies({ db: trx, ids: [...new Set(pending.map((p) => p.policy_id))] })).map((p) => [p.id, p]))
      const history = await channelHistory({ db: trx, channelId, now })
      const { groups } = composeChannel({
        pending,
        windowMs: (id) => (policies.get(id)?.group_window_s ?? 0) * 1000,
        history,
        now,
        perMinute
      })
      const byId = new Map(pending.map((p) => [p.id, p]))
      const known = await incidentsOf({ db: trx, channelId, alertIds: pending.map((p) => p.alert.id) })
      for (const group of groups) {
        const items = group.ids.map((id) => byId.get(id)).filter((p): p is PendingItem => p !== undefined)
        const incidents = assignIncidents(items, known)
        const messageItems: MessageItem[] = []
        for (const p of items) {
          const incident = incidents.get(p.id) as string
          // A resolution ends its incident once no other outage in it is still going on.
          const resolves =
            p.what === 'resolved' &&
            (incident.startsWith('a') || (await openInIncident({ db: trx, channelId, incident, except: [p.alert.id] })) === 0)
          messageItems.push({
            alert_id: p.alert.id,
            step: p.step,
            what: p.what,
            kind: p.alert.kind,
            subject: p.alert.subject,
            started_at: p.alert.started_at.toISOString(),
            ended_at: p.alert.ended_at?.toISOString() ?? null,
            detail: p.alert.detail,
            incident,
            resolves
          })
        }
        const policy = group.policy_id === null ? null : (policies.get(group.policy_id)?.name ?? null)
        const title = titleOf(messageItems, now)
        const body: MessageBody = {
          kind: group.policy_id === null ? 'summary' : 'alert',
          policy,
          title,
          text: null,
          at: now.toISOString(),
          items: messageItems
        }
        const messageId = await insertMessage({
          db: trx,
          channelId,
          policyId: group.policy_id,
          kind: body.kind,
          title,
          items: messageItems.length,
          body: JSON.stringify(body),
          now
        })
        await assignMessage({ db: trx, messageId, incidents })
      }
      return groups.length
    })
  }
  return made
}

/**
 * The incident each item belongs to on this channel: the one its alert already has there, else
 * its own (`a<alert id>`) when it is the message's only new alert, else one shared by the new
 * alerts of this message (`g<first notification id>`): one PagerDuty incident per grouped message.
 */
function assignIncidents(items: readonly PendingItem[], known: ReadonlyMap<number, string>): Map<number, string> {
  const out = new Map<number, string>()
  const fresh = items.filter((p) => !known.has(p.alert.id))
  const freshAlerts = new Set(fresh.map((p) => p.alert.id))
  const shared = freshAlerts.size > 1 ? `g${fresh[0]?.id ?? 0}` : null
  for (const p of items) out.set(p.id, known.get(p.alert.id) ?? shared ?? `a${p.alert.id}`)
  return out
}
