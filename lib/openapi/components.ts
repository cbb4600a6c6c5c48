/**
 * The reusable parts of the OpenAPI document: schemas, headers, parameters and the error
 * responses. Schemas are JSON Schema 2020-12 (OpenAPI 3.1); the API tests validate real responses
 * against them, so a renamed or dropped field fails a test.
 */
import { BADGE_STYLES, MAX_LABEL_LENGTH } from '../badge/describe.js'
import { EVENT_TYPES } from '../rules/events.js'

type Json = Record<string, unknown>

export const ref = (kind: string, name: string): Json => ({ $ref: `#/components/${kind}/${name}` })

/** ISO 8601 UTC with milliseconds and Z, the one timestamp format of every response. */
const timestamp: Json = {
  type: 'string',
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  examples: ['2026-11-22T06:25:07.123Z']
}
const nullable = (schema: Json): Json => ({ oneOf: [schema, { type: 'null' }] })
const siteStatus: Json = { type: 'string', enum: ['up', 'down', 'unconfirmed', 'unavailable'] }
const percent: Json = { type: 'number', minimum: 0, maximum: 100 }
const ms: Json = { type: 'number', minimum: 0 }

const schemas: Json = {
  Error: {
    type: 'object',
    description: 'Every error: one field, a human-readable text. Tests match the status, not the text.',
    required: ['error'],
    properties: { error: { type: 'string', minLength: 1 } },
    additionalProperties: false
  },
  Health: {
    type: 'object',
    required: ['status', 'database', 'schedule', 'instance', 'redis'],
    properties: {
      status: { const: 'ok' },
      database: { const: 'ok' },
      instance: { type: 'string', minLength: 1, description: 'INSTANCE_ID: which instance answered (default `hostname:pid`).' },
      redis: {
        type: ['string', 'null'],
        enum: ['ok', 'unreachable', null],
        description:
          '`null` when REDIS_URL is unset; otherwise whether Redis answered a PING within half a second. Never makes the answer 503.'
      },
      schedule: {
        type: 'string',
        enum: ['ok', 'behind'],
        description:
          '`behind` when, over the last minute, a scheduled check was shed (it could not start within one interval of its due time) or more than 1% of those started were over 5 s late. The instance still serves.'
      }
    },
    additionalProperties: false
  },
  HealthDegraded: {
    type: 'object',
    required: ['status', 'database', 'instance', 'redis', 'error'],
    properties: {
      status: { const: 'degraded' },
      database: { const: 'unreachable' },
      instance: { type: 'string', minLength: 1 },
      redis: { type: ['string', 'null'], enum: ['ok', 'unreachable', null] },
      error: { const: 'database unavailable' }
    },
    additionalProperties: false
  },
  RateLimit: {
    type: 'object',
    description: "The key's budget over the sliding 60-second window.",
    required: ['limit', 'remaining', 'used', 'reset_seconds', 'reset_at'],
    properties: {
      limit: { type: 'integer', minimum: 1 },
      remaining: { type: 'integer', minimum: 0 },
      used: { type: 'integer', minimum: 0 },
      reset_seconds: { type: 'integer', minimum: 0, description: 'Seconds until the full limit is back.' },
      reset_at: timestamp
    },
    additionalProperties: false
  },
  CheckRequest: {
    type: 'object',
    required: ['domain'],
    properties: {
      domain: { type: 'string', description: 'A hostname, or an http(s) URL reduced to its host.', examples: ['example.com'] }
    },
    additionalProperties: false
  },
  Timings: {
    type: 'object',
    description: 'Milliseconds per phase, summed over every redirect hop.',
    required: ['dns', 'connect', 'tls', 'first_byte', 'total'],
    properties: { dns: ms, connect: ms, tls: ms, first_byte: ms, total: ms },
    additionalProperties: false
  },
  LocationResult: {
    type: 'object',
    required: ['location', 'status', 'http_code', 'response_ms', 'error', 'final_url', 'timings'],
    properties: {
      location: { type: 'string', examples: ['Frankfurt 1, Germany'] },
      status: {
        type: 'string',
        enum: ['up', 'down', 'blocked', 'error'],
        description:
          'up: answered below 500; down: no answer or 5xx; blocked: refused the automated check; error: the location itself failed.'
      },
      http_code: { type: 'integer', minimum: 0, maximum: 599, description: 'Last HTTP status seen; 0 when there was no HTTP response.' },
      response_ms: ms,
      error: { ...nullable({ type: 'string' }), description: 'null when up, otherwise a short stable text such as "dns: NXDOMAIN".' },
      final_url: nullable({ type: 'string', format: 'uri' }),
      timings: ref('schemas', 'Timings'),
      tls_expires_at: {
        ...nullable(timestamp),
        description:
          "`notAfter` of the leaf certificate presented in the final hop's TLS handshake (a fresh connection, never a pooled one); null when the final hop was plain http or no handshake completed."
      },
      tls_issuer: {
        ...nullable({ type: 'string' }),
        description: "That certificate's issuer, most specific first (`CN=R11, O=Let's Encrypt, C=US`)."
      }
    },
    additionalProperties: false
  },
  CheckResult: {
    type: 'object',
    required: [
      'domain',
      'status',
      'locations_answered',
      'locations_total',
      'response_ms',
      'cached',
      'locations',
      'checked_at',
      'partial',
      'blocked'
    ],
    properties: {
      domain: { type: 'string', description: 'The normalised domain (lower case, punycode).' },
      status: siteStatus,
      locations_answered: { type: 'integer', minimum: 0 },
      locations_total: { type: 'integer', minimum: 1 },
      response_ms: { ...nullable(ms), description: 'Median of the answering locations; null when none answered.' },
      cached: { type: 'boolean', description: 'True when a result from the last CACHE_TTL_S seconds was reused.' },
      locations: { type: 'array', items: ref('schemas', 'LocationResult') },
      checked_at: timestamp,
      partial: { type: 'boolean' },
      blocked: { type: 'boolean' }
    },
    additionalProperties: false
  },
  LastOutage: {
    type: 'object',
    required: ['started_at', 'ended_at', 'duration_seconds'],
    properties: { started_at: timestamp, ended_at: nullable(timestamp), duration_seconds: { type: 'integer', minimum: 0 } },
    additionalProperties: false
  },
  StatusRecord: {
    type: 'object',
    required: [
      'domain',
      'name',
      'status',
      'blocked',
      'partial',
      'response_ms',
      'checked_at',
      'uptime_percent',
      'last_outage',
      'tls',
      'url'
    ],
    properties: {
      domain: { type: 'string' },
      name: { type: 'string' },
      status: siteStatus,
      blocked: { type: 'boolean', description: 'The site is reachable but refused the automated check.' },
      partial: { type: 'boolean', description: 'Reachable from some locations only.' },
      response_ms: nullable(ms),
      checked_at: { ...nullable(timestamp), description: 'When the site was last checked; null if never.' },
      uptime_percent: {
        type: 'object',
        required: ['day', 'week', 'month'],
        properties: { day: percent, week: percent, month: percent },
        additionalProperties: false
      },
      last_outage: { oneOf: [ref('schemas', 'LastOutage'), { type: 'null' }] },
      tls: {
        oneOf: [ref('schemas', 'Certificate'), { type: 'null' }],
        description: 'The certificate the newest check saw; null when no location completed an https handshake on its final hop.'
      },
      url: { type: 'string', format: 'uri', description: "The site's HTML page on this service." }
    },
    additionalProperties: false
  },
  Certificate: {
    type: 'object',
    description:
      'A TLS certificate as the newest check saw it: where locations saw different ones, the one that expires first. `certificate.expiring` events announce 14, 7 and 1 days left.',
    required: ['expires_at', 'days_remaining', 'issuer'],
    properties: {
      expires_at: { ...timestamp, description: "The leaf certificate's `notAfter`." },
      days_remaining: { type: 'integer', description: 'Whole days left, rounded down: 0 on the last day, negative once expired.' },
      issuer: { ...nullable({ type: 'string' }), description: "The issuer, most specific first (`CN=R11, O=Let's Encrypt, C=US`)." }
    },
    additionalProperties: false
  },
  Outage: {
    type: 'object',
    required: ['domain', 'name', 'started_at', 'ended_at', 'duration_seconds'],
    properties: {
      domain: { type: 'string' },
      name: { type: 'string' },
      started_at: timestamp,
      ended_at: { ...nullable(timestamp), description: 'null while the outage is ongoing.' },
      duration_seconds: { type: 'integer', minimum: 0, description: 'To the end, or to now while ongoing.' }
    },
    additionalProperties: false
  },
  Sla: {
    type: 'object',
    required: [
      'domain',
      'name',
      'from',
      'to',
      'uptime_percent',
      'monitored_seconds',
      'downtime_seconds',
      'incidents',
      'longest_outage_seconds',
      'mttr_seconds',
      'outages'
    ],
    properties: {
      domain: { type: 'string' },
      name: { type: 'string' },
      from: { ...timestamp, description: 'Start of the window (inclusive).' },
      to: { ...timestamp, description: 'End of the window (exclusive).' },
      uptime_percent: {
        ...percent,
        description:
          '100 x (1 - downtime / monitored time), rounded to 3 decimals; 100 when nothing of the window was monitored (see monitored_seconds).'
      },
      monitored_seconds: {
        type: 'integer',
        minimum: 0,
        description:
          "The part of the window from the site's first recorded check (of its current tracking period) to now, or to its removal. Time before the first check is unknown, not up."
      },
      downtime_seconds: { type: 'integer', minimum: 0, description: 'Outage time inside the monitored part of the window.' },
      incidents: { type: 'integer', minimum: 0, description: 'Outages overlapping the monitored part of the window (those listed).' },
      longest_outage_seconds: {
        type: 'integer',
        minimum: 0,
        description: 'The most time one outage was down inside the window; 0 without outages.'
      },
      mttr_seconds: {
        ...nullable({ type: 'integer', minimum: 0 }),
        description: 'Mean time to recovery: the mean whole duration of the outages that ended inside the window; null when none did.'
      },
      outages: {
        type: 'array',
        items: ref('schemas', 'Outage'),
        description: 'The outages overlapping the monitored part of the window, oldest first, with their whole durations.'
      }
    },
    additionalProperties: false
  },
  SiteList: {
    type: 'object',
    required: ['sites', 'next_cursor'],
    properties: {
      sites: { type: 'array', maxItems: 200, items: ref('schemas', 'StatusRecord') },
      next_cursor: { ...nullable({ type: 'string' }), description: 'Pass as `cursor` for the next page; null on the last page.' }
    },
    additionalProperties: false
  },
  AddSiteRequest: {
    type: 'object',
    required: ['domain'],
    properties: {
      domain: {
        type: 'string',
        description: 'A hostname, or an http(s) URL reduced to its host; normalised like everywhere (lower case, punycode).',
        examples: ['example.com']
      },
      name: { type: 'string', minLength: 1, maxLength: 200, description: 'Display name; the domain when absent.' }
    },
    additionalProperties: false
  },
  OutageList: {
    type: 'object',
    required: ['outages', 'next_cursor'],
    properties: {
      outages: { type: 'array', maxItems: 200, items: ref('schemas', 'Outage') },
      next_cursor: { ...nullable({ type: 'string' }), description: 'Pass as `cursor` for the next page; null on the last page.' }
    },
    additionalProperties: false
  },
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
  },
  EndpointBadge: {
    type: 'object',
    description: "shields.io's endpoint-badge format (https://shields.io/badges/endpoint-badge).",
    required: ['schemaVersion', 'label', 'message', 'color'],
    properties: {
      schemaVersion: { const: 1 },
      label: { type: 'string' },
      message: { type: 'string' },
      color: { type: 'string', enum: ['green', 'red', 'yellow', 'lightgrey'] },
      cacheSeconds: { type: 'integer', minimum: 300 },
      style: { type: 'string', enum: [...BADGE_STYLES] }
    },
    additionalProperties: false
  }
}

const integerHeader = (description: string): Json => ({ description, schema: { type: 'integer', minimum: 0 } })

const headers: Json = {
  'RateLimit-Limit': integerHeader("The key's limit of request units per minute."),
  'RateLimit-Remaining': integerHeader('Units left in the current 60-second window.'),
  'RateLimit-Reset': integerHeader('Seconds until the full limit is back.'),
  'Retry-After': { description: 'Whole seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 1 } },
  'WWW-Authenticate': {
    description: 'Bearer, with the reason as error="...".',
    required: true,
    schema: { type: 'string', pattern: '^Bearer' }
  },
  Allow: { description: 'The methods this path accepts.', required: true, schema: { type: 'string' } },
  ETag: {
    description: 'A strong validator; send it back in If-None-Match.',
    required: true,
    schema: { type: 'string', pattern: '^"[^"]+"$' }
  },
  'Cache-Control': { description: 'Badges may be cached for a minute by anyone.', required: true, schema: { const: 'public, max-age=60' } },
  'Access-Control-Allow-Origin': { description: 'Any origin may load a badge.', required: true, schema: { const: '*' } }
}

/** The budget headers: on every keyed response once the key is known. */
export const budgetHeaders = (required: boolean): Json =>
  Object.fromEntries(
    ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((name) => [
      name,
      required ? { ...(headers[name] as Json), required: true } : ref('headers', name)
    ])
  )

const error = (description: string, extra: Json = {}): Json => ({
  description,
  ...(Object.keys(extra).length > 0 ? { headers: extra } : {}),
  content: { 'application/json': { schema: ref('schemas', 'Error') } }
})

const responses: Json = {
  BadRequest: error('Invalid input: a bad domain, parameter or body. The text says what is wrong.'),
  Unauthorized: error('Missing, malformed, unknown or revoked key.', { 'WWW-Authenticate': ref('headers', 'WWW-Authenticate') }),
  Forbidden: error(
    'The key lacks the scope this operation needs (its `security` names it); the text names the scope. The request consumed nothing.',
    budgetHeaders(true)
  ),
  NotFound: error('The site is not tracked, or no such route.'),
  MethodNotAllowed: error('The path exists but not with this method.', { Allow: ref('headers', 'Allow') }),
  PayloadTooLarge: error('The request body is over 4 KiB.'),
  UnsupportedMediaType: error('The request body is not application/json.'),
  TooManyRequests: error("The key's per-minute limit is reached; the request was refused whole and consumed nothing.", {
    'Retry-After': ref('headers', 'Retry-After'),
    ...budgetHeaders(true)
  }),
  Conflict: error(
    "The request conflicts with what is stored: the site is already tracked, the webhook is disabled, or the delivery's event was pruned. The text says why."
  ),
  InternalError: error('An unexpected fault; the body says only "internal server error".'),
  ServiceUnavailable: error('The database is unreachable.', { 'Retry-After': ref('headers', 'Retry-After') }),
  OverCapacity: error(
    'Too many checks in flight, in the instance or for this key; nothing was checked and the request consumed nothing. Retry-After says when a slot is free at the latest. Also: the database is unreachable.',
    {
      'Retry-After': ref('headers', 'Retry-After'),
      ...budgetHeaders(true)
    }
  )
}

const idParameter = (name: string, description: string): Json => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'integer', minimum: 1 }
})

const parameters: Json = {
  WebhookId: idParameter('id', "The webhook's id."),
  DeliveryId: idParameter('delivery_id', "The delivery's id (from the webhook's deliveries)."),
  Domain: {
    name: 'domain',
    in: 'path',
    required: true,
    description:
      'A hostname (`example.com`, `bücher.de`); normalised to lower-case punycode. IP literals, ports and single-label names are refused with 400.',
    schema: { type: 'string', minLength: 1, maxLength: 2048 }
  },
  BadgeStyle: {
    name: 'style',
    in: 'query',
    required: false,
    description: "The badge's look, as on shields.io.",
    schema: { type: 'string', enum: [...BADGE_STYLES], default: 'flat' }
  },
  BadgeLabel: {
    name: 'label',
    in: 'query',
    required: false,
    description: "Replaces the label (the site's name, or `status`); empty draws the message alone.",
    schema: { type: 'string', maxLength: MAX_LABEL_LENGTH }
  }
}

export const components: Json = {
  schemas,
  headers,
  responses,
  parameters,
  securitySchemes: {
    metricsToken: {
      type: 'http',
      scheme: 'bearer',
      description:
        'METRICS_TOKEN, when the operator set it: `Authorization: Bearer <METRICS_TOKEN>` reads `GET /metrics` and nothing else, with no key and no budget.'
    },
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description:
        'An API key issued by the operator (`site-status keys create --scopes LIST`): `ssk_` followed by 43 base64url characters. Each key holds scopes, and each operation names the one it needs in its `security` requirement: `read` (status, outages, the sites list), `check` (on-demand checks), `manage` (adding and removing sites). Keys hold `read` and `check` unless issued otherwise. A key without the scope gets 403. `GET /api/v1/rate_limit` is open to any valid key.'
    }
  }
}
