import Joi from 'joi'
import { checkSchema, type CheckSpec } from './check-spec.js'
import { tryNormaliseDomain } from './domain.js'
import { MAX_RESPONSE_MS_LIMIT } from './expectations.js'
import { slugFromName } from './heartbeat-fields.js'
import { intervalSchema } from './site-settings.js'
import { slugSchema } from './status-page-fields.js'

/** A monitor's body as the API and the operator tool take it (lib/rules/monitor.ts: what a monitor is). */

const every = (keys: string[], message: string): Record<string, string> => Object.fromEntries(keys.map((k) => [k, message]))

const nameSchema = Joi.string()
  .trim()
  .min(1)
  .max(200)
  .messages(every(['string.base', 'string.empty', 'string.min', 'string.max', 'any.required'], '"name" must be 1 to 200 characters'))

const targetSchema = Joi.any()
  .custom((value: unknown, helpers) => {
    const parsed = tryNormaliseDomain(value)
    return parsed.ok ? parsed.domain : helpers.error('target.invalid', { why: parsed.error.message })
  })
  .messages({ 'target.invalid': '"target" must be a host name such as db.example.com: {{#why}}', 'any.required': '"target" is required' })
  .description('the host name the check probes, such as db.example.com')

const monitorCheck = checkSchema
  .custom((value: CheckSpec, helpers) => (value.type === 'http' ? helpers.error('check.http') : value))
  .messages({
    'check.http': '"check.type": a monitor is a tcp, tls or dns check; an http check is a site\'s (POST /api/v1/sites)',
    'any.required': '"check" is required'
  })

const maxResponseSchema = Joi.number()
  .integer()
  .min(1)
  .max(MAX_RESPONSE_MS_LIMIT)
  .allow(null)
  .prefs({ convert: false })
  .messages(
    every(
      ['number.base', 'number.integer', 'number.min', 'number.max'],
      `"max_response_ms" must be null or a whole number of milliseconds from 1 to ${MAX_RESPONSE_MS_LIMIT}`
    )
  )

const FIELDS = '"name", "slug", "target", "check", "interval_s" and "max_response_ms"'
const CHANGES = '"name", "target", "check", "interval_s" and "max_response_ms"'

/** A new monitor's body. */
export const monitorBody = Joi.object({
  name: nameSchema.required(),
  slug: slugSchema,
  target: targetSchema.required(),
  check: monitorCheck.required(),
  interval_s: intervalSchema,
  max_response_ms: maxResponseSchema
})
  .required()
  .unknown(false)
  .label('request body')
  .messages({
    'object.base': `request body must be a JSON object with ${FIELDS}`,
    'object.unknown': `request body takes only ${FIELDS}`
  })

/** A change's body: any of the settings; the slug stays. */
export const monitorPatch = Joi.object({
  name: nameSchema,
  target: targetSchema,
  check: monitorCheck,
  interval_s: intervalSchema,
  max_response_ms: maxResponseSchema
})
  .required()
  .min(1)
  .unknown(false)
  .label('request body')
  .messages({
    'object.base': 'request body must be a JSON object',
    'object.min': `request body must change at least one of ${CHANGES}`,
    'object.unknown': `request body takes only ${CHANGES}`
  })

/** A new monitor as its body gives it (judged by {@link monitorBody}). */
export interface MonitorInput {
  name: string
  slug?: string
  target: string
  check: CheckSpec
  interval_s?: number | null
  max_response_ms?: number | null
}

export type MonitorChange = Partial<Omit<MonitorInput, 'slug'>>

/** The slug a monitor gets: the one given, else one made of its name (empty when the name has no letters or digits). */
export const monitorSlug = (input: Pick<MonitorInput, 'name' | 'slug'>): string => input.slug ?? slugFromName(input.name)
