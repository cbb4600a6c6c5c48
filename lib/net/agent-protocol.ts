import Joi from 'joi'
import { tryNormaliseDomain } from '../rules/domain.js'

/**
 * What the central and the agents say to each other over NATS. The central sends the domain and
 * the probe options, never an address: the agent resolves with its own resolvers and applies its
 * own target policy at the dial (docs/decisions.md, Location agents).
 */

/** The NATS services API name every agent registers under: `$SRV.PING.site-status-agent` finds them all. */
export const AGENT_SERVICE = 'site-status-agent'

/** The subject a location's probe requests travel on. */
export function probeSubject(agent: string): string {
  return `site-status.probe.${agent}`
}

/** The queue group of a location's agents: each request goes to one of them. */
export function probeQueue(agent: string): string {
  return `probe-${agent}`
}

/** One probe request. `v` lets agents and centrals of different versions tell each other apart. */
export interface AgentProbeRequest {
  v: 1
  domain: string
  /** Whose check it is (workers/fair-starts.ts lanes). */
  lane?: string
  class: 'demand' | 'scheduled' | 'light'
  /** The User-Agent the probe sends: the central's, naming its PUBLIC_URL. */
  user_agent: string
}

/** The largest request an agent reads; a bigger one is refused unread. */
export const MAX_REQUEST_BYTES = 4096

const PRINTABLE = /^[\x20-\x7e]+$/

const requestSchema = Joi.object({
  v: Joi.number().valid(1).required(),
  domain: Joi.string().max(253).required(),
  lane: Joi.string().max(200).pattern(PRINTABLE),
  class: Joi.string().valid('demand', 'scheduled', 'light').required(),
  user_agent: Joi.string().max(256).pattern(PRINTABLE).required()
})
  .unknown(false)
  .prefs({ convert: false })

/**
 * An agent's strict reading of a request: well-formed JSON of exactly the fields above, and a
 * domain already in the normal form the central sends (a host name, never an address or a URL).
 * Null when it is anything else: the agent answers an error and never probes.
 */
export function readProbeRequest(data: Uint8Array): AgentProbeRequest | null {
  if (data.byteLength > MAX_REQUEST_BYTES) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data))
  } catch {
    return null
  }
  const checked = requestSchema.validate(parsed) as Joi.ValidationResult<AgentProbeRequest>
  if (checked.error !== undefined) return null
  const value = checked.value
  const domain = tryNormaliseDomain(value.domain)
  return domain.ok && domain.domain === value.domain ? value : null
}
