import { eventDomain, webhookWants } from '../rules/webhooks.js'
import type { Db } from '../store/db.js'
import { latestEventId, listEventsAfter, type EventRow } from '../store/events.js'
import { insertDeliveries, listWebhooksBehind, moveCursor, type DeliveryInsert, type WebhookRow } from '../store/webhooks.js'

/** Events read per round. */
const BATCH = 500

/** An event with what the filters look at: its type and its site's domain. */
interface Judged {
  event: EventRow
  domain: string | null
}

function judge(event: EventRow): Judged {
  let data: unknown = null
  try {
    data = JSON.parse(event.data)
  } catch {
    // A payload that is not JSON names no domain; the type filter still applies.
  }
  return { event, domain: eventDomain(data) }
}

/**
 * Turns the events committed since each active webhook's cursor into its pending deliveries, and
 * moves the cursor past them in the same transaction. Events commit in id order, so "after the
 * cursor" misses nothing; a crash before the transaction commits leaves the cursor where it was,
 * and the next run (here or on another instance) does it again. Two instances running it at once
 * are harmless: the cursor only moves from the value read, and a delivery exists once per
 * webhook and event. Returns how many deliveries were made.
 */
export async function fanOut({ db, now, batch = BATCH }: { db: Db; now: Date; batch?: number }): Promise<number> {
  const latest = await latestEventId({ db })
  let hooks: WebhookRow[] = await listWebhooksBehind({ db, latest })
  let made = 0
  while (hooks.length > 0) {
    const from = Math.min(...hooks.map((h) => h.cursor))
    const events = (await listEventsAfter({ db, afterId: from, limit: batch })).map(judge)
    const last = events.at(-1)?.event.id
    if (last === undefined) break
    // Every webhook's cursor and deliveries in one transaction: one per webhook would make an event
    // for a hundred webhooks wait a hundred commits for its last delivery to be queued.
    made += await db.transaction(async (trx) => {
      const deliveries: DeliveryInsert[] = []
      for (const hook of hooks) {
        if (hook.cursor >= last) continue
        if (!(await moveCursor({ db: trx, id: hook.id, from: hook.cursor, to: last }))) continue
        for (const e of events) {
          if (e.event.id > hook.cursor && webhookWants(hook, { type: e.event.type, domain: e.domain }))
            deliveries.push({ webhookId: hook.id, eventId: e.event.id, type: e.event.type, at: now })
        }
      }
      await insertDeliveries({ db: trx, deliveries })
      return deliveries.length
    })
    if (events.length < batch) break
    hooks = hooks.map((h) => ({ ...h, cursor: Math.max(h.cursor, last) })).filter((h) => h.cursor < latest)
  }
  return made
}
