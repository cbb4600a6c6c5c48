import type { OutageStep } from '../../rules/outages.js'
import type { SlowEvent } from '../../rules/slow.js'
import type { OutageSpan } from '../../rules/uptime.js'

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

/** Applies a recorded check's outage to a site's spans in memory: one opened is appended, one closed ends. */
export function applyOutageStep(state: { outages: OutageSpan[]; lastOutage: OutageSpan | null }, recorded: RecordedCheck): void {
  if (recorded.step === 'open' && recorded.outage) {
    const span: OutageSpan = { started_at: recorded.outage.started_at, ended_at: null }
    state.outages.push(span)
    state.lastOutage = span
  } else if (recorded.step === 'close' && recorded.outage) {
    const open = state.outages.find((o) => o.ended_at === null)
    if (open) open.ended_at = recorded.outage.ended_at
    state.lastOutage = open ?? { started_at: recorded.outage.started_at, ended_at: recorded.outage.ended_at }
  }
}
