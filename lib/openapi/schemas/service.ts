import { AGENT_LOCATION } from '../../../config/locations.js'
import { ref, timestamp, type Json } from '../parts.js'

/** How one location reaches sites, and for one served by agents, how many answer now. */
const locationHealth: Json = {
  type: 'array',
  description: 'Every location, in LOCATIONS order: how it reaches sites; for one served by agents, how many answer now.',
  items: {
    type: 'object',
    required: ['label', 'kind'],
    properties: {
      label: { type: 'string', minLength: 1 },
      kind: { type: 'string', enum: ['local', 'proxy', 'agent'] },
      agent: { type: 'string', pattern: AGENT_LOCATION.source, description: 'The agent location (`site-status agent --location`).' },
      agents: {
        type: 'integer',
        minimum: 0,
        description: 'Agents that answered the last services ping (every few seconds); 0: none, its checks go unanswered (unconfirmed).'
      },
      last_seen: { type: ['string', 'null'], format: 'date-time', description: 'When an agent of it last answered a probe or a ping.' },
      versions: { type: 'array', items: { type: 'string' }, description: 'The versions its agents run.' },
      bad_answers: {
        type: 'integer',
        minimum: 0,
        description:
          "Its agents' answers refused since start as not understood (malformed, inconsistent with themselves or the request, or another request's); each counts as that location not answering."
      }
    },
    additionalProperties: false
  }
}

/** How recording keeps up: what waits, and the checks the database refused for what they hold. */
const recordingHealth: Json = {
  type: 'object',
  required: ['pending', 'set_aside', 'last_set_aside'],
  properties: {
    pending: { type: 'integer', minimum: 0, description: 'Checks waiting to be written to the database.' },
    set_aside: {
      type: 'integer',
      minimum: 0,
      description:
        'Checks since start that the database refused for a value they hold (out of range, too long): each was set aside, logged, and the checks behind it recorded.'
    },
    last_set_aside: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['site_id', 'checked_at', 'code', 'at'],
          properties: {
            site_id: { type: 'integer' },
            checked_at: { type: 'string', description: 'The check time as it came (it may be the value refused).' },
            code: { type: 'string', description: "The database's code (`ER_TRUNCATED_WRONG_VALUE`, `SQLITE_CONSTRAINT_NOTNULL`, ...)." },
            at: { type: 'string', format: 'date-time' }
          },
          additionalProperties: false
        }
      ]
    }
  },
  additionalProperties: false
}

/** The service's own answers: errors, health and the key's rate-limit budget. */
export const serviceSchemas: Json = {
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
      },
      locations: locationHealth,
      recording: recordingHealth,
      alerts: ref('schemas', 'AlertHealth')
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
      locations: locationHealth,
      recording: recordingHealth,
      alerts: ref('schemas', 'AlertHealth'),
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
  }
}
