import type { ProbeErrorCode, ProbeResult } from '../../../workers/http-probe.js'
import type { LocationExpectations } from '../../rules/expectations.js'
import type { ServiceClass } from './classes.js'
import type { CheckSpec } from '../../rules/check-spec.js'

/** Extra time a local location gets beyond its probe deadline before it counts as not answering. */
export const ANSWER_MARGIN_MS = 2000
/** The error of a location whose probe was still running when the service's stop grace ran out. */
export const STOPPING_ERROR = 'location: service stopping'
/** The error of a location whose probe nobody waited for any longer (its check was cancelled). */
export const CANCELLED_ERROR = 'location: check cancelled'

/**
 * Why a location gave no answer of its own: its actor failed, missed the deadline, the service is
 * stopping, or nobody waited for the check any longer (cancelled); or, for a location served by
 * agents, no agent serves it, the agent gave no answer in time (it died or was cut off), NATS cannot
 * be reached, the agent refused the request as invalid, was at its capacity or failed to probe, the
 * agent's own target policy refused the target, or its answer was refused as not understood.
 */
export const LOCATION_FAILURE_CODES = [
  'location_failed',
  'location_no_answer',
  'location_stopping',
  'location_cancelled',
  'agent_none',
  'agent_no_answer',
  'agent_unreachable',
  'agent_rejected',
  'agent_busy',
  'agent_failed',
  'agent_refused',
  'agent_bad_answer'
] as const
export type LocationFailureCode = (typeof LOCATION_FAILURE_CODES)[number]

/** The code of a location's error: the probe's, or the location's own when it did not answer. */
export type LocationErrorCode = ProbeErrorCode | LocationFailureCode

/**
 * One location's result as the check endpoint reports it (and the store keeps it): the probe's
 * result with its stable `code` beside `error` (null when there is none).
 */
export interface LocationResult extends Omit<ProbeResult, 'code'> {
  location: string
  code?: LocationErrorCode | null
}

/**
 * What a location answered. A prober that brings no codes (test doubles) leaves `code` out:
 * nothing is then refused.
 */
export type LocationAnswer = LocationResult

/** A probe as a location takes it. */
export interface ProbeRequest {
  domain: string
  /** Whose check it is (workers/fair-starts.ts): the actors start a busy lane's probes in turn with the others'. */
  lane?: string
  cls: ServiceClass
  /** The User-Agent to send instead of the location's own (an agent probes with its central's). */
  userAgent?: string
  /** What the check expects of the final answer, judged here; absent: the probe's own rule. */
  expect?: LocationExpectations
  /** What the location does; absent: the plain web check. */
  check?: CheckSpec
  /**
   * Aborted when nobody waits for the probe any longer: a local actor then ends it (an agent's runs
   * to its own deadline; only the wait for it ends).
   */
  signal?: AbortSignal
}

/** What a location is made of, as /healthz and /metrics show it. */
export interface LocationHealth {
  label: string
  kind: 'local' | 'proxy' | 'agent'
  /** An agent location's name (`site-status agent --location`). */
  agent?: string
  /** Agents serving it, as last counted. */
  agents?: number
  /** When an agent of it last answered a probe or a ping (ISO 8601); null: never since start. */
  last_seen?: string | null
  /** The versions its agents run. */
  versions?: string[]
  /** Its agents' answers refused as not understood since start (`agent_bad_answer`). */
  bad_answers?: number
}

/**
 * One location, whatever reaches the sites for it: actors on this machine (direct or through a
 * proxy, ./local.ts) or agents in its region over NATS (./agent.ts). The set of locations
 * (./index.ts) asks each for every check and merges nothing: the supervisor does.
 */
export interface Location {
  readonly label: string
  /**
   * Whether the location ends a probe it cannot answer by a deadline of its own (an agent's request
   * is cut off after the hop's margin); otherwise the set's one timer gives up on it.
   */
  readonly ownDeadline: boolean
  /** Resolves once it can take probes (start-up waits for it); `light`: the light consumers' actors too. */
  ready(opts?: { light?: boolean }): Promise<void>
  /**
   * One probe. Resolves with the location's answer, or with a not-answered one of its own code;
   * never rejects.
   */
  probe(request: ProbeRequest): Promise<Omit<LocationAnswer, 'location'>>
  /** The set gave up waiting for it: a local location checks that its actor still runs. */
  missed(cls: ServiceClass): void
  health(): LocationHealth
  close(): Promise<void>
}

/** A location's answer when it gave none of its own. */
export function notAnswered(code: LocationFailureCode, error: string): Omit<LocationAnswer, 'location'> {
  return {
    status: 'error',
    http_code: 0,
    response_ms: 0,
    error,
    code,
    final_url: null,
    tls_expires_at: null,
    tls_issuer: null,
    timings: { dns: 0, connect: 0, tls: 0, first_byte: 0, total: 0 }
  }
}
