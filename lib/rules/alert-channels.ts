import Joi from 'joi'
import { validated, type Validated } from './validated.js'

/**
 * What a channel is: a kind and its `config`, split into what may be shown back and the secrets
 * (tokens, passwords, URLs that carry a token) that are sealed at rest and never shown. One schema
 * per kind, shared by the API and the operator tool (decisions.md, Alerts: channel kinds).
 */

export const CHANNEL_KINDS = ['email', 'slack', 'discord', 'teams', 'pagerduty', 'ntfy', 'alertmanager', 'webhook'] as const
export type ChannelKind = (typeof CHANNEL_KINDS)[number]

/** The fields of each kind's config that are secret. */
export const SECRET_FIELDS: Readonly<Record<ChannelKind, readonly string[]>> = {
  email: ['password'],
  slack: ['url'],
  discord: ['url'],
  teams: ['url'],
  pagerduty: ['routing_key'],
  ntfy: ['topic', 'token'],
  alertmanager: [],
  webhook: ['secret']
}

export const PAGERDUTY_URL = 'https://events.pagerduty.com/v2/enqueue'
export const NTFY_URL = 'https://ntfy.sh'
export const MAX_NAME_LENGTH = 100
const MAX_URL_LENGTH = 2048

const httpUrl = (field: string): Joi.StringSchema =>
  Joi.string()
    .max(MAX_URL_LENGTH)
    .uri({ scheme: ['http', 'https'] })
    .messages({
      'string.uri': `"${field}" must be an http:// or https:// URL`,
      'string.uriCustomScheme': `"${field}" must be an http:// or https:// URL`
    })

const email = Joi.string().email({ tlds: false }).max(254)

const KIND_SCHEMAS: Readonly<Record<ChannelKind, Joi.ObjectSchema>> = {
  email: Joi.object({
    host: Joi.string().hostname().max(253).required(),
    port: Joi.number().integer().min(1).max(65535),
    security: Joi.string().valid('starttls', 'tls', 'none').default('starttls'),
    username: Joi.string().max(200),
    password: Joi.string().max(200),
    from: email.required(),
    to: Joi.array().items(email).min(1).max(20).unique().required()
  }).and('username', 'password'),
  slack: Joi.object({ url: httpUrl('config.url').required() }),
  discord: Joi.object({ url: httpUrl('config.url').required() }),
  teams: Joi.object({ url: httpUrl('config.url').required() }),
  pagerduty: Joi.object({
    routing_key: Joi.string().min(1).max(64).required(),
    url: httpUrl('config.url').default(PAGERDUTY_URL),
    severity: Joi.string().valid('critical', 'error', 'warning', 'info').default('critical')
  }),
  ntfy: Joi.object({
    url: httpUrl('config.url').default(NTFY_URL),
    topic: Joi.string()
      .pattern(/^[-_A-Za-z0-9]{1,64}$/)
      .required()
      .messages({ 'string.pattern.base': '"config.topic" must be 1 to 64 letters, digits, "-" or "_"' }),
    token: Joi.string().max(200),
    priority: Joi.number().integer().min(1).max(5).default(4)
  }),
  alertmanager: Joi.object({ urls: Joi.array().items(httpUrl('config.urls[]')).min(1).max(5).unique().required() }),
  webhook: Joi.object({ url: httpUrl('config.url').required() })
}

/** A channel's config, validated: what may be shown and what is sealed. */
export interface ChannelConfig {
  kind: ChannelKind
  config: Record<string, unknown>
  secrets: Record<string, unknown>
}

/** The default port of an e-mail channel by its security. */
export function smtpPort(security: string): number {
  return security === 'tls' ? 465 : security === 'none' ? 25 : 587
}

/** Validates a kind's whole config (the secrets included) and splits it. */
export function parseChannelConfig(kind: ChannelKind, input: unknown): Validated<ChannelConfig> {
  const schema = KIND_SCHEMAS[kind]
    .required()
    .unknown(false)
    .label('config')
    .prefs({ errors: { wrap: { label: '"' } } })
  const checked = validated<Record<string, unknown>>(schema, input)
  if (!checked.ok) return { ok: false, error: checked.error.replace(/^"(\w+)"/, '"config.$1"') }
  const all = checked.value
  if (kind === 'email' && all.port === undefined) all.port = smtpPort(String(all.security))
  const config: Record<string, unknown> = {}
  const secrets: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(all)) (SECRET_FIELDS[kind].includes(key) ? secrets : config)[key] = value
  return { ok: true, value: { kind, config, secrets } }
}

/** The URLs a channel sends to, for the address policy: one per receiver. */
export function channelUrls(kind: ChannelKind, config: Record<string, unknown>, secrets: Record<string, unknown>): string[] {
  const all = { ...config, ...secrets }
  if (kind === 'email') return []
  if (kind === 'alertmanager') return (all.urls as string[]).map(alertmanagerUrl)
  return [String(all.url)]
}

/** Where an Alertmanager's API v2 takes alerts, below its base URL (a path prefix is kept). */
export function alertmanagerUrl(base: string): string {
  return `${base.replace(/\/+$/, '')}/api/v2/alerts`
}

/** A channel's name: trimmed, 1 to 100 printable characters. */
export const channelNameSchema = Joi.string()
  .trim()
  .min(1)
  .max(MAX_NAME_LENGTH)
  .pattern(/^[^\p{Cc}]+$/u)
  .messages({
    'string.pattern.base': `"name" must be 1 to ${MAX_NAME_LENGTH} printable characters`,
    'string.empty': `"name" must be 1 to ${MAX_NAME_LENGTH} printable characters`,
    'string.min': `"name" must be 1 to ${MAX_NAME_LENGTH} printable characters`,
    'string.max': `"name" must be 1 to ${MAX_NAME_LENGTH} printable characters`
  })

const id = Joi.number()
  .integer()
  .min(1)
  .max(2 ** 31)

/**
 * A channel's name, kind and config, as the API and a monitoring-as-code file take them: its kind's
 * config is judged after (it depends on the kind). Each names the channel it reports to its own way.
 */
export const channelFields = {
  name: channelNameSchema.required(),
  kind: Joi.string()
    .valid(...CHANNEL_KINDS)
    .required()
    .messages({ 'any.only': `"kind" must be one of ${CHANNEL_KINDS.join(', ')}` }),
  config: Joi.object().unknown(true).required()
}

/** A new channel's body: `report_to` by id. */
export const newChannelSchema = Joi.object({ ...channelFields, report_to: id.allow(null) })
  .required()
  .unknown(false)
  .label('request body')
  .messages({ 'object.base': 'request body must be a JSON object with "name", "kind" and "config"' })

/** A change: `config` keys given replace those stored (a secret left out is kept). */
export const channelChangeSchema = Joi.object({
  name: channelNameSchema,
  config: Joi.object().unknown(true),
  report_to: id.allow(null)
})
  .required()
  .min(1)
  .unknown(false)
  .label('request body')
  .messages({
    'object.base': 'request body must be a JSON object with any of "name", "config" and "report_to"',
    'object.min': 'request body must change at least one of "name", "config" and "report_to"'
  })

/** The shown config merged with the stored secrets and the change's keys, to be judged whole again. */
export function mergeConfig(
  stored: { config: Record<string, unknown>; secrets: Record<string, unknown> },
  change: Record<string, unknown>
): Record<string, unknown> {
  return { ...stored.config, ...stored.secrets, ...change }
}
