import { createHmac } from 'node:crypto'
import Joi from 'joi'
import { EVENT_TYPES, wantsType } from './events.js'

export const MAX_URL_LENGTH = 2048
export const MAX_DOMAINS = 100

/** A webhook's fields as the API and a configuration file take them (`domains` normalised after). */
export const webhookFields = {
  url: Joi.string()
    .max(MAX_URL_LENGTH)
    .uri({ scheme: ['http', 'https'] })
    .required()
    .messages({
      'string.uriCustomScheme': '"url" must be an http:// or https:// URL',
      'string.uri': '"url" must be an http:// or https:// URL'
    }),
  events: Joi.array()
    .items(Joi.string().valid(...EVENT_TYPES))
    .min(1)
    .unique()
    .allow(null)
    .messages({ 'any.only': `"events" may list only ${EVENT_TYPES.join(', ')}` }),
  domains: Joi.array().items(Joi.string().max(2048)).min(1).max(MAX_DOMAINS).allow(null)
}

/** How a webhook secret starts (Standard Webhooks); base64 of 32 random bytes follows. */
export const SECRET_PREFIX = 'whsec_'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/**
 * The wait before each retry, after the attempt that failed: the first attempt is sent at once,
 * then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, and then daily while three days have not passed
 * since the first (the last retry comes about 2 days 18 hours after it). One more failure: `failed`.
 */
export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, DAY, DAY]

/** Each wait is stretched or shrunk by up to this share, so receivers that failed together are not retried together. */
export const JITTER = 0.1

/**
 * The wait before the next attempt after `attempts` failed ones, jittered with `random` (0 <= r < 1),
 * or null when the schedule is spent and the delivery has failed.
 */
export function retryDelayMs(attempts: number, random: () => number): number | null {
  const base = RETRY_DELAYS_MS[attempts - 1]
  if (base === undefined) return null
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()))
}

/** What an answer means for a delivery: delivered (2xx), the webhook gone (410), or another try later. */
export type AnswerVerdict = 'delivered' | 'gone' | 'retry'

export function judgeAnswer(status: number): AnswerVerdict {
  if (status >= 200 && status < 300) return 'delivered'
  if (status === 410) return 'gone'
  return 'retry'
}

/** The signing key inside a secret: the base64-decoded part after `whsec_`. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_')
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
}

/**
 * The `webhook-signature` header of Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}`, keyed with the secret's decoded part.
 */
export function signDelivery({ secret, id, timestamp, body }: { secret: string; id: string; timestamp: number; body: string }): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')
  return `v1,${mac}`
}

/** A delivery's body: the event's type, its time (ISO 8601) and its payload, as stored (JSON text). */
export function deliveryBody({ type, at, data }: { type: string; at: Date; data: string }): string {
  return `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(at.toISOString())},"data":${data}}`
}

/** What a webhook subscribes to; null lists mean everything. */
export interface WebhookFilter {
  events: readonly string[] | null
  domains: readonly string[] | null
}

/** The domain an event concerns, read from its payload (`site.domain`), or null. */
export function eventDomain(data: unknown): string | null {
  const site = (data as { site?: { domain?: unknown } } | null)?.site
  return typeof site?.domain === 'string' ? site.domain : null
}

/** Whether a webhook wants an event: its type is listed (or all are), and so is its site's domain (or all are). */
export function webhookWants(filter: WebhookFilter, event: { type: string; domain: string | null }): boolean {
  if (!wantsType(filter.events, event.type)) return false
  return filter.domains === null || (event.domain !== null && filter.domains.includes(event.domain))
}
