import Joi from 'joi'
import { DEFAULT_GROUP_WINDOW_S } from './alert-grouping.js'
import type { AlertKind, PolicyTiming } from './alert-timeline.js'
import { validated, type Validated } from './validated.js'

/**
 * What an alert policy is made of, as the API and the operator tool both judge it, and which
 * events it wants. Values that pass are in their normal form (defaults filled in, escalation steps
 * in order).
 */

/** The events a policy may alert on; all of them unless it lists some. */
export const ALERT_EVENTS = ['outage.opened', 'outage.closed', 'site.slow', 'certificate.expiring', 'heartbeat.late'] as const
export type AlertEvent = (typeof ALERT_EVENTS)[number]

export const MAX_POLICY_CHANNELS = 20
export const MAX_ESCALATION_STEPS = 5
export const MAX_AFTER_MIN = 10_080
export const MAX_GROUP_WINDOW_S = 3600

/** A policy as stored and evaluated. */
export interface AlertPolicy extends PolicyTiming {
  id: number
  name: string
  events: AlertEvent[]
  group_window_s: number
  is_default: boolean
}

export type PolicyFields = Omit<AlertPolicy, 'id'>

const id = Joi.number()
  .integer()
  .min(1)
  .max(2 ** 31)
const channelList = Joi.array().items(id).min(1).max(MAX_POLICY_CHANNELS).unique()
const minutes = (min: number) => Joi.number().integer().min(min).max(MAX_AFTER_MIN)

/** A policy's fields as the API judges them (channels by id); a configuration file names channels instead. */
export const policyFields = {
  name: Joi.string()
    .trim()
    .min(1)
    .max(100)
    .pattern(/^[^\p{Cc}]+$/u)
    .messages({ 'string.pattern.base': '"name" must be 1 to 100 printable characters' }),
  channels: channelList,
  events: Joi.array()
    .items(Joi.string().valid(...ALERT_EVENTS))
    .min(1)
    .unique()
    .messages({ 'any.only': `"events" may list only ${ALERT_EVENTS.join(', ')}` }),
  after_min: minutes(0),
  remind_every_min: minutes(1).allow(null),
  escalate: Joi.array()
    .items(Joi.object({ after_min: minutes(0).required(), channels: channelList.required() }).unknown(false))
    .max(MAX_ESCALATION_STEPS),
  on_resolved: Joi.boolean(),
  default: Joi.boolean(),
  group_window_s: Joi.number().integer().min(0).max(MAX_GROUP_WINDOW_S)
}

const newPolicySchema = Joi.object({ ...policyFields, name: policyFields.name.required(), channels: policyFields.channels.required() })
  .required()
  .unknown(false)
  .label('request body')
  .messages({ 'object.base': 'request body must be a JSON object with "name" and "channels"' })

const changeSchema = Joi.object(policyFields).required().min(1).unknown(false).label('request body').messages({
  'object.base': 'request body must be a JSON object',
  'object.min': 'request body must change at least one field'
})

interface PolicyInput {
  name?: string
  channels?: number[]
  events?: AlertEvent[]
  after_min?: number
  remind_every_min?: number | null
  escalate?: Array<{ after_min: number; channels: number[] }>
  on_resolved?: boolean
  default?: boolean
  group_window_s?: number
}

function normal(input: PolicyInput, base: PolicyFields): PolicyFields {
  const escalate = (input.escalate ?? base.escalate).map((s) => ({ after_min: s.after_min, channels: [...s.channels] }))
  escalate.sort((a, b) => a.after_min - b.after_min)
  return {
    name: input.name ?? base.name,
    channels: input.channels ?? base.channels,
    events: input.events ?? base.events,
    after_min: input.after_min ?? base.after_min,
    remind_every_min: input.remind_every_min === undefined ? base.remind_every_min : input.remind_every_min,
    escalate,
    on_resolved: input.on_resolved ?? base.on_resolved,
    group_window_s: input.group_window_s ?? base.group_window_s,
    is_default: input.default ?? base.is_default
  }
}

const BLANK: PolicyFields = {
  name: '',
  channels: [],
  events: [...ALERT_EVENTS],
  after_min: 0,
  remind_every_min: null,
  escalate: [],
  on_resolved: true,
  group_window_s: DEFAULT_GROUP_WINDOW_S,
  is_default: false
}

/** A new policy's fields, defaults filled in. */
export function parseNewPolicy(input: unknown): Validated<PolicyFields> {
  const checked = validated<PolicyInput>(newPolicySchema, input)
  return checked.ok ? { ok: true, value: normal(checked.value, BLANK) } : checked
}

/** A policy as changed: absent keys kept, null clears `remind_every_min`. */
export function parsePolicyChange(current: PolicyFields, input: unknown): Validated<PolicyFields> {
  const checked = validated<PolicyInput>(changeSchema, input)
  return checked.ok ? { ok: true, value: normal(checked.value, current) } : checked
}

/** Every channel a policy names, its escalation steps' included. */
export function policyChannels(p: Pick<PolicyFields, 'channels' | 'escalate'>): number[] {
  return [...new Set([...p.channels, ...p.escalate.flatMap((s) => s.channels)])]
}

/** The kind of alert an event raises under a policy that wants it, or null. */
export function alertKindOf(policy: Pick<AlertPolicy, 'events'>, type: string): AlertKind | null {
  const wants = (e: AlertEvent): boolean => policy.events.includes(e)
  if (type === 'outage.opened') return wants('outage.opened') ? 'outage' : null
  if (type === 'site.slow') return wants('site.slow') ? 'slow' : null
  if (type === 'certificate.expiring') return wants('certificate.expiring') ? 'certificate' : null
  if (type === 'heartbeat.late') return wants('heartbeat.late') ? 'late' : null
  return null
}

/** The timing a policy applies: resolutions only when it wants them and lists `outage.closed` (slow spells' ends follow `on_resolved`). */
export function timingOf(policy: AlertPolicy, kind: AlertKind): PolicyTiming {
  const resolved = policy.on_resolved && (kind !== 'outage' || policy.events.includes('outage.closed'))
  return { ...policy, on_resolved: resolved }
}
