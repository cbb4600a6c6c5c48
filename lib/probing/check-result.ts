import type { CheckSpec } from '../rules/check-spec.js'
import type { CheckStatus } from '../rules/consensus.js'
import { TargetPolicyError } from './check-errors.js'
import type { LocationResult } from './locations/index.js'

/** The check endpoint's answer: the spec's fields first, then what API consumers also want. */
export interface CheckResult {
  domain: string
  status: CheckStatus
  locations_answered: number
  locations_total: number
  response_ms: number | null
  cached: boolean
  locations: LocationResult[]
  checked_at: string
  partial: boolean
  blocked: boolean
  /** Up with a consensus response time over the check's `max_response_ms`; present only when one was given. */
  slow?: boolean
  /** The check each location ran, secret header values masked; absent for the plain web check. */
  check?: CheckSpec
}

/**
 * A check's result, with whether it was cut short (by the stop, or cancelled: nobody waited any
 * longer); or the policy's refusal (the 400's text).
 */
export type Outcome = { ok: true; result: CheckResult; cut: boolean } | { ok: false; error: string }

/** The result of an outcome, or the policy's refusal thrown. */
export function resultOf(outcome: Outcome): CheckResult {
  if (!outcome.ok) throw new TargetPolicyError(outcome.error)
  return outcome.result
}

/** A kept outcome as a later check answers it: the same result, marked cached. */
export function reused(outcome: Outcome): Outcome {
  return outcome.ok ? { ...outcome, result: { ...outcome.result, cached: true } } : outcome
}
