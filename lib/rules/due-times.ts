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
