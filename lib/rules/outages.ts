import type { SiteStatus } from './consensus.js'

/** What a recorded check does to the site's outage record. */
export type OutageStep = 'open' | 'close' | 'none'

/** An ongoing outage, as the rules need it: when it started. */
export interface OpenOutage {
  started_at: Date
}

/** A site's outage record before a check: its newest applied check's time and its ongoing outage. */
export interface OutageSnapshot {
  /** Null before any check was applied. */
  checkedAt: Date | null
  open: OpenOutage | null
}

/** What a check changes: nothing it may (stale), nothing, an outage opened or closed at the check's time. */
export type OutageChange =
  { kind: 'stale' } | { kind: 'none' } | { kind: 'open'; at: Date } | { kind: 'close'; at: Date; outage: OpenOutage }

/** A check as the transition reads it. */
export interface OutageCheck {
  status: SiteStatus
  checkedAt: Date
}

/**
 * An outage opens at the first `down` check and closes at the first later `up` one. `unconfirmed`
 * and `unavailable` say nothing about the site, so they neither open nor close one.
 */
export function outageStep(hasOpenOutage: boolean, status: SiteStatus): OutageStep {
  if (status === 'down' && !hasOpenOutage) return 'open'
  if (status === 'up' && hasOpenOutage) return 'close'
  return 'none'
}

/**
 * A check older than the newest one applied arrives late (a retried write): it is kept as history
 * but must not roll the site's state back or invent a transition. One of the same time is not late.
 */
export function isStale(newest: Date | null, checkedAt: Date): boolean {
  return newest !== null && newest.getTime() > checkedAt.getTime()
}

/**
 * Applies one check to a site's outage record: what it changes and the record after it. A stale
 * check changes nothing, the snapshot included. During maintenance (`inMaintenance`, the check's
 * time inside a window) no outage opens; one already open still closes as usual.
 */
export function outageTransition(
  snapshot: OutageSnapshot,
  check: OutageCheck,
  { inMaintenance = false }: { inMaintenance?: boolean } = {}
): { change: OutageChange; after: OutageSnapshot } {
  if (isStale(snapshot.checkedAt, check.checkedAt)) return { change: { kind: 'stale' }, after: snapshot }
  const at = check.checkedAt
  const step = outageStep(snapshot.open !== null, check.status)
  if (step === 'open' && !inMaintenance) return { change: { kind: 'open', at }, after: { checkedAt: at, open: { started_at: at } } }
  if (step === 'close' && snapshot.open !== null) {
    return { change: { kind: 'close', at, outage: snapshot.open }, after: { checkedAt: at, open: null } }
  }
  return { change: { kind: 'none' }, after: { checkedAt: at, open: snapshot.open } }
}

/**
 * When a site's ongoing outage ends as the site stops being tracked: at the removal, since nobody
 * watches the site any more and nothing else would close it, but never before it started (a clock
 * set back must not make a negative outage). Null when no outage is open.
 */
export function outageEndOnRemoval(open: OpenOutage | null, removedAt: Date): Date | null {
  if (open === null) return null
  return open.started_at.getTime() > removedAt.getTime() ? open.started_at : removedAt
}

/** Whole seconds from start to end, or to `now` while ongoing. */
export function durationSeconds(startedAt: Date, endedAt: Date | null, now: Date): number {
  return durationSecondsMs(startedAt.getTime(), endedAt?.getTime() ?? null, now.getTime())
}

/** {@link durationSeconds} over epoch milliseconds. */
export function durationSecondsMs(startedAt: number, endedAt: number | null, now: number): number {
  return Math.max(0, Math.floor(((endedAt ?? now) - startedAt) / 1000))
}
