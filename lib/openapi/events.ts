/**
 * The events: their payload schemas, the stream that carries them (`GET /api/v1/events`) and, as
 * OpenAPI 3.1 `webhooks`, the deliveries that carry them to subscribers' URLs.
 */
import { EVENT_TYPES, PAGE_EVENT_TYPES } from '../rules/events.js'
import { budgetHeaders } from './components.js'
import { ref, type Json } from './parts.js'

const timestamp: Json = { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' }
const eventSite: Json = {
  type: 'object',
  required: ['domain', 'name'],
  properties: { domain: { type: 'string' }, name: { type: 'string' } },
  additionalProperties: false
}

const eventMonitor: Json = {
  type: 'object',
  required: ['kind', 'slug'],
  properties: { kind: { const: 'heartbeat' }, slug: { type: 'string' } },
  additionalProperties: false
}
const eventHeartbeat: Json = {
  type: 'object',
  required: ['slug', 'name'],
  properties: { slug: { type: 'string' }, name: { type: 'string' } },
  additionalProperties: false
}
/** A monitor's events name it (tcp, tls, dns); its `site.domain` is then its identity, `monitor:<slug>`. */
const monitor: Json = { $ref: '#/components/schemas/MonitorRef' }

export const eventSchemas: Json = {
  OutageEventData: {
    type: 'object',
    description:
      'The data of `outage.opened` and `outage.closed`: the outage record as the outages endpoint lists it, as it stood when the event happened (`duration_seconds` then), plus its site.',
    required: ['domain', 'name', 'started_at', 'ended_at', 'duration_seconds', 'site'],
    properties: {
      domain: { type: 'string' },
      name: { type: 'string' },
      started_at: timestamp,
      ended_at: { oneOf: [timestamp, { type: 'null' }] },
      duration_seconds: { type: 'integer', minimum: 0 },
      site: eventSite,
      monitor
    },
    additionalProperties: false
  },
  CertificateEventData: {
    type: 'object',
    description:
      "The data of `certificate.expiring`: a check found the site's certificate (the one a majority of its locations agree on, two at least) at most `threshold_days` (14, 7 or 1) days from expiry. Each threshold is announced once per certificate; when a certificate is first seen past several thresholds, one event names the lowest. A renewed certificate (another expiry) is announced afresh.",
    required: ['site', 'expires_at', 'days_remaining', 'threshold_days', 'issuer', 'at'],
    properties: {
      site: eventSite,
      expires_at: timestamp,
      days_remaining: { type: 'integer', description: 'Whole days left at the check, rounded down.' },
      threshold_days: { type: 'integer', enum: [14, 7, 1] },
      issuer: { oneOf: [{ type: 'string' }, { type: 'null' }] },
      at: { ...timestamp, description: 'When the check ran.' },
      monitor
    },
    additionalProperties: false
  },
  SlowEventData: {
    type: 'object',
    description:
      "The data of `site.slow` and `site.slow_ended`: the site's second check in a row over its `max_response_ms` (or at most it), its consensus response time and the threshold (null when the threshold was cleared, which ends being slow).",
    required: ['site', 'response_ms', 'max_response_ms', 'at'],
    properties: {
      site: eventSite,
      response_ms: { oneOf: [{ type: 'number', minimum: 0 }, { type: 'null' }] },
      max_response_ms: { oneOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] },
      at: { ...timestamp, description: 'When the check ran.' },
      monitor
    },
    additionalProperties: false
  },
  MaintenanceEventData: {
    type: 'object',
    description:
      "The data of `maintenance.started` and `maintenance.ended`, announced by the site's first check inside, or after, a maintenance window: when the maintenance ends (or ended) and the window's reason.",
    required: ['site', 'until', 'reason', 'at'],
    properties: {
      site: eventSite,
      until: timestamp,
      reason: { oneOf: [{ type: 'string' }, { type: 'null' }] },
      at: { ...timestamp, description: 'When the check ran.' },
      monitor
    },
    additionalProperties: false
  },
  HeartbeatOutageEventData: {
    type: 'object',
    description:
      "The data of `outage.opened` and `outage.closed` for a heartbeat: the outage record, `domain` null, the heartbeat named by `monitor` and `heartbeat` where a site's event names its `site`.",
    required: ['domain', 'name', 'started_at', 'ended_at', 'duration_seconds', 'monitor', 'heartbeat'],
    properties: {
      domain: { type: 'null' },
      name: { type: 'string' },
      started_at: timestamp,
      ended_at: { oneOf: [timestamp, { type: 'null' }] },
      duration_seconds: { type: 'integer', minimum: 0 },
      monitor: eventMonitor,
      heartbeat: eventHeartbeat
    },
    additionalProperties: false
  },
  HeartbeatLateEventData: {
    type: 'object',
    description:
      'The data of `heartbeat.late` (past due, within grace: when it was due and when it goes down without a ping) and `heartbeat.late_ended` (`state` says what ended it: `up`, a ping within grace; `down`, the grace passed or a failure, with `outage.opened` after it; `paused`). A heartbeat found already past its grace goes down without being late.',
    required: ['domain', 'name', 'monitor', 'heartbeat', 'state', 'due_at', 'down_at', 'at'],
    properties: {
      domain: { type: 'null' },
      name: { type: 'string' },
      monitor: eventMonitor,
      heartbeat: eventHeartbeat,
      state: { type: 'string', enum: ['late', 'up', 'down', 'paused'] },
      due_at: { oneOf: [timestamp, { type: 'null' }], description: 'When the ping was due (`heartbeat.late`); null otherwise.' },
      down_at: {
        oneOf: [timestamp, { type: 'null' }],
        description: 'When it goes down without a ping (`heartbeat.late`); null otherwise.'
      },
      at: { ...timestamp, description: 'When it became late, or stopped being late.' }
    },
    additionalProperties: false
  },
  SiteEventData: {
    type: 'object',
    description: 'The data of `site.added` (tracked, or tracked again after a removal) and `site.removed`: the site and when.',
    required: ['site', 'at'],
    properties: { site: eventSite, at: timestamp, monitor },
    additionalProperties: false
  },
  StatusPageEventType: {
    type: 'string',
    description: 'The `event:` of a status page stream (`GET /status/{slug}/events`): the events that change what a page shows.',
    enum: [...PAGE_EVENT_TYPES]
  },
  StatusPageEventData: {
    type: 'object',
    description:
      "The `data:` of a status page stream's event: the site as the page names it and when; the page fetches itself again. `domain` is null when the page shows the site under a display name, as on the page, and for a heartbeat or a monitor.",
    required: ['name', 'domain', 'at'],
    properties: { name: { type: 'string' }, domain: { oneOf: [{ type: 'string' }, { type: 'null' }] }, at: timestamp },
    additionalProperties: false
  }
}

const DATA_SCHEMAS: Record<string, string> = {
  outage: 'OutageEventData',
  certificate: 'CertificateEventData',
  maintenance: 'MaintenanceEventData',
  heartbeat: 'HeartbeatLateEventData',
  'site.slow': 'SlowEventData'
}

const dataSchema = (type: string): Json =>
  type.startsWith('outage.')
    ? { oneOf: [ref('schemas', 'OutageEventData'), ref('schemas', 'HeartbeatOutageEventData')] }
    : ref('schemas', DATA_SCHEMAS[type.split('.')[0] as string] ?? DATA_SCHEMAS[type.replace(/_ended$/, '')] ?? 'SiteEventData')

/** `GET /api/v1/events`, the path item. */
export const eventsPath: Json = {
  get: {
    operationId: 'streamEvents',
    tags: ['api'],
    // The key must hold the read scope (see the bearerAuth scheme); the route table declares the same.
    security: [{ bearerAuth: ['read'] }],
    summary:
      'Server-Sent Events: every outage, site change, certificate warning, slow spell, maintenance and late heartbeat as it commits (costs 1 when opened)',
    description: [
      'A `text/event-stream` that stays open. Each event is `id: <id>`, `event: <type>` and `data: <JSON>` followed by a blank line; ids increase strictly without gaps. Types: `outage.opened`, `outage.closed` (data: OutageEventData, or HeartbeatOutageEventData for a heartbeat), `site.added`, `site.removed` (data: SiteEventData), `certificate.expiring` (data: CertificateEventData), `site.slow`, `site.slow_ended` (data: SlowEventData), `maintenance.started`, `maintenance.ended` (data: MaintenanceEventData), `heartbeat.late`, `heartbeat.late_ended` (data: HeartbeatLateEventData).',
      'With `Last-Event-ID` (what EventSource sends when it reconnects) or `since`, the events after that id are replayed from the stored log, then the stream goes on live, with nothing missed or repeated. The header wins over `since`. Events are kept 7 days: an id older than the oldest kept replays from the oldest, and the first comment says which ids were pruned. Without either, the stream starts with the events after the newest one.',
      'Lines starting with `:` are comments: one first, then one at least every 15 s. Never compressed. A key may hold 10 open streams; the eleventh is refused with 429 and costs nothing. When the server stops, every stream ends cleanly: reconnect with Last-Event-ID.'
    ].join('\n\n'),
    parameters: [
      {
        name: 'since',
        in: 'query',
        required: false,
        description: 'Replay the events after this id.',
        schema: { type: 'string', pattern: '^\\d{1,15}$' }
      },
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description: 'The id of the last event received; wins over `since`.',
        schema: { type: 'string', pattern: '^\\d{0,15}$' }
      }
    ],
    responses: {
      200: {
        description: 'The stream.',
        headers: {
          ...budgetHeaders(true),
          'Cache-Control': { description: 'Never cached.', required: true, schema: { const: 'no-cache' } },
          'X-Accel-Buffering': { description: 'Tells nginx not to buffer the stream.', required: true, schema: { const: 'no' } }
        },
        content: {
          'text/event-stream': {
            schema: { type: 'string' },
            example:
              'id: 42\nevent: outage.opened\ndata: {"domain":"example.com","name":"Example","started_at":"2026-11-22T06:25:07.123Z","ended_at":null,"duration_seconds":0,"site":{"domain":"example.com","name":"Example"}}\n\n'
          }
        }
      },
      400: ref('responses', 'BadRequest'),
      401: ref('responses', 'Unauthorized'),
      403: ref('responses', 'Forbidden'),
      405: ref('responses', 'MethodNotAllowed'),
      429: {
        description:
          "The key's per-minute limit is reached, or this key already holds 10 open streams (close one first); either way nothing was consumed.",
        headers: { 'Retry-After': ref('headers', 'Retry-After'), ...budgetHeaders(true) },
        content: { 'application/json': { schema: ref('schemas', 'Error') } }
      },
      500: ref('responses', 'InternalError'),
      503: {
        description: 'The database is unreachable, the server holds its most open streams (10,000), or it is stopping.',
        headers: { 'Retry-After': ref('headers', 'Retry-After') },
        content: { 'application/json': { schema: ref('schemas', 'Error') } }
      }
    }
  }
}

/**
 * One webhook per event type: a POST to the subscriber's URL, as the Standard Webhooks
 * specification has it (`{type, timestamp, data}` signed in `webhook-signature`).
 */
export const eventWebhooks: Json = Object.fromEntries(
  EVENT_TYPES.map((type) => [
    type,
    {
      post: {
        operationId: `webhook${type.replace(/(^|\.)(\w)/g, (_m, _dot: string, c: string) => c.toUpperCase())}`,
        summary: `The \`${type}\` event, delivered to a webhook's URL`,
        description:
          'Signed as Standard Webhooks says: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of the secret. A 2xx within 15 s delivers; anything else is retried with backoff; 410 disables the webhook.',
        parameters: [
          {
            name: 'webhook-id',
            in: 'header',
            required: true,
            description: 'The event id, the same on every retry.',
            schema: { type: 'string' }
          },
          {
            name: 'webhook-timestamp',
            in: 'header',
            required: true,
            description: 'Unix seconds.',
            schema: { type: 'string', pattern: '^\\d+$' }
          },
          { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string', pattern: '^v1,' } }
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['type', 'timestamp', 'data'],
                properties: { type: { const: type }, timestamp: timestamp, data: dataSchema(type) },
                additionalProperties: false
              }
            }
          }
        },
        responses: { '2XX': { description: 'Delivered.' }, 410: { description: 'Gone: the webhook is disabled.' } }
      }
    }
  ])
)
