import type { SiteStatus } from './consensus.js'

/**
 * A site becomes slow after two consecutive `up` checks whose consensus response time is over its
 * `max_response_ms`, and stops after two `up` checks that are not: one odd check never flips it. A
 * `down` check ends it at once (a site that does not answer is not slow, and its record says so).
 */

/** How many consecutive checks it takes to become slow, or to stop being slow. */
export const SLOW_STREAK = 2

/** A site's slow state between checks. */
export interface SlowState {
  slow: boolean
  /** Consecutive `up` checks so far that disagree with `slow` (fast ones while slow, slow ones while not). */
  streak: number
}

export const NOT_SLOW: Readonly<SlowState> = Object.freeze({ slow: false, streak: 0 })

/** A check as the slow rule reads it: its site status, its consensus response time, the threshold in force. */
export interface SlowCheck {
  status: SiteStatus
  /** Median response time of the answering locations; null when none answered. */
  response_ms: number | null
  /** The site's `expect.max_response_ms`; null when not set. */
  max_response_ms: number | null
}

export type SlowEvent = 'site.slow' | 'site.slow_ended'

/** Whether one check was slow: up, answered, and strictly over the threshold. */
export function isSlowCheck(check: SlowCheck): boolean {
  return check.status === 'up' && check.max_response_ms !== null && check.response_ms !== null && check.response_ms > check.max_response_ms
}

/**
 * Applies one check to the slow state: the state after it and the event it causes, if any. A
 * `down` check ends a slow spell, with its event (the status record already showed it not slow,
 * and the two must agree); a check neither up nor down says nothing about speed: it breaks the
 * streak but keeps the state. Without a threshold nothing is slow: a site that was slow stops at
 * its next check, with the event.
 */
export function slowStep(state: Readonly<SlowState>, check: SlowCheck): { state: SlowState; event: SlowEvent | null } {
  if (check.max_response_ms === null) {
    return { state: { slow: false, streak: 0 }, event: state.slow ? 'site.slow_ended' : null }
  }
  if (check.status === 'down') return { state: { slow: false, streak: 0 }, event: state.slow ? 'site.slow_ended' : null }
  if (check.status !== 'up' || check.response_ms === null) return { state: { slow: state.slow, streak: 0 }, event: null }
  if (isSlowCheck(check) === state.slow) return { state: { slow: state.slow, streak: 0 }, event: null }
  const streak = state.streak + 1
  if (streak < SLOW_STREAK) return { state: { slow: state.slow, streak }, event: null }
  return { state: { slow: !state.slow, streak: 0 }, event: state.slow ? 'site.slow_ended' : 'site.slow' }
}
