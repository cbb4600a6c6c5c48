import { MAX_RESPONSE_MS_LIMIT } from '../../rules/expectations.js'
import { MONITOR_KINDS } from '../../rules/monitor.js'
import { MAX_INTERVAL_S, MIN_INTERVAL_S } from '../../rules/site-settings.js'
import { ms, nullable, percent, ref, siteStatus, timestamp, type Json } from '../parts.js'

const slug: Json = { type: 'string', pattern: '^[a-z0-9-]{1,64}$', examples: ['orders-db'] }
const kind: Json = { type: 'string', enum: [...MONITOR_KINDS], description: "The check's type." }
const name: Json = { type: 'string', minLength: 1, maxLength: 200 }
const target: Json = {
  type: 'string',
  maxLength: 253,
  description: 'The host name probed (`CONNECT_TO` applies).',
  examples: ['db.example.com']
}
const check: Json = {
  description: 'A tcp, tls or dns check (an http check is a site: `POST /api/v1/sites`).',
  oneOf: [ref('schemas', 'TcpCheck'), ref('schemas', 'TlsCheck'), ref('schemas', 'DnsCheck')]
}
const interval: Json = {
  ...nullable({ type: 'integer', minimum: MIN_INTERVAL_S, maximum: MAX_INTERVAL_S }),
  description: 'Seconds between checks; null: CHECK_INTERVAL_S.'
}
const maxResponse: Json = {
  ...nullable({ type: 'integer', minimum: 1, maximum: MAX_RESPONSE_MS_LIMIT }),
  description: 'Two checks in a row slower than this make it `slow` (`site.slow`); null: no threshold.'
}

/** Monitors of kind tcp, tls and dns: the requests, the record, the status record, the list. */
export const monitorSchemas: Json = {
  MonitorRef: {
    type: 'object',
    description: 'A monitor (tcp, tls, dns) as outages and events name it.',
    required: ['kind', 'slug'],
    properties: { kind, slug },
    additionalProperties: false
  },
  MonitorRequest: {
    type: 'object',
    required: ['name', 'target', 'check'],
    properties: {
      name,
      slug: { ...slug, description: 'Default: made of the name.' },
      target,
      check,
      interval_s: interval,
      max_response_ms: maxResponse
    },
    additionalProperties: false
  },
  MonitorPatch: {
    type: 'object',
    minProperties: 1,
    properties: { name, target, check, interval_s: interval, max_response_ms: maxResponse },
    additionalProperties: false
  },
  Monitor: {
    type: 'object',
    required: ['slug', 'kind', 'name', 'target', 'check', 'interval_s', 'max_response_ms', 'status', 'checked_at', 'added_at'],
    properties: {
      slug,
      kind,
      name,
      target,
      check,
      interval_s: interval,
      max_response_ms: maxResponse,
      status: { ...siteStatus, description: 'The current verdict (the status record tells more).' },
      checked_at: nullable(timestamp),
      added_at: timestamp
    },
    additionalProperties: false
  },
  MonitorStatus: {
    type: 'object',
    description: "A monitor's status record: a site's, by the same rules, named by slug, kind and target.",
    required: [
      'slug',
      'kind',
      'target',
      'name',
      'status',
      'blocked',
      'partial',
      'response_ms',
      'checked_at',
      'uptime_percent',
      'last_outage',
      'tls',
      'slow',
      'cause'
    ],
    properties: {
      slug,
      kind,
      target,
      name,
      status: siteStatus,
      blocked: { type: 'boolean' },
      partial: { type: 'boolean', description: 'Reached from some locations only.' },
      response_ms: nullable(ms),
      checked_at: nullable(timestamp),
      uptime_percent: {
        type: 'object',
        required: ['day', 'week', 'month'],
        properties: { day: percent, week: percent, month: percent },
        additionalProperties: false
      },
      last_outage: { oneOf: [ref('schemas', 'LastOutage'), { type: 'null' }] },
      tls: {
        oneOf: [ref('schemas', 'Certificate'), { type: 'null' }],
        description: 'The certificate the newest check saw (tls monitors, tcp with `tls`); null otherwise.'
      },
      slow: { type: 'boolean' },
      cause: { oneOf: [ref('schemas', 'DownCause'), { type: 'null' }] },
      maintenance: { ...ref('schemas', 'Maintenance'), description: 'Present only during a maintenance window.' }
    },
    additionalProperties: false
  },
  MonitorList: {
    type: 'object',
    required: ['monitors', 'next_cursor'],
    properties: {
      monitors: { type: 'array', maxItems: 200, items: ref('schemas', 'Monitor') },
      next_cursor: { ...nullable({ type: 'string' }), description: 'Pass as `cursor` for the next page; null on the last page.' }
    },
    additionalProperties: false
  }
}
