/**
 * Due times of a site's checks when several instances share the schedule (see docs/decisions.md,
 * Several instances): every site is due at `phase + k * interval` for whole k, aligned to the epoch,
 * the same on every instance and after every restart.
 */

/** A site's first due time once it is tracked: its phase in the current interval, or in the next if that has passed. */
export function firstDueAt(phase: number, now: number, intervalMs: number): number {
  const cycleStart = now - (((now % intervalMs) + intervalMs) % intervalMs)
  const due = cycleStart + phase
  return due < now ? due + intervalMs : due
}

/** What a claim of a site due at `dueAt` takes on: the check to run, the occurrences missed, and the next due time. */
export interface ClaimedOccurrence {
  /** When the claimed check is due: `dueAt`, or its next occurrence when `dueAt` is a whole interval or more past. */
  dueAt: number
  /** Occurrences passed over because nobody could start them within one interval of their due time. */
  missed: number
  /** The site's next due time, left for the next claim: one interval later. */
  nextDueAt: number
}

/**
 * A check that cannot start within one interval of its due time is never started (by then the site
 * is due again): a claim of a site that long overdue takes its next occurrence instead, at its phase,
 * as a restarted single instance waits for each site's phase.
 */
export function claimedOccurrence(dueAt: number, now: number, intervalMs: number): ClaimedOccurrence {
  const late = now - dueAt
  const missed = late >= intervalMs ? Math.ceil(late / intervalMs) : 0
  const due = dueAt + missed * intervalMs
  return { dueAt: due, missed, nextDueAt: due + intervalMs }
}

/**
 * Where a site's next due time must move to fit its interval, or null when it may stay. A due time
 * two intervals ahead or more was set under a longer interval (a claim sets one at most an interval
 * and its look-ahead ahead); in a row `changed` since the schedule last looked, one off the site's
 * phase was set under another interval. Either moves to the site's phase, at least half an interval
 * after its last check (so never twice in a burst) and so within one and a half intervals. A due
 * time already passed stays: the claims take it, late or passed over.
 */
export function movedDueAt({
  dueAt,
  phase,
  intervalMs,
  now,
  checkedAt,
  changed
}: {
  dueAt: number
  phase: number
  intervalMs: number
  now: number
  /** The site's newest check; null when it has none. */
  checkedAt: number | null
  changed: boolean
}): number | null {
  if (dueAt <= now) return null
  const offPhase = changed && (((dueAt - phase) % intervalMs) + intervalMs) % intervalMs !== 0
  if (!offPhase && dueAt <= now + 2 * intervalMs) return null
  const moved = firstDueAt(phase, Math.max(now, checkedAt === null ? now : checkedAt + intervalMs / 2), intervalMs)
  return moved === dueAt ? null : moved
}
