import type { OutageStep } from '../../rules/outages.js'
import type { SlowEvent } from '../../rules/slow.js'

/** What recording a check did: the result the database committed and the in-memory state applies. */
export interface RecordedCheck {
  /** False when a newer check was already recorded: the row is kept, the site's state is not rolled back. */
  current: boolean
  step: OutageStep
  /** The outage opened or closed by this check. */
  outage: { id: number; started_at: Date; ended_at: Date | null } | null
  /** Whether the site is slow after this check (the slow rule); unchanged by a check not current. */
  slow: boolean
  /** The slow spell this check began or ended, if any. */
  slowEvent?: SlowEvent | null
}
