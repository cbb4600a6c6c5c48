import { created, errors, json, noContent, noKey, ok, scope, scopedErrors } from './operations.js'
import { ref, type Json } from './parts.js'

const slug: Json = {
  name: 'slug',
  in: 'path',
  required: true,
  description: "The monitor's slug.",
  schema: { type: 'string', pattern: '^[a-z0-9-]{1,64}$' }
}
const limit: Json = { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } }
const cursor: Json = {
  name: 'cursor',
  in: 'query',
  required: false,
  description: 'The `next_cursor` of the previous page, as given.',
  schema: { type: 'string', maxLength: 100 }
}
const badgeHeaders = {
  ETag: ref('headers', 'ETag'),
  'Cache-Control': ref('headers', 'Cache-Control'),
  'Access-Control-Allow-Origin': ref('headers', 'Access-Control-Allow-Origin')
}
const badgeErrors = errors('BadRequest', 'NotFound', 'MethodNotAllowed', 'InternalError', 'ServiceUnavailable')
const badgeParameters = [slug, ref('parameters', 'BadgeStyle'), ref('parameters', 'BadgeLabel'), ref('parameters', 'BadgeLogo')]
const notModified: Json = { description: 'Not modified: the If-None-Match ETag is still current.', headers: badgeHeaders }
const changeErrors = scopedErrors('BadRequest', 'NotFound', 'PayloadTooLarge', 'UnsupportedMediaType')

/** Monitors of kind tcp, tls and dns, and their badges. */
export const monitorPaths: Json = {
  '/api/v1/monitors': {
    get: {
      operationId: 'listMonitors',
      tags: ['api'],
      summary: 'Monitors (tcp, tls, dns), by slug (costs 1)',
      security: scope('read'),
      parameters: [limit, cursor],
      responses: { 200: ok('A page of monitors.', ref('schemas', 'MonitorList')), ...scopedErrors('BadRequest') }
    },
    post: {
      operationId: 'addMonitor',
      tags: ['api'],
      summary: 'Add a monitor: a tcp, tls or dns check of one host, tracked (costs 1)',
      description:
        'Checked from every location on the schedule, judged by their quorum, as a site is: outages, uptime, maintenance windows, events (naming `monitor: {kind, slug}`), alerts and `/metrics`. The slug is its identity.',
      security: scope('manage'),
      requestBody: { required: true, content: json(ref('schemas', 'MonitorRequest')) },
      responses: {
        201: created('Added.', "The monitor's URL.", ref('schemas', 'Monitor')),
        ...scopedErrors('BadRequest', 'Conflict', 'PayloadTooLarge', 'UnsupportedMediaType')
      }
    }
  },
  '/api/v1/monitors/{slug}': {
    get: {
      operationId: 'getMonitor',
      tags: ['api'],
      summary: 'A monitor: its check and current verdict (costs 1)',
      security: scope('read'),
      parameters: [slug],
      responses: { 200: ok('The monitor.', ref('schemas', 'Monitor')), ...scopedErrors('BadRequest', 'NotFound') }
    },
    patch: {
      operationId: 'changeMonitor',
      tags: ['api'],
      summary: "Change a monitor's name, target, check or settings (costs 1)",
      description: 'Keys absent are kept; a `check` replaces the whole check (its type may change).',
      security: scope('manage'),
      parameters: [slug],
      requestBody: { required: true, content: json(ref('schemas', 'MonitorPatch')) },
      responses: { 200: ok('Changed.', ref('schemas', 'Monitor')), ...changeErrors }
    },
    delete: {
      operationId: 'removeMonitor',
      tags: ['api'],
      summary: 'Remove a monitor (costs 1)',
      description: 'Its ongoing outage ends now; its checks and outages stay as history, and its slug is free again.',
      security: scope('manage'),
      parameters: [slug],
      responses: { 204: noContent('Removed.'), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/monitors/{slug}/status': {
    get: {
      operationId: 'getMonitorStatus',
      tags: ['api'],
      summary: "A monitor's status record: verdict, uptime, last outage, certificate (costs 1)",
      security: scope('read'),
      parameters: [slug],
      responses: { 200: ok('The status record.', ref('schemas', 'MonitorStatus')), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/monitors/{slug}/sla': {
    get: {
      operationId: 'getMonitorSla',
      tags: ['api'],
      summary: "A monitor's uptime, downtime and outages over any window (costs 1)",
      description: "As a site's (`getSla`); `domain` is the monitor's identity, `monitor:<slug>`.",
      security: scope('read'),
      parameters: [
        slug,
        {
          name: 'from',
          in: 'query',
          required: false,
          description: 'Start of the window, inclusive, as for a site.',
          schema: { type: 'string', maxLength: 64 }
        },
        {
          name: 'to',
          in: 'query',
          required: false,
          description: 'End of the window, exclusive.',
          schema: { type: 'string', maxLength: 64 }
        }
      ],
      responses: { 200: ok('The SLA figures of the window.', ref('schemas', 'Sla')), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/badge/monitor/{slug}': {
    get: {
      operationId: 'getMonitorBadge',
      tags: ['badge'],
      summary: "A monitor's status as an SVG badge (no key)",
      description: 'The words, colours and caching of a site badge. A slug that is no monitor is a 404.',
      security: noKey,
      parameters: badgeParameters,
      responses: {
        200: { description: 'The badge.', headers: badgeHeaders, content: { 'image/svg+xml': { schema: { type: 'string' } } } },
        304: notModified,
        ...badgeErrors
      }
    }
  },
  '/api/badge/monitor/{slug}/endpoint': {
    get: {
      operationId: 'getMonitorEndpointBadge',
      tags: ['badge'],
      summary: "A monitor's badge as shields.io endpoint JSON (no key)",
      security: noKey,
      parameters: badgeParameters,
      responses: {
        200: { description: 'The endpoint badge.', headers: badgeHeaders, content: json(ref('schemas', 'EndpointBadge')) },
        304: notModified,
        ...badgeErrors
      }
    }
  }
}
