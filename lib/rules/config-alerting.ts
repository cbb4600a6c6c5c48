import Joi from 'joi'
import { channelFields, channelNameSchema, parseChannelConfig, SECRET_FIELDS, type ChannelKind } from './alert-channels.js'
import { MAX_ESCALATION_STEPS, MAX_POLICY_CHANNELS, parseNewPolicy, policyFields, type AlertEvent } from './alert-policy.js'

/**
 * Alert channels and policies in a configuration file, judged by the API's own rules. A channel
 * and a policy are named by their names, and a policy names its channels (and a channel the one
 * its failing is reported to) by name: ids differ between databases, names do not. A channel's
 * secret fields (a Slack URL, a routing key, a password) come from the environment only.
 */

/** A channel as the file declares it: what may be shown, and its secrets (values from the environment). */
export interface ChannelDecl {
  name: string
  kind: ChannelKind
  config: Record<string, unknown>
  secrets: Record<string, unknown>
  report_to: string | null
}

/** A policy as the file declares it, with its defaults filled in as the API fills them. */
export interface PolicyDecl {
  name: string
  channels: string[]
  events: AlertEvent[]
  after_min: number
  remind_every_min: number | null
  escalate: Array<{ after_min: number; channels: string[] }>
  on_resolved: boolean
  group_window_s: number
  default: boolean
}

export interface AlertingProblem {
  path: Array<string | number>
  message: string
}

export const MAX_FILE_CHANNELS = 1_000
export const MAX_FILE_POLICIES = 1_000

const channelNames = Joi.array().items(channelNameSchema).min(1).max(MAX_POLICY_CHANNELS).unique()
// A policy whose every channel was deleted names none (deleting a channel takes it out of policies):
// its file, as exported, says so, and applying it changes nothing.
const policyChannels = channelNames.min(0)

export const channelSchema = Joi.object({ ...channelFields, report_to: channelNameSchema.allow(null) }).unknown(false)

export const policySchema = Joi.object({
  ...policyFields,
  name: policyFields.name.required(),
  channels: policyChannels.required(),
  escalate: Joi.array()
    .items(Joi.object({ after_min: policyFields.after_min.required(), channels: channelNames.required() }).unknown(false))
    .max(MAX_ESCALATION_STEPS)
}).unknown(false)

interface RawChannel {
  name: string
  kind: ChannelKind
  config: Record<string, unknown>
  report_to?: string | null
}
interface RawPolicy {
  name: string
  channels: string[]
  escalate?: Array<{ after_min: number; channels: string[] }>
  [key: string]: unknown
}

const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

function declaredOnce<T extends { name: string }>(list: string, raw: readonly T[], problems: AlertingProblem[]): Array<[T, number]> {
  const seen = new Map<string, number>()
  const out: Array<[T, number]> = []
  raw.forEach((item, i) => {
    if (seen.has(item.name))
      problems.push({ path: [list, i, 'name'], message: `"${item.name}" is declared twice (also ${list}[${seen.get(item.name)}])` })
    else {
      seen.set(item.name, i)
      out.push([item, i])
    }
  })
  return out
}

/** The file's channels in normal form (sorted by name): each kind's config judged as the API judges it. */
export function checkChannels(raw: readonly RawChannel[], fromEnv: ReadonlySet<string>, problems: AlertingProblem[]): ChannelDecl[] {
  const out: ChannelDecl[] = []
  for (const [c, i] of declaredOnce('channels', raw, problems)) {
    const parsed = parseChannelConfig(c.kind, c.config)
    if (!parsed.ok) {
      problems.push({ path: ['channels', i, 'config'], message: parsed.error })
      continue
    }
    const inline = SECRET_FIELDS[c.kind].filter((f) => f in parsed.value.secrets && !fromEnv.has(`channels[${i}].config.${f}`))
    for (const field of inline)
      problems.push({ path: ['channels', i, 'config', field], message: 'a secret is written "${NAME}" and NAME set in the environment' })
    if (c.report_to === c.name) problems.push({ path: ['channels', i, 'report_to'], message: '"report_to" names the channel itself' })
    out.push({ name: c.name, kind: c.kind, config: parsed.value.config, secrets: parsed.value.secrets, report_to: c.report_to ?? null })
  }
  return out.sort(byName)
}

/**
 * The file's policies in normal form (sorted by name). The API's rule fills in the defaults: the
 * channel names stand in as numbers while it judges, so that what it fills in and sorts is the
 * same as for a policy made over the API.
 */
export function checkPolicies(raw: readonly RawPolicy[], problems: AlertingProblem[]): PolicyDecl[] {
  const out: PolicyDecl[] = []
  let defaults = 0
  for (const [p, i] of declaredOnce('alert_policies', raw, problems)) {
    const names = [...new Set([...p.channels, ...(p.escalate ?? []).flatMap((s) => s.channels)])]
    const idOf = (name: string): number => names.indexOf(name) + 1
    const { default: isDefault, ...rest } = p
    // The API's rule wants a channel: one that names none is judged with a stand-in, dropped after.
    const stand = p.channels.length === 0 ? [names.length + 1] : p.channels.map(idOf)
    const parsed = parseNewPolicy({
      ...rest,
      ...(isDefault === undefined ? {} : { default: isDefault }),
      channels: stand,
      ...(p.escalate === undefined ? {} : { escalate: p.escalate.map((s) => ({ after_min: s.after_min, channels: s.channels.map(idOf) })) })
    })
    if (!parsed.ok) {
      problems.push({ path: ['alert_policies', i], message: parsed.error })
      continue
    }
    const nameOf = (id: number): string => names[id - 1] as string
    const v = parsed.value
    if (isDefault === true) defaults++
    if (defaults > 1) problems.push({ path: ['alert_policies', i, 'default'], message: 'only one alert policy may be the default' })
    out.push({
      name: v.name,
      channels: p.channels.length === 0 ? [] : v.channels.map(nameOf),
      events: v.events,
      after_min: v.after_min,
      remind_every_min: v.remind_every_min,
      escalate: v.escalate.map((s) => ({ after_min: s.after_min, channels: s.channels.map(nameOf) })),
      on_resolved: v.on_resolved,
      group_window_s: v.group_window_s,
      default: isDefault === true
    })
  }
  return out.sort(byName)
}
