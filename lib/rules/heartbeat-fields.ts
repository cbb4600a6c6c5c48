import Joi from 'joi'
import { cronProblem, EVERY_MAX_S, EVERY_MIN_S, GRACE_MAX_S, GRACE_MIN_S, MAX_RUNTIME_MAX_S } from './heartbeat.js'
import { MAX_SLUG_LENGTH, slugSchema } from './status-page-fields.js'

/** The last message kept from a POST ping, in bytes. */
export const MAX_MESSAGE_BYTES = 10 * 1024

const every = (keys: string[], message: string): Record<string, string> => Object.fromEntries(keys.map((k) => [k, message]))
const NUMBER_KEYS = ['number.base', 'number.integer', 'number.min', 'number.max', 'any.required']

// No braces: Joi reads them in a message as a template.
const SCHEDULE_SHAPE = '"schedule" must be an object with "every_s", or with "cron" and "zone" (such as "0 3 * * *" and "Europe/Berlin")'

const scheduleSchema = Joi.object({
  every_s: Joi.number()
    .integer()
    .min(EVERY_MIN_S)
    .max(EVERY_MAX_S)
    .messages(every(NUMBER_KEYS, `"schedule.every_s" must be a whole number of seconds from ${EVERY_MIN_S} to ${EVERY_MAX_S}`)),
  cron: Joi.string().messages(every(['string.base', 'string.empty'], '"schedule.cron" must be a cron expression such as "0 3 * * *"')),
  zone: Joi.string().messages(every(['string.base', 'string.empty'], '"schedule.zone" must be an IANA time zone such as "Europe/Berlin"'))
})
  .xor('every_s', 'cron')
  .and('cron', 'zone')
  .unknown(false)
  // The cron rule (croner, the zone, the least gap) is the one the deadlines are computed by.
  .custom((value: { cron?: string; zone?: string }, helpers) => {
    if (value.cron === undefined || value.zone === undefined) return value
    const why = cronProblem(value.cron, value.zone)
    return why === null ? value : helpers.error('schedule.cron', { why })
  })
  .messages({
    ...every(['object.base', 'object.unknown', 'object.missing', 'object.xor', 'object.and'], SCHEDULE_SHAPE),
    'schedule.cron': '{#why}'
  })

const graceSchema = Joi.number()
  .integer()
  .min(GRACE_MIN_S)
  .max(GRACE_MAX_S)
  .messages(every(NUMBER_KEYS, `"grace_s" must be a whole number of seconds from ${GRACE_MIN_S} to ${GRACE_MAX_S}`))

const maxRuntimeSchema = Joi.number()
  .integer()
  .min(1)
  .max(MAX_RUNTIME_MAX_S)
  .allow(null)
  .messages(every(NUMBER_KEYS, `"max_runtime_s" must be null or a whole number of seconds from 1 to ${MAX_RUNTIME_MAX_S}`))

const nameSchema = Joi.string()
  .trim()
  .min(1)
  .max(200)
  .messages(every(['string.base', 'string.empty', 'string.min', 'string.max', 'any.required'], '"name" must be 1 to 200 characters'))

const FIELDS = '"name", "slug", "schedule", "grace_s" and "max_runtime_s"'

/** A new heartbeat's body. */
export const heartbeatBody = Joi.object({
  name: nameSchema.required(),
  slug: slugSchema,
  schedule: scheduleSchema.required(),
  grace_s: graceSchema.required(),
  max_runtime_s: maxRuntimeSchema
})
  .required()
  .unknown(false)
  .label('request body')
  .messages({
    'object.base': `request body must be a JSON object with ${FIELDS}`,
    'object.unknown': `request body takes only ${FIELDS}`,
    'any.required': '"name", "schedule" and "grace_s" are required'
  })

/** A change's body: any of the settings, and `paused`. */
export const heartbeatPatch = Joi.object({
  name: nameSchema,
  schedule: scheduleSchema,
  grace_s: graceSchema,
  max_runtime_s: maxRuntimeSchema,
  paused: Joi.boolean().messages({ 'boolean.base': '"paused" must be true or false' })
})
  .required()
  .min(1)
  .unknown(false)
  .label('request body')
  .messages({
    'object.base': 'request body must be a JSON object',
    'object.min': 'request body must change at least one of "name", "schedule", "grace_s", "max_runtime_s" and "paused"',
    'object.unknown': 'request body takes only "name", "schedule", "grace_s", "max_runtime_s" and "paused"'
  })

/** The slug a heartbeat gets from its name when none is given: lower-case words joined by hyphens. */
export function slugFromName(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/, '')
}

/** A `rid` as pings carry it (a UUID in healthchecks.io's clients; any short token here). */
export const ridSchema = Joi.string()
  .pattern(/^[A-Za-z0-9._:-]{1,64}$/)
  .messages({ 'string.pattern.base': '"rid" must be 1 to 64 letters, digits and . _ : -', 'string.empty': '"rid" must not be empty' })
