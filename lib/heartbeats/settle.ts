import { heartbeatOutageEvent, type NewEvent } from '../rules/events.js'
import { deadlines, heartbeatOutageStep, heartbeatState, nextDeadline, type HeartbeatClock, type Window } from '../rules/heartbeat.js'
import { windowOccurrences } from '../rules/maintenance.js'
import type { Db } from '../store/db.js'
import { writeHeartbeatProgress, writeHeartbeatSite, type HeartbeatRow } from '../store/heartbeats.js'
import { listMaintenanceWindows } from '../store/maintenance.js'
import { closeOutage, insertOutage, listOpenOutages } from '../store/outages.js'

/** Maintenance further ahead than this is not read: a deadline past it is looked at again then. */
const WINDOW_HORIZON_MS = 35 * 86_400_000

/** The clock the rules read, from a heartbeat's row. */
export function clockOf(row: HeartbeatRow): HeartbeatClock {
  return {
    schedule: { every_s: row.every_s },
    graceS: row.grace_s,
    maxRuntimeS: row.max_runtime_s,
    paused: row.paused,
    lastSuccessAt: row.last_success_at?.getTime() ?? null,
    lastPingAt: row.last_ping_at?.getTime() ?? null,
    failed: row.failed,
    openRuns: row.open_runs
  }
}

/** The heartbeat's maintenance windows from its last ping to past its next deadlines, as intervals. */
export async function windowsOf(db: Db, row: HeartbeatRow, now: number): Promise<Window[]> {
  const stored = (await listMaintenanceWindows({ db, siteIds: [row.site_id] })).get(row.site_id) ?? []
  if (stored.length === 0) return []
  const from = Math.min(row.last_ping_at?.getTime() ?? now, now)
  const to = Math.max(from, now) + (row.every_s + row.grace_s + (row.max_runtime_s ?? 0)) * 1000 + WINDOW_HORIZON_MS
  return stored.flatMap((w) => windowOccurrences(w, from, to)).map((i) => ({ start: i.from, end: i.to }))
}

/** What settling a heartbeat did: its state, the outage step taken, and the events to append. */
export interface Settled {
  state: HeartbeatRow['state']
  step: 'open' | 'close' | 'none'
  /** For the caller to append last in its transaction (`appendToOutbox`), after every other lock. */
  events: NewEvent[]
}

/**
 * Writes a heartbeat's state at `now` after `clock` (the row's own, or one a ping changed) inside
 * the caller's transaction, the heartbeat's row locked: down opens its outage, up (or paused)
 * closes it, its events returned for the caller to append last in the same transaction (the
 * sequence lock taken before other rows' locks would order instances into a deadlock); the next
 * deadline is stored for the loop.
 * `at` is the ping's time or the loop's look: an outage closes then, and opens then unless a
 * passed deadline says when it began.
 */
export async function settleHeartbeat({
  db,
  row,
  clock,
  now,
  at,
  message,
  runMs
}: {
  db: Db
  row: HeartbeatRow
  clock: HeartbeatClock
  now: number
  at: number
  message?: string | null
  runMs?: number | null
}): Promise<Settled> {
  const windows = await windowsOf(db, row, now)
  const state = heartbeatState(clock, now, windows)
  const open = (await listOpenOutages({ db, siteIds: [row.site_id] })).get(row.site_id) ?? null
  const step = heartbeatOutageStep(open !== null, state)
  const events: NewEvent[] = []
  const named = { siteId: row.site_id, slug: row.slug, name: row.name }
  if (step === 'open') {
    // Down by a deadline starts when the deadline passed, however late the loop looked.
    const downAt = deadlines(clock, windows).downAt
    const startedAt = new Date(clock.failed || downAt === null || downAt > now ? at : downAt)
    await insertOutage({ db, siteId: row.site_id, startedAt })
    events.push(heartbeatOutageEvent('open', named, { started_at: startedAt, ended_at: null }, startedAt))
  } else if (step === 'close' && open !== null) {
    const endedAt = new Date(Math.max(at, open.started_at.getTime()))
    await closeOutage({ db, id: open.id, endedAt })
    events.push(heartbeatOutageEvent('close', named, { started_at: open.started_at, ended_at: endedAt }, endedAt))
  }
  const deadline = nextDeadline(clock, now, windows)
  await writeHeartbeatProgress({
    db,
    id: row.id,
    progress: {
      paused: clock.paused,
      state,
      failed: clock.failed,
      last_ping_at: clock.lastPingAt === null ? null : new Date(clock.lastPingAt),
      last_ping_kind: row.last_ping_kind,
      last_success_at: clock.lastSuccessAt === null ? null : new Date(clock.lastSuccessAt),
      open_runs: [...clock.openRuns],
      last_run_ms: runMs ?? row.last_run_ms,
      next_deadline: deadline === null ? null : new Date(deadline)
    },
    ...(message === undefined ? {} : { message }),
    now: new Date(now)
  })
  if (state !== row.state || clock.lastPingAt !== (row.last_ping_at?.getTime() ?? null)) {
    await writeHeartbeatSite({
      db,
      siteId: row.site_id,
      status: state === 'down' ? 'down' : state === 'up' || state === 'late' ? 'up' : 'unavailable',
      at: clock.lastPingAt === null ? null : new Date(clock.lastPingAt),
      firstPing: row.last_ping_at === null && clock.lastPingAt !== null
    })
  }
  return { state, step, events }
}
