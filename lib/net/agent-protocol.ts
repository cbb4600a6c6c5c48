import Joi from 'joi'
import { tryNormaliseDomain } from '../rules/domain.js'
import { expectSchema, type LocationExpectations, type StatusEntry } from '../rules/expectations.js'
import { checkSchema, type CheckSpec } from '../rules/check-spec.js'

/**
 * What the central and the agents say to each other over NATS. The central sends the domain and
 * the probe options, never an address: the agent resolves with its own resolvers and applies its
 * own target policy at the dial (docs/decisions.md, Location agents). The agent answers what its
 * probe measured, and the central reads that answer as untrusted data (./agent-reply.ts).
 */

/**
 * The NATS services API name of a location's agents: `$SRV.PING.site-status-agent-fra1` reaches
 * fra1's. deploy/nats.conf lets a location's user subscribe to its own name only, so an agent can
 * neither answer for another location nor be counted as one.
 */
export function agentService(agent: string): string {
  return `site-status-agent-${agent}`
}

/** The subject a location's probe requests travel on, to whichever of its agents the queue group picks. */
export function probeSubject(agent: string): string {
  return `site-status.probe.${agent}`
}

/** The subject of probe requests to one agent of a location (its services id). */
export function agentSubject(agent: string, id: string): string {
  return `site-status.probe.${agent}.${id}`
}

/**
 * The prefix of every central's reply subjects: deploy/nats.conf lets the central's user read these
 * and no other inbox. Each instance adds an id of its own and each request an unguessable token.
 */
export const CENTRAL_INBOX_PREFIX = '_INBOX_site_status'

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
  /**
   * What the check expects of the final answer, only the keys set. An agent older than this field
   * refuses the whole request as invalid (the central reports `agent_rejected`), never probing
   * without it: an answer judged by the wrong rule would count in the quorum.
   */
  expect?: { status?: StatusEntry[]; body_contains?: string }
  /**
   * What the location does, other than the plain web check (lib/rules/check-spec.ts, normal form);
   * it holds secret header values, which travel only on this location's own subject. An agent
   * older than this field refuses the request as invalid (`agent_rejected`).
   */
  check?: CheckSpec
}

/** The expectations as a request carries them: the keys set, nothing for the others. */
export function agentExpectations(expect: Readonly<LocationExpectations>): NonNullable<AgentProbeRequest['expect']> {
  return {
    ...(expect.status === null ? {} : { status: expect.status }),
    ...(expect.body_contains === null ? {} : { body_contains: expect.body_contains })
  }
}

/** A request's expectations as the probe takes them; undefined when it carries none. */
export function requestExpectations(request: AgentProbeRequest): LocationExpectations | undefined {
  if (request.expect === undefined) return undefined
  return { status: request.expect.status ?? null, body_contains: request.expect.body_contains ?? null }
}

/** The largest request an agent reads; a bigger one is refused unread. */
export const MAX_REQUEST_BYTES = 4096

const PRINTABLE = /^[\x20-\x7e]+$/

const requestSchema = Joi.object({
  v: Joi.number().valid(1).required(),
  domain: Joi.string().max(253).required(),
  lane: Joi.string().max(200).pattern(PRINTABLE),
  class: Joi.string().valid('demand', 'scheduled', 'light').required(),
  user_agent: Joi.string().max(256).pattern(PRINTABLE).required(),
  // The sites API's own schema (normal form, byte limit); a null key is refused: absent means unset.
  expect: expectSchema.keys({
    status: expectSchema.extract('status').disallow(null),
    body_contains: expectSchema.extract('body_contains').disallow(null),
    max_response_ms: Joi.forbidden()
  }),
  check: checkSchema
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
