import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { pageLimit } from './paging.js'
import { requireScope } from '../auth.js'
import type { Resolve } from '../net/resolver.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import type { TargetPolicy } from '../rules/target-policy.js'
import { webhookFields } from '../rules/webhooks.js'
import type { Db } from '../store/db.js'
import { deleteWebhook, findWebhook, listDeliveries, listWebhooks, type DeliveryRow, type WebhookRow } from '../store/webhooks.js'
import { createWebhook, refuseWebhookUrl, retryDelivery } from '../webhooks/manage.js'
import type { SecretBox } from '../webhooks/secret-box.js'

export { MAX_DOMAINS, MAX_URL_LENGTH } from '../rules/webhooks.js'

export interface WebhookRouteDeps {
  db: Db
  now: () => Date
  /** Seals new secrets for storage. */
  box: SecretBox
  /** The checks' target policy, applied to a webhook's URL when it is created (and at every send). */
  policy: TargetPolicy
  /** The policy's look-up (c-ares, DNS_SERVERS). */
  lookup?: Resolve
  /** Tells the dispatcher a delivery is due now (a manual retry). */
  wake: () => void
}

const createBody = Joi.object(webhookFields)
  .required()
  .unknown(false)
  .label('request body')
  .messages({ 'object.base': 'request body must be a JSON object with a "url" field' })

const webhookId = Joi.object({ id: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required() }).messages({
  'number.base': 'webhook id must be a whole number',
  'number.integer': 'webhook id must be a whole number',
  'number.min': 'webhook id must be a whole number'
})

const deliveryIds = webhookId.keys({ delivery_id: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required() }).messages({
  'number.base': 'ids must be whole numbers',
  'number.integer': 'ids must be whole numbers',
  'number.min': 'ids must be whole numbers'
})

const deliveriesQuery = Joi.object({
  limit: pageLimit,
  cursor: Joi.string().max(100)
}).unknown(false)

/** A webhook as the list shows it: never its secret. */
function webhookRecord(w: WebhookRow): Record<string, unknown> {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    domains: w.domains,
    created_at: w.created_at.toISOString(),
    disabled_at: w.disabled_at?.toISOString() ?? null,
    disabled_reason: w.disabled_reason
  }
}

function deliveryRecord(d: DeliveryRow): Record<string, unknown> {
  return {
    id: d.id,
    event_id: d.event_id,
    type: d.type,
    attempts: d.attempts,
    status: d.status,
    last_http_code: d.last_http_code,
    last_error: d.last_error,
    next_attempt_at: d.status === 'pending' ? d.next_attempt_at.toISOString() : null,
    created_at: d.created_at.toISOString(),
    delivered_at: d.delivered_at?.toISOString() ?? null
  }
}

/** The deliveries cursor is opaque to clients: base64url of the last listed id. */
const encodeCursor = (id: number): string => Buffer.from(`d${id}`).toString('base64url')

function decodeCursor(text: string): number {
  const m = /^d(\d{1,15})$/.exec(Buffer.from(text, 'base64url').toString('latin1'))
  if (!m) throw Boom.badRequest('"cursor" is not a cursor this API returned (use next_cursor as given)')
  return Number(m[1])
}

/** The `domains` filter in normalised form, de-duplicated; the first bad entry is a 400 naming it. */
function normaliseDomains(domains: readonly string[] | null | undefined): string[] | null {
  if (domains === null || domains === undefined) return null
  const out = new Set<string>()
  domains.forEach((raw, i) => {
    const parsed = tryNormaliseDomain(raw)
    if (!parsed.ok) throw Boom.badRequest(`"domains[${i}]": ${parsed.error.message}`)
    out.add(parsed.domain)
  })
  return [...out]
}

function parseUrl(raw: string): URL {
  const url = new URL(raw)
  if (url.username !== '' || url.password !== '') throw Boom.badRequest('"url" must not include a username or password')
  return url
}

export function webhookRoutes({ db, now, box, policy, lookup, wake }: WebhookRouteDeps): ServerRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/v1/webhooks',
      options: { auth: requireScope('manage'), payload: { allow: 'application/json' }, validate: { payload: createBody } },
      handler: async (request, h) => {
        const body = request.payload as { url: string; events?: string[] | null; domains?: string[] | null }
        const url = parseUrl(body.url)
        const domains = normaliseDomains(body.domains)
        const refusal = await refuseWebhookUrl(url, policy, lookup)
        if (refusal !== null) throw Boom.badRequest(refusal)
        const { webhook, secret } = await createWebhook({ db, box, url: url.href, events: body.events ?? null, domains, now: now() })
        return h
          .response({
            id: webhook.id,
            url: webhook.url,
            events: webhook.events,
            domains: webhook.domains,
            secret,
            created_at: webhook.created_at.toISOString()
          })
          .code(201)
      }
    },
    {
      method: 'GET',
      path: '/api/v1/webhooks',
      options: { auth: requireScope('manage') },
      handler: async () => ({ webhooks: (await listWebhooks({ db })).map(webhookRecord) })
    },
    {
      method: 'DELETE',
      path: '/api/v1/webhooks/{id}',
      options: { auth: requireScope('manage'), validate: { params: webhookId } },
      handler: async (request, h) => {
        const { id } = request.params as { id: number }
        if (!(await deleteWebhook({ db, id }))) throw Boom.notFound('no such webhook')
        return h.response().code(204)
      }
    },
    {
      method: 'GET',
      path: '/api/v1/webhooks/{id}/deliveries',
      options: { auth: requireScope('manage'), validate: { params: webhookId, query: deliveriesQuery } },
      handler: async (request) => {
        const { id } = request.params as { id: number }
        const q = request.query as { limit: number; cursor?: string }
        const beforeId = q.cursor === undefined ? undefined : decodeCursor(q.cursor)
        if ((await findWebhook({ db, id })) === null) throw Boom.notFound('no such webhook')
        const rows = await listDeliveries({ db, webhookId: id, limit: q.limit + 1, beforeId })
        const page = rows.slice(0, q.limit)
        const last = page.at(-1)
        return {
          deliveries: page.map(deliveryRecord),
          next_cursor: rows.length > q.limit && last !== undefined ? encodeCursor(last.id) : null
        }
      }
    },
    {
      method: 'POST',
      path: '/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry',
      options: { auth: requireScope('manage'), validate: { params: deliveryIds } },
      handler: async (request, h) => {
        const { id, delivery_id: deliveryId } = request.params as { id: number; delivery_id: number }
        const outcome = await retryDelivery({ db, webhookId: id, deliveryId, now: now() })
        if (!outcome.ok) {
          switch (outcome.reason) {
            case 'no_webhook':
              throw Boom.notFound('no such webhook')
            case 'no_delivery':
              throw Boom.notFound('no such delivery for this webhook')
            case 'disabled':
              throw Boom.conflict('webhook is disabled (its receiver answered 410 Gone); create a new webhook to receive deliveries again')
            case 'event_gone':
              throw Boom.conflict('the event of this delivery is no longer stored (events are kept 7 days)')
          }
        }
        wake()
        return h.response(deliveryRecord(outcome.delivery)).code(202)
      }
    }
  ]
}
