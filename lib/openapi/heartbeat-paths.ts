import { figureFamilyPaths } from './badge-paths.js'
import { created, errors, json, noContent, noKey, ok, scope, scopedErrors } from './operations.js'
import { ref, type Json } from './parts.js'

const slug: Json = {
  name: 'slug',
  in: 'path',
  required: true,
  description: "The heartbeat's slug.",
  schema: { type: 'string', pattern: '^[a-z0-9-]{1,64}$' }
}
const token: Json = {
  name: 'token',
  in: 'path',
  required: true,
  description: 'The ping token of the ping URL.',
  schema: { type: 'string' }
}
const signal: Json = {
  name: 'signal',
  in: 'path',
  required: true,
  description: '`start`, `fail`, or an exit status from 0 (success) to 255 (any other: a failure).',
  schema: { type: 'string', pattern: '^(start|fail|\\d{1,3})$' }
}
const rid: Json = {
  name: 'rid',
  in: 'query',
  required: false,
  description: 'Pairs a start with its end (a UUID, say); without it an end ends the newest run.',
  schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,64}$' }
}
const limit: Json = { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 } }
const cursor: Json = {
  name: 'cursor',
  in: 'query',
  required: false,
  description: 'The `next_cursor` of the previous page, as given.',
  schema: { type: 'string', maxLength: 100 }
}
const pinged: Json = {
  description: 'Recorded (committed before this answer).',
  content: { 'text/plain': { schema: { type: 'string', const: 'OK' } } }
}
const pingErrors = errors('BadRequest', 'NotFound', 'MethodNotAllowed', 'TooManyRequests', 'InternalError', 'ServiceUnavailable')
const pingBody: Json = {
  required: false,
  description: 'Kept as the last message (at most 10 KiB; shown to read keys only).',
  content: { 'text/plain': { schema: { type: 'string', maxLength: 10240 } } }
}
const badgeHeaders = {
  ETag: ref('headers', 'ETag'),
  'Cache-Control': ref('headers', 'Cache-Control'),
  'Access-Control-Allow-Origin': ref('headers', 'Access-Control-Allow-Origin')
}
const badgeErrors = errors('BadRequest', 'NotFound', 'MethodNotAllowed', 'InternalError', 'ServiceUnavailable')
const PING =
  'No key. Limited per token (120 a minute) and per client address (12,000 a minute) before any query: 429 with Retry-After beyond. A ping answered `OK` is committed: pings arriving together share one transaction, and if it fails each of them is answered 500 or 503, none `OK`. An unknown token is 404. HEAD works as GET.'

const ping = (operationId: string, summary: string, post: boolean): Json => ({
  operationId,
  tags: ['heartbeats'],
  summary,
  description: PING,
  security: noKey,
  parameters: [token, ...(summary.includes('signal') ? [signal] : []), rid],
  ...(post ? { requestBody: pingBody } : {}),
  responses: { 200: pinged, ...pingErrors, ...(post ? errors('PayloadTooLarge', 'UnsupportedMediaType') : {}) }
})

/** Heartbeats and their ping URLs. */
export const heartbeatPaths: Json = {
  '/api/v1/heartbeats': {
    get: {
      operationId: 'listHeartbeats',
      tags: ['api'],
      summary: 'Heartbeats with their status records, by slug (costs 1)',
      security: scope('read'),
      parameters: [limit, cursor],
      responses: { 200: ok('A page of heartbeats.', ref('schemas', 'HeartbeatList')), ...scopedErrors('BadRequest') }
    },
    post: {
      operationId: 'addHeartbeat',
      tags: ['api'],
      summary: 'Add a heartbeat: a monitor that waits for pings (costs 1)',
      description:
        '`new` until its first ping; then due `schedule.every_s` after each success (or at the next occurrence of `schedule.cron` in `schedule.zone`), `late` until `grace_s` has passed, `down` after (an outage opens, `outage.opened` names it). The answer carries its `ping_url`, shown only now and on rotation.',
      security: scope('manage'),
      requestBody: { required: true, content: json(ref('schemas', 'HeartbeatRequest')) },
      responses: {
        201: created('Added.', "The heartbeat's URL.", ref('schemas', 'HeartbeatWithPingUrl')),
        ...scopedErrors('BadRequest', 'Conflict', 'PayloadTooLarge', 'UnsupportedMediaType')
      }
    }
  },
  '/api/v1/heartbeats/{slug}': {
    get: {
      operationId: 'getHeartbeat',
      tags: ['api'],
      summary: "A heartbeat's status record (costs 1)",
      security: scope('read'),
      parameters: [slug],
      responses: { 200: ok('The heartbeat.', ref('schemas', 'Heartbeat')), ...scopedErrors('BadRequest', 'NotFound') }
    },
    patch: {
      operationId: 'changeHeartbeat',
      tags: ['api'],
      summary: 'Change, pause or resume a heartbeat (costs 1)',
      description: 'Pausing closes its outage and stops its deadlines; a ping resumes it.',
      security: scope('manage'),
      parameters: [slug],
      requestBody: { required: true, content: json(ref('schemas', 'HeartbeatPatch')) },
      responses: {
        200: ok('Changed.', ref('schemas', 'Heartbeat')),
        ...scopedErrors('BadRequest', 'NotFound', 'PayloadTooLarge', 'UnsupportedMediaType')
      }
    },
    delete: {
      operationId: 'removeHeartbeat',
      tags: ['api'],
      summary: 'Remove a heartbeat (costs 1)',
      description: 'Its ongoing outage ends now; its outages stay as history.',
      security: scope('manage'),
      parameters: [slug],
      responses: { 204: noContent('Removed.'), ...scopedErrors('BadRequest', 'NotFound') }
    }
  },
  '/api/v1/heartbeats/{slug}/token': {
    post: {
      operationId: 'rotateHeartbeatToken',
      tags: ['api'],
      summary: 'Give a heartbeat a new ping URL; the old one is refused from now (costs 1)',
      security: scope('manage'),
      parameters: [slug],
      responses: {
        200: ok('The heartbeat with its new `ping_url`.', ref('schemas', 'HeartbeatWithPingUrl')),
        ...scopedErrors('BadRequest', 'NotFound')
      }
    }
  },
  '/api/badge/heartbeat/{slug}': {
    get: {
      operationId: 'getHeartbeatBadge',
      tags: ['badge'],
      summary: "A heartbeat's state as an SVG badge (no key)",
      description:
        "Label: the heartbeat's name (`status` over 64 characters) unless `label` replaces it; message: its state, `up` green, `late` yellow, `down` red, `new` and `paused` grey. Cached as the site badges are. A slug that is no heartbeat is a 404.",
      security: noKey,
      parameters: [slug, ref('parameters', 'BadgeStyle'), ref('parameters', 'BadgeLabel'), ref('parameters', 'BadgeLogo')],
      responses: {
        200: { description: 'The badge.', headers: badgeHeaders, content: { 'image/svg+xml': { schema: { type: 'string' } } } },
        304: { description: 'Not modified: the If-None-Match ETag is still current.', headers: badgeHeaders },
        ...badgeErrors
      }
    }
  },
  '/api/badge/heartbeat/{slug}/endpoint': {
    get: {
      operationId: 'getHeartbeatEndpointBadge',
      tags: ['badge'],
      summary: "A heartbeat's badge as shields.io endpoint JSON (no key)",
      security: noKey,
      parameters: [slug, ref('parameters', 'BadgeStyle'), ref('parameters', 'BadgeLabel'), ref('parameters', 'BadgeLogo')],
      responses: {
        200: { description: 'The endpoint badge.', headers: badgeHeaders, content: json(ref('schemas', 'EndpointBadge')) },
        304: { description: 'Not modified: the If-None-Match ETag is still current.', headers: badgeHeaders },
        ...badgeErrors
      }
    }
  },
  ...figureFamilyPaths({
    base: '/api/badge/heartbeat/{slug}',
    name: slug,
    prefix: 'Heartbeat',
    who: 'A heartbeat',
    note: "A heartbeat's uptime starts at its first ping; it is down while its outage is open (past grace, a failure, a run past `max_runtime_s`). It has no response time. A heartbeat is read at most once a second per instance, so its badges follow a ping taken elsewhere or a deadline within a second.",
    notFound: true,
    responseTime: false
  }),
  '/ping/{token}': {
    get: ping('ping', 'Success', false),
    post: ping('postPing', 'Success, with a message', true)
  },
  '/ping/{token}/{signal}': {
    get: ping('pingSignal', 'A start, a failure or an exit status (signal)', false),
    post: ping('postPingSignal', 'A start, a failure or an exit status (signal), with a message', true)
  }
}
