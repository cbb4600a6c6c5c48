import type { Refusal } from './admission.js'
import { NON_PUBLIC_ERROR } from '../rules/target-policy.js'

/** The target policy refused the domain (or a redirect hop): the check answers 400 with this text. */
export class TargetPolicyError extends Error {
  readonly code = 'non_public_target'
  constructor(message = NON_PUBLIC_ERROR) {
    super(message)
  }
}

/** The instance is at its check capacity, or the key at its share of it: the check answers 503. */
export class CapacityError extends Error {
  readonly code = 'over_capacity'
  readonly retryAfterS: number
  constructor(refusal: Refusal) {
    super(
      refusal.scope === 'key'
        ? 'this key has too many checks in flight; retry after the Retry-After delay'
        : 'too many checks in flight; retry after the Retry-After delay'
    )
    this.retryAfterS = refusal.retryAfterS
  }
}
