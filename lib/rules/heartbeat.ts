import { Cron } from 'croner'

/**
 * A heartbeat is due by its schedule after its last success; it is `late` from then until the
 * grace has passed and `down` after, or at once on a failure, or when a started run outlives
 * `max_runtime_s`. Maintenance windows push a deadline to their end: lateness inside one is silent.
 */

/** Bounds of a simple schedule, in seconds: from 30 s to one (365-day) year. */
export const EVERY_MIN_S = 30
export const EVERY_MAX_S = 365 * 86_400
/** The least grace: a ping sent on time but slowed by a retry is not late. */
export const GRACE_MIN_S = 5
export const GRACE_MAX_S = 365 * 86_400
/** A run's longest allowed duration before it counts as down. */
export const MAX_RUNTIME_MAX_S = 7 * 86_400
/** Started runs remembered at once (by `rid`); the oldest is forgotten past this. */
export const OPEN_RUNS_MAX = 10

/** The longest cron expression taken, in characters. */
export const CRON_MAX_LENGTH = 100
/** The least gap between two cron occurrences, as for `every_s`. */
export const CRON_MIN_GAP_S = EVERY_MIN_S
/** Occurrences looked at to find a gap shorter than {@link CRON_MIN_GAP_S}. */
const CRON_PROBE = 64

/**
 * How often a heartbeat is due: every N seconds after its last success, or at the first occurrence
 * of a cron expression in an IANA zone after it (healthchecks.io's cron schedules; croner computes
 * the occurrences, DST gaps and overlaps as docs/decisions.md, Heartbeats, writes down).
 */
export type HeartbeatSchedule = { every_s: number } | { cron: string; zone: string }

/** True when the zone is an IANA zone this runtime knows. */
export function knownZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/** Why a cron expression in a zone is refused (naming the field), or null when it is valid. */
export function cronProblem(cron: string, zone: string, now = Date.now()): string | null {
  if (!knownZone(zone)) return '"schedule.zone" must be an IANA time zone such as "Europe/Berlin"'
  if (cron.length === 0 || cron.length > CRON_MAX_LENGTH) return `"schedule.cron" must be 1 to ${CRON_MAX_LENGTH} characters`
  let runs: Date[]
  try {
    runs = new Cron(cron, { timezone: zone }).nextRuns(CRON_PROBE, new Date(now))
  } catch {
    return '"schedule.cron" must be a cron expression such as "0 3 * * *"'
  }
  if (runs.length === 0) return '"schedule.cron" never fires'
  const times = runs.map((d) => d.getTime())
  if (times.some((t, i) => i > 0 && t - (times[i - 1] ?? t) < CRON_MIN_GAP_S * 1000))
    return `"schedule.cron" must not fire more often than every ${CRON_MIN_GAP_S} s`
  return null
}

export type HeartbeatState = 'new' | 'up' | 'late' | 'down' | 'paused'

/** What a ping says: success, a start, a failure (`/fail` or a nonzero exit status). */
export type PingKind = 'success' | 'start' | 'fail'

/** A run started and not yet ended: its `rid` (null without one) and its start. */
export interface OpenRun {
  rid: string | null
  at: number
}

/** A maintenance window, epoch milliseconds, end exclusive. */
export interface Window {
  start: number
  end: number
}

/** A heartbeat as the rules read it; times in epoch milliseconds. */
export interface HeartbeatClock {
  schedule: HeartbeatSchedule
  graceS: number
  maxRuntimeS: number | null
  paused: boolean
  /** The last success, or null before any. */
  lastSuccessAt: number | null
  /** The last ping of any kind, or null: `new` until the first. */
  lastPingAt: number | null
  /** True when the newest end-of-run ping was a failure not yet followed by a success. */
  failed: boolean
  openRuns: readonly OpenRun[]
}

/** Why a schedule is refused, or null when it is valid. */
export function scheduleProblem(schedule: HeartbeatSchedule, now = Date.now()): string | null {
  if ('cron' in schedule) return cronProblem(schedule.cron, schedule.zone, now)
  const s = schedule.every_s
  if (!Number.isInteger(s) || s < EVERY_MIN_S || s > EVERY_MAX_S)
    return `every_s must be a whole number from ${EVERY_MIN_S} to ${EVERY_MAX_S}`
  return null
}

/**
 * The first time the schedule expects a ping after `after`: N seconds on, or the first cron
 * occurrence strictly after it in the zone. A cron heartbeat pinged at 03:00:05 for its 03:00 run
 * is next due at tomorrow's 03:00; a cron that fires no more (a year
 * field past) is never due: `Infinity`, and {@link deadlines} sets none.
 */
export function nextDue(schedule: HeartbeatSchedule, after: number): number {
  if ('every_s' in schedule) return after + schedule.every_s * 1000
  const next = new Cron(schedule.cron, { timezone: schedule.zone }).nextRun(new Date(after))
  return next === null ? Number.POSITIVE_INFINITY : next.getTime()
}

/** `at` pushed to the end of any window it falls in, windows chained end to start. */
export function afterWindows(at: number, windows: readonly Window[]): number {
  let t = at
  for (let moved = true; moved;) {
    moved = false
    for (const w of windows) {
      if (w.start <= t && t < w.end) {
        t = w.end
        moved = true
      }
    }
  }
  return t
}

/** When the heartbeat, left alone, turns late and down (epoch ms), or null where it never will. */
export interface Deadlines {
  lateAt: number | null
  downAt: number | null
}

/** The heartbeat's next deadlines from its last success and its open runs, pushed past maintenance. */
export function deadlines(hb: HeartbeatClock, windows: readonly Window[] = []): Deadlines {
  if (hb.paused || hb.lastPingAt === null) return { lateAt: null, downAt: null }
  let lateAt: number | null = null
  let downAt: number | null = null
  if (hb.lastSuccessAt !== null || hb.openRuns.length === 0) {
    const from = hb.lastSuccessAt ?? hb.lastPingAt
    const next = nextDue(hb.schedule, from)
    if (Number.isFinite(next)) {
      const due = afterWindows(next, windows)
      lateAt = due
      downAt = afterWindows(due + hb.graceS * 1000, windows)
    }
  }
  if (hb.maxRuntimeS !== null && hb.openRuns.length > 0) {
    const oldest = Math.min(...hb.openRuns.map((r) => r.at))
    const runDown = afterWindows(oldest + hb.maxRuntimeS * 1000, windows)
    downAt = downAt === null ? runDown : Math.min(downAt, runDown)
  }
  return { lateAt, downAt }
}

/** The heartbeat's state at `now` (inside a window nothing is late: it reads `up`). */
export function heartbeatState(hb: HeartbeatClock, now: number, windows: readonly Window[] = []): HeartbeatState {
  if (hb.paused) return 'paused'
  if (hb.lastPingAt === null) return 'new'
  if (hb.failed) return 'down'
  const { lateAt, downAt } = deadlines(hb, windows)
  if (downAt !== null && now >= downAt) return 'down'
  if (lateAt !== null && now >= lateAt) return 'late'
  return 'up'
}

/** When the state, left alone, next changes after `now`: when a deadline loop must look again. */
export function nextDeadline(hb: HeartbeatClock, now: number, windows: readonly Window[] = []): number | null {
  if (hb.paused || hb.lastPingAt === null || hb.failed) return null
  const { lateAt, downAt } = deadlines(hb, windows)
  const ahead = [lateAt, downAt].filter((t): t is number => t !== null && t > now)
  if (ahead.length > 0) return Math.min(...ahead)
  return null
}

/** What a ping does: the clock after it and, for an end of run, its duration in ms. */
export interface PingEffect {
  after: HeartbeatClock
  runMs: number | null
}

/**
 * Applies one ping at `at`. A start remembers its run (by `rid`, one per rid; the oldest forgotten
 * past {@link OPEN_RUNS_MAX}). A success or failure ends the run with its `rid`, or without one the
 * newest run, and reports its duration; a success clears a failure, a failure sets it. A ping to a
 * paused heartbeat unpauses it, as healthchecks.io does.
 */
export function applyPing(hb: HeartbeatClock, ping: { kind: PingKind; at: number; rid?: string | null }): PingEffect {
  const rid = ping.rid ?? null
  const base = { ...hb, paused: false, lastPingAt: ping.at }
  if (ping.kind === 'start') {
    const runs = [...hb.openRuns.filter((r) => r.rid !== rid), { rid, at: ping.at }].slice(-OPEN_RUNS_MAX)
    return { after: { ...base, openRuns: runs }, runMs: null }
  }
  let ended: OpenRun | undefined
  if (rid !== null) ended = hb.openRuns.find((r) => r.rid === rid)
  else ended = hb.openRuns.reduce<OpenRun | undefined>((n, r) => (n === undefined || r.at >= n.at ? r : n), undefined)
  const openRuns = ended === undefined ? hb.openRuns : hb.openRuns.filter((r) => r !== ended)
  const runMs = ended === undefined ? null : Math.max(0, ping.at - ended.at)
  if (ping.kind === 'fail') return { after: { ...base, openRuns, failed: true }, runMs }
  return { after: { ...base, openRuns, failed: false, lastSuccessAt: ping.at }, runMs }
}

/** The kind a ping path's suffix names: none is success, `start`, `fail`, or an exit status 0-255. */
export function pingKindOf(suffix: string | undefined): PingKind | null {
  if (suffix === undefined || suffix === '') return 'success'
  if (suffix === 'start') return 'start'
  if (suffix === 'fail') return 'fail'
  if (!/^\d{1,3}$/.test(suffix)) return null
  const code = Number(suffix)
  if (code > 255) return null
  return code === 0 ? 'success' : 'fail'
}

/** What a new state does to the heartbeat's outage: open one at `down`, close it at `up`. */
export function heartbeatOutageStep(hasOpen: boolean, state: HeartbeatState): 'open' | 'close' | 'none' {
  if (state === 'down' && !hasOpen) return 'open'
  if ((state === 'up' || state === 'paused' || state === 'new') && hasOpen) return 'close'
  return 'none'
}
