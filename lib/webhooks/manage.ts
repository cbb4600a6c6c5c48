import { checkHost } from '../net/host-check.js'
import type { Resolve } from '../net/resolver.js'
import type { TargetPolicy } from '../rules/target-policy.js'
import type { Db } from '../store/db.js'
import { latestEventId } from '../store/events.js'
import {
  eventExists,
  findDelivery,
  findWebhook,
  insertWebhook,
  resetDelivery,
  type DeliveryRow,
  type WebhookRow
} from '../store/webhooks.js'
import { generateSecret, type SecretBox } from './secret-box.js'

/** How long the policy's look-up of a webhook's host may take when it is created. */
const LOOKUP_TIMEOUT_MS = 5000

/**
 * Why a webhook URL is refused by the target policy, or null when every address its host
 * resolves to may be reached. The same policy is applied again to the address dialled at each
 * send, so a name that changes its answers later gains nothing.
 */
export async function refuseWebhookUrl(url: URL, policy: TargetPolicy, lookup?: Resolve): Promise<string | null> {
  const verdict = await checkHost(url.hostname, policy, { lookup, timeoutMs: LOOKUP_TIMEOUT_MS })
  if (verdict.ok) return null
  return verdict.reason === 'non_public'
    ? 'url resolves to a non-public address'
    : `url host does not resolve (${verdict.code ?? 'DNS_ERROR'})`
}

/**
 * Registers a webhook: a new secret, sealed for storage, and a cursor at the newest event so far,
 * so it receives only what happens from now on. The secret is returned once, here.
 */
export async function createWebhook({
  db,
  box,
  url,
  events,
  domains,
  now
}: {
  db: Db
  box: SecretBox
  url: string
  events: readonly string[] | null
  domains: readonly string[] | null
  now: Date
}): Promise<{ webhook: WebhookRow; secret: string }> {
  const secret = generateSecret()
  const sealed = box.seal(secret)
  const cursor = await latestEventId({ db })
  const webhook = await insertWebhook({ db, url, events, domains, secret: sealed, cursor, now })
  return { webhook, secret }
}

export type RetryOutcome =
  { ok: true; delivery: DeliveryRow } | { ok: false; reason: 'no_webhook' | 'no_delivery' | 'disabled' | 'event_gone' }

/**
 * Sends a delivery again now: back to `pending`, due at once, its schedule started over. A
 * disabled webhook's deliveries are refused (its receiver said it is gone), and so is a delivery
 * whose event was pruned (events are kept 7 days, the delivery log 30).
 */
export async function retryDelivery({
  db,
  webhookId,
  deliveryId,
  now
}: {
  db: Db
  webhookId: number
  deliveryId: number
  now: Date
}): Promise<RetryOutcome> {
  const webhook = await findWebhook({ db, id: webhookId })
  if (webhook === null) return { ok: false, reason: 'no_webhook' }
  const delivery = await findDelivery({ db, webhookId, id: deliveryId })
  if (delivery === null) return { ok: false, reason: 'no_delivery' }
  if (webhook.disabled_at !== null) return { ok: false, reason: 'disabled' }
  if (!(await eventExists({ db, id: delivery.event_id }))) return { ok: false, reason: 'event_gone' }
  await resetDelivery({ db, id: deliveryId, now })
  return {
    ok: true,
    delivery: { ...delivery, status: 'pending', attempts: 0, next_attempt_at: now, delivered_at: null }
  }
}
