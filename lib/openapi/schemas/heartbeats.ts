import {
  CRON_MAX_LENGTH,
  CRON_MIN_GAP_S,
  EVERY_MAX_S,
  EVERY_MIN_S,
  GRACE_MAX_S,
  GRACE_MIN_S,
  MAX_RUNTIME_MAX_S
} from '../../rules/heartbeat.js'
import { nullable, ref, timestamp, type Json } from '../parts.js'

const slug: Json = { type: 'string', pattern: '^[a-z0-9-]{1,64}$', examples: ['nightly-backup'] }
const every: Json = {
  type: 'object',
  required: ['every_s'],
  properties: {
    every_s: {
      type: 'integer',
      minimum: EVERY_MIN_S,
      maximum: EVERY_MAX_S,
      description: 'Seconds from one success to the next expected one.'
    }
  },
  additionalProperties: false
}
const cron: Json = {
  type: 'object',
  required: ['cron', 'zone'],
  properties: {
    cron: {
      type: 'string',
      minLength: 1,
      maxLength: CRON_MAX_LENGTH,
      examples: ['0 3 * * *'],
      description: `A cron expression (five fields, or six with seconds), firing at most every ${CRON_MIN_GAP_S} s: due at its first occurrence after the last success.`
    },
    zone: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      examples: ['Europe/Berlin'],
      description: 'The IANA time zone the expression is read in.'
    }
  },
  additionalProperties: false
}
const schedule: Json = {
  oneOf: [ref('schemas', 'HeartbeatEvery'), ref('schemas', 'HeartbeatCron')],
  description: 'Due `every_s` after the last success, or at the next occurrence of `cron` in `zone` (DST as docs/decisions.md, Heartbeats).'
}
const grace: Json = { type: 'integer', minimum: GRACE_MIN_S, maximum: GRACE_MAX_S, description: 'Seconds late before it is down.' }
const maxRuntime: Json = {
  ...nullable({ type: 'integer', minimum: 1, maximum: MAX_RUNTIME_MAX_S }),
  description: 'A run (from `/start` to its end) longer than this is down; null: no limit.'
}
const name: Json = { type: 'string', minLength: 1, maxLength: 200 }

const record: Json = {
  type: 'object',
  required: [
    'slug',
    'name',
    'schedule',
    'grace_s',
    'max_runtime_s',
    'state',
    'paused',
    'last_ping_at',
    'last_ping_kind',
    'last_success_at',
    'last_run_seconds',
    'runs_open',
    'next_deadline_at',
    'last_message',
    'outage',
    'created_at'
  ],
  properties: {
    slug,
    name,
    schedule,
    grace_s: grace,
    max_runtime_s: maxRuntime,
    state: {
      type: 'string',
      enum: ['new', 'up', 'late', 'down', 'paused'],
      description:
        '`new` until the first ping; `late` past due within grace; `down` past grace, after a failure, or a run past `max_runtime_s`.'
    },
    paused: { type: 'boolean' },
    last_ping_at: nullable(timestamp),
    last_ping_kind: nullable({ type: 'string', enum: ['success', 'start', 'fail'] }),
    last_success_at: nullable(timestamp),
    last_run_seconds: { ...nullable({ type: 'number', minimum: 0 }), description: 'The last run from its start to its end.' },
    runs_open: { type: 'integer', minimum: 0, description: 'Runs started and not ended (at most 10 are remembered).' },
    next_deadline_at: { ...nullable(timestamp), description: 'When the state changes next without a ping.' },
    last_message: {
      ...nullable({ type: 'string', maxLength: 10240 }),
      description: 'The last POST body (read keys only; never on public pages).'
    },
    outage: nullable({
      type: 'object',
      required: ['started_at', 'duration_seconds'],
      properties: { started_at: timestamp, duration_seconds: { type: 'integer', minimum: 0 } },
      additionalProperties: false
    }),
    created_at: timestamp
  },
  additionalProperties: false
}

/** Heartbeats: the requests, the status record, the list. */
export const heartbeatSchemas: Json = {
  HeartbeatEvery: every,
  HeartbeatCron: cron,
  HeartbeatRequest: {
    type: 'object',
    required: ['name', 'schedule', 'grace_s'],
    properties: { name, slug: { ...slug, description: 'Default: from the name.' }, schedule, grace_s: grace, max_runtime_s: maxRuntime },
    additionalProperties: false
  },
  HeartbeatPatch: {
    type: 'object',
    minProperties: 1,
    properties: { name, schedule, grace_s: grace, max_runtime_s: maxRuntime, paused: { type: 'boolean' } },
    additionalProperties: false
  },
  Heartbeat: record,
  HeartbeatWithPingUrl: {
    ...record,
    required: [...(record.required as string[]), 'ping_url'],
    properties: {
      ...(record.properties as Json),
      ping_url: { type: 'string', description: '`PUBLIC_URL/ping/<token>`: shown now only (the token is kept as a hash).' }
    }
  },
  HeartbeatList: {
    type: 'object',
    required: ['heartbeats', 'next_cursor'],
    properties: { heartbeats: { type: 'array', items: ref('schemas', 'Heartbeat') }, next_cursor: nullable({ type: 'string' }) },
    additionalProperties: false
  }
}
