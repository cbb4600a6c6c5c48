import { heartbeatLateEvent, heartbeatOutageEvent, type NewEvent } from '../rules/events.js'
import {
  deadlines,
  heartbeatOutageStep,
  heartbeatState,
  nextDeadline,
  nextDue,
  type HeartbeatClock,
  type Window
} from '../rules/heartbeat.js'
import { windowOccurrences } from '../rules/maintenance.js'
import type { Db } from '../store/db.js'
import { writeHeartbeatProgresses, type HeartbeatSiteWrite } from '../store/heartbeat-writes.js'
import type { HeartbeatProgress, HeartbeatRow } from '../store/heartbeats.js'
import { listMaintenanceWindows, type StoredWindow } from '../store/maintenance.js'
import { closeOutage, insertOutage, listOpenOutages, type OutageRow } from '../store/outages.js'

/** Maintenance further ahead than this is not read: a deadline past it is looked at again then. */
const WINDOW_HORIZON_MS = 35 * 86_400_000

/** The clock the rules read, from a heartbeat's row. */
export function clockOf(row: HeartbeatRow): HeartbeatClock {
  return {
    schedule: row.schedule,
    graceS: row.grace_s,
    maxRuntimeS: row.max_runtime_s,
    paused: row.paused,
    lastSuccessAt: row.last_success_at?.getTime() ?? null,
    lastPingAt: row.last_ping_at?.getTime() ?? null,
    failed: row.failed,
    openRuns: row.open_runs
  }
}

/** What settling a heartbeat did: its state, the outage step taken, and the events to append. */
export interface Settled {
  state: HeartbeatRow['state']
  step: 'open' | 'close' | 'none'
  /** For the caller to append last in its transaction (`appendToOutbox`), after every other lock. */
  events: NewEvent[]
}

/** What a settled heartbeat's rows are to hold: written by {@link writeSettled}. */
export interface HeartbeatWrite {
  id: number
  progress: HeartbeatProgress
  /** The last message a ping carried; undefined leaves the stored one. */
  message?: string | null
  /** Its `sites` row's mirror of the state, when the state or the last ping changed. */
  site: HeartbeatSiteWrite | null
}

/** What a heartbeat's outage step needs to know without reading: its windows and its open outage. */
export interface Known {
  windows: StoredWindow[]
  open: OutageRow | null
}

/** The heartbeat's maintenance windows from its last ping to past its next deadlines, as intervals. */
function intervalsOf(stored: readonly StoredWindow[], row: HeartbeatRow, now: number): Window[] {
  if (stored.length === 0) return []
  const from = Math.min(row.last_ping_at?.getTime() ?? now, now)
  const last = row.last_success_at?.getTime() ?? from
  // A cron that fires no more has no due time: the horizon alone bounds the read.
  const due = Math.max(nextDue(row.schedule, last), now)
  const to = (Number.isFinite(due) ? due : now) + (row.grace_s + (row.max_runtime_s ?? 0)) * 1000 + WINDOW_HORIZON_MS
  return stored.flatMap((w) => windowOccurrences(w, from, to)).map((i) => ({ start: i.from, end: i.to }))
}

/** A heartbeat's row (locked), its clock, and what happened: `now` and `at`, a ping's message and run time. */
interface SettleArgs {
  db: Db
  row: HeartbeatRow
  clock: HeartbeatClock
  now: number
  at: number
  message?: string | null
  runMs?: number | null
}

/**
 * Judges a heartbeat at `now` after `clock` (the row's own, or one a ping changed) inside the
 * caller's transaction, the heartbeat's row locked: down opens its outage, up (or paused) closes
 * it (both written at once: a later ping of the same batch may close what this one opened), its
 * events returned for the caller to append last in the same transaction (the sequence lock taken
 * before other rows' locks would order instances into a deadlock). The heartbeat's own rows are
 * left for the caller to write ({@link writeSettled}), with the next deadline for the loop.
 * `at` is the ping's time or the loop's look: an outage closes then, and opens then unless a
 * passed deadline says when it began. `known` spares the two reads when the caller has them.
 */
export async function judgeHeartbeat({
  db,
  row,
  clock,
  now,
  at,
  message,
  runMs,
  known
}: SettleArgs & { known?: Known }): Promise<{ settled: Settled; write: HeartbeatWrite; open: OutageRow | null }> {
  const stored = known?.windows ?? (await listMaintenanceWindows({ db, siteIds: [row.site_id] })).get(row.site_id) ?? []
  const windows = intervalsOf(stored, row, now)
  const state = heartbeatState(clock, now, windows)
  const open = known === undefined ? ((await listOpenOutages({ db, siteIds: [row.site_id] })).get(row.site_id) ?? null) : known.open
  const step = heartbeatOutageStep(open !== null, state)
  const events: NewEvent[] = []
  const named = { siteId: row.site_id, slug: row.slug, name: row.name }
  const { lateAt, downAt } = deadlines(clock, windows)
  // Down by a deadline starts when the deadline passed, however late the loop looked.
  const downSince = clock.failed || downAt === null || downAt > now ? at : downAt
  if (row.state === 'late' && state !== 'late' && state !== 'new')
    events.push(heartbeatLateEvent(named, { state, dueAt: null, downAt: null }, new Date(state === 'down' ? downSince : at)))
  if (state === 'late' && row.state !== 'late') {
    const since = lateAt !== null && lateAt <= now ? lateAt : at
    events.push(
      heartbeatLateEvent(
        named,
        { state, dueAt: lateAt === null ? null : new Date(lateAt), downAt: downAt === null ? null : new Date(downAt) },
        new Date(since)
      )
    )
  }
  let openAfter = open
  if (step === 'open') {
    const startedAt = new Date(downSince)
    const id = await insertOutage({ db, siteId: row.site_id, startedAt })
    openAfter = { id, site_id: row.site_id, started_at: startedAt, ended_at: null }
    events.push(heartbeatOutageEvent('open', named, { started_at: startedAt, ended_at: null }, startedAt))
  } else if (step === 'close' && open !== null) {
    const endedAt = new Date(Math.max(at, open.started_at.getTime()))
    await closeOutage({ db, id: open.id, endedAt })
    openAfter = null
    events.push(heartbeatOutageEvent('close', named, { started_at: open.started_at, ended_at: endedAt }, endedAt))
  }
  const deadline = nextDeadline(clock, now, windows)
  const progress: HeartbeatProgress = {
    paused: clock.paused,
    state,
    failed: clock.failed,
    last_ping_at: clock.lastPingAt === null ? null : new Date(clock.lastPingAt),
    last_ping_kind: row.last_ping_kind,
    last_success_at: clock.lastSuccessAt === null ? null : new Date(clock.lastSuccessAt),
    open_runs: [...clock.openRuns],
    last_run_ms: runMs ?? row.last_run_ms,
    next_deadline: deadline === null ? null : new Date(deadline)
  }
  const site =
    state !== row.state || clock.lastPingAt !== (row.last_ping_at?.getTime() ?? null)
      ? {
          siteId: row.site_id,
          status: state === 'down' ? ('down' as const) : state === 'up' || state === 'late' ? ('up' as const) : ('unavailable' as const),
          at: clock.lastPingAt === null ? null : new Date(clock.lastPingAt),
          firstPing: row.last_ping_at === null && clock.lastPingAt !== null
        }
      : null
  return {
    settled: { state, step, events },
    write: { id: row.id, progress, ...(message === undefined ? {} : { message }), site },
    open: openAfter
  }
}

/** Writes what {@link judgeHeartbeat} left for heartbeats' rows (one statement on MySQL), at `now`. */
export async function writeSettled({ db, writes, now }: { db: Db; writes: readonly HeartbeatWrite[]; now: Date }): Promise<void> {
  if (writes.length === 0) return
  await writeHeartbeatProgresses({ db, writes, sites: writes.flatMap((w) => (w.site === null ? [] : [w.site])), now })
}

/**
 * Writes a heartbeat's state at `now` after `clock` inside the caller's transaction, the
 * heartbeat's row locked: {@link judgeHeartbeat} and its rows written at once.
 */
export async function settleHeartbeat(args: SettleArgs): Promise<Settled> {
  const { settled, write } = await judgeHeartbeat(args)
  await writeSettled({ db: args.db, writes: [write], now: new Date(args.now) })
  return settled
}
