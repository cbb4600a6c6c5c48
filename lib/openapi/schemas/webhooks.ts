import { EVENT_TYPES } from '../../rules/events.js'
import { nullable, ref, timestamp, type Json } from '../parts.js'

/** Webhooks: subscriptions and the log of their deliveries. */
export const webhookSchemas: Json = {
  WebhookRequest: {
    type: 'object',
    required: ['url'],
    properties: {
      url: {
        type: 'string',
        maxLength: 2048,
        description:
          'http:// or https:// (no username or password). Its host must resolve to public addresses only (the target policy of checks), judged again at every send.',
        examples: ['https://hooks.example.com/site-status']
      },
      events: {
        ...nullable({ type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...EVENT_TYPES] } }),
        description: 'The event types to receive; absent or null: all.'
      },
      domains: {
        ...nullable({ type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', maxLength: 2048 } }),
        description: 'Only events of these sites (normalised like every domain); absent or null: all.'
      }
    },
    additionalProperties: false
  },
  WebhookCreated: {
    type: 'object',
    required: ['id', 'url', 'events', 'domains', 'secret', 'created_at'],
    properties: {
      id: { type: 'integer', minimum: 1 },
      url: { type: 'string', format: 'uri' },
      events: nullable({ type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } }),
      domains: nullable({ type: 'array', items: { type: 'string' } }),
      secret: {
        type: 'string',
        pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
        description: 'The signing secret (Standard Webhooks), shown only in this answer: store it now.'
      },
      created_at: timestamp
    },
    additionalProperties: false
  },
  Webhook: {
    type: 'object',
    required: ['id', 'url', 'events', 'domains', 'created_at', 'disabled_at', 'disabled_reason'],
    properties: {
      id: { type: 'integer', minimum: 1 },
      url: { type: 'string', format: 'uri' },
      events: nullable({ type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } }),
      domains: nullable({ type: 'array', items: { type: 'string' } }),
      created_at: timestamp,
      disabled_at: { ...nullable(timestamp), description: 'When the receiver answered 410 Gone; nothing is sent since.' },
      disabled_reason: nullable({ type: 'string' })
    },
    additionalProperties: false
  },
  WebhookList: {
    type: 'object',
    required: ['webhooks'],
    properties: { webhooks: { type: 'array', items: ref('schemas', 'Webhook') } },
    additionalProperties: false
  },
  Delivery: {
    type: 'object',
    required: [
      'id',
      'event_id',
      'type',
      'attempts',
      'status',
      'last_http_code',
      'last_error',
      'next_attempt_at',
      'created_at',
      'delivered_at'
    ],
    properties: {
      id: { type: 'integer', minimum: 1 },
      event_id: { type: 'integer', minimum: 1, description: 'Also the `webhook-id` header of every attempt.' },
      type: { type: 'string', enum: [...EVENT_TYPES] },
      attempts: { type: 'integer', minimum: 0 },
      status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
      last_http_code: { ...nullable({ type: 'integer', minimum: 100, maximum: 599 }), description: 'null when no answer came.' },
      last_error: {
        ...nullable({ type: 'string' }),
        description: 'A short stable text, such as "http: 503" or "timeout: no response in 15000 ms".'
      },
      next_attempt_at: { ...nullable(timestamp), description: 'When a pending delivery is sent next; null once delivered or failed.' },
      created_at: timestamp,
      delivered_at: nullable(timestamp)
    },
    additionalProperties: false
  },
  DeliveryList: {
    type: 'object',
    required: ['deliveries', 'next_cursor'],
    properties: {
      deliveries: { type: 'array', maxItems: 200, items: ref('schemas', 'Delivery') },
      next_cursor: { ...nullable({ type: 'string' }), description: 'Pass as `cursor` for the next page; null on the last page.' }
    },
    additionalProperties: false
  }
}
