import type { SiteStatus } from './consensus.js'

/** What a recorded check does to the site's outage record. */
export type OutageStep = 'open' | 'close' | 'none'

/**
 * An outage opens at the first `down` check and closes at the first later `up` one. `unconfirmed`
 * and `unavailable` say nothing about the site, so they neither open nor close one.
 */
export function outageStep(hasOpenOutage: boolean, status: SiteStatus): OutageStep {
  if (status === 'down' && !hasOpenOutage) return 'open'
  if (status === 'up' && hasOpenOutage) return 'close'
  return 'none'
}

/** Whole seconds from start to end, or to `now` while ongoing. */
export function durationSeconds(startedAt: Date, endedAt: Date | null, now: Date): number {
  return Math.max(0, Math.floor(((endedAt ?? now).getTime() - startedAt.getTime()) / 1000))
}
