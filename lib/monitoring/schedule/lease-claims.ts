import { claimedOccurrence, firstDueAt, movedDueAt } from '../../rules/due-times.js'
import { SHORTEST_SITE_INTERVAL_S, siteIntervalMs } from '../../rules/site-interval.js'
import type { Db } from '../../store/db.js'
import {
  listDueTimes,
  listUnscheduledSites,
  lockDueSites,
  lockDueTimes,
  lockLeasesOf,
  lockOwnLeases,
  setDueTimes,
  setFirstDueTimes,
  setLeases,
  takeLeases,
  type DueSite,
  type DueTime
} from '../../store/leases.js'
import type { ScheduledSite } from './check-gate.js'
import { phaseOf } from './phase-wheel.js'
import type { SiteIntervals } from './site-intervals.js'

/** A check an instance has claimed: the site, when the check is due, and how many before it were missed. */
export interface Claim {
  site: ScheduledSite
  /** The site's interval: the claim lasts this long, its next check is due this much later. */
  intervalMs: number
  dueAt: number
  /** Occurrences nobody started within one interval of their due time (see `claimedOccurrence`). */
  missed: number
  /** The overdue due time as the row held it, when `missed` > 0. */
  overdueAt: number
}

/**
 * Gives sites added since the last look their first due time: their phase in their own interval (the
 * same as a single instance gives them), so that a large import is spread over one interval. Every
 * instance computes the same times, so two doing it at once agree. Before that, the due times that no
 * longer fit their site's interval are moved (see {@link moveDueTimes}). Returns how many sites got
 * a due time.
 */
export async function scheduleNewSites({
  db,
  now,
  intervalMs,
  limit,
  changedSince,
  intervals
}: {
  db: Db
  now: number
  intervalMs: number
  limit: number
  changedSince?: number
  intervals?: SiteIntervals
}): Promise<number> {
  let scheduled = await moveDueTimes({ db, now, intervalMs, changedSince, intervals })
  // All of them in this round, `limit` rows a statement: a site left for the next round would be
  // scheduled against a later `now`, and one whose phase fell in between would lose its first check
  // of this interval.
  for (let batch = 0; batch < MAX_SCHEDULE_BATCHES; batch++) {
    const fresh = await listUnscheduledSites({ db, limit })
    await setFirstDueTimes({
      db,
      sites: fresh.map((s) => {
        const ms = siteIntervalMs(s.intervalS, intervalMs)
        return { id: s.id, dueAt: new Date(firstDueAt(phaseOf(s.domain, ms), now, ms)) }
      })
    })
    scheduled += fresh.length
    if (fresh.length < limit) break
  }
  return scheduled
}

/**
 * Moves the due times that no longer fit their site's interval (`movedDueAt`): of the sites whose
 * rows changed since `changedSince` (an interval set, changed or cleared bumps `changed_at`), or of
 * every site when it is absent, as at start, when only those two intervals or more ahead (set under a
 * longer CHECK_INTERVAL_S) can be told apart. Tells `intervals` the interval of each site read.
 * Returns how many moved.
 */
export async function moveDueTimes({
  db,
  now,
  intervalMs,
  changedSince,
  intervals
}: {
  db: Db
  now: number
  intervalMs: number
  changedSince?: number
  intervals?: SiteIntervals
}): Promise<number> {
  const changed = changedSince !== undefined
  const moveOf = (row: DueTime): number | null => {
    const ms = siteIntervalMs(row.intervalS, intervalMs)
    if (row.dueAt === null) return null
    const checkedAt = row.checkedAt?.getTime() ?? null
    return movedDueAt({ dueAt: row.dueAt.getTime(), phase: phaseOf(row.domain, ms), intervalMs: ms, now, checkedAt, changed })
  }
  const candidates: number[] = []
  for (const row of await listDueTimes({ db, changedSince: changed ? new Date(changedSince) : undefined })) {
    if (row.removed) {
      intervals?.delete(row.id)
      continue
    }
    intervals?.set(row.id, siteIntervalMs(row.intervalS, intervalMs))
    if (moveOf(row) !== null) candidates.push(row.id)
  }
  if (candidates.length === 0) return 0
  // Judged again under the rows' locks: a claim may have moved a due time since it was read.
  return db.transaction(
    async (trx) => {
      const moves: Array<{ id: number; dueAt: Date }> = []
      for (const row of await lockDueTimes({ db: trx, ids: candidates })) {
        const dueAt = moveOf(row)
        if (dueAt !== null) moves.push({ id: row.id, dueAt: new Date(dueAt) })
      }
      await setDueTimes({ db: trx, sites: moves })
      return moves.length
    },
    { isolationLevel: 'read committed' }
  )
}

/** A bound on one round's scheduling of new sites (`limit` each): far beyond any import, never a loop without end. */
const MAX_SCHEDULE_BATCHES = 1000

/** A due row found a whole interval or more overdue, moved on to its next occurrence without a claim. */
export interface PassedOver {
  site: ScheduledSite
  intervalMs: number
  /** The next occurrence, at the site's phase: the row's due time now. */
  dueAt: number
  /** The overdue due time as the row held it. */
  overdueAt: number
  /** Occurrences nobody started within one interval of their due time. */
  missed: number
}

/**
 * Claims up to `limit` checks due by `horizon` for `owner`, in one transaction: the due rows are
 * locked (rows other instances are claiming are passed over), each gets its next due time one
 * interval (its site's) later and `owner` the claim until then. Each check is claimed by exactly one
 * instance.
 *
 * Which first, when there are more than `limit` (an instance over capacity): those due now that can
 * still start on time (due within `onTimeMs` before now), the most recently due first; then those
 * due by `horizon`, soonest first; then the late ones still inside their interval, the most
 * recently due first. Claimed oldest first, an instance over capacity would take checks about to be
 * a whole interval late, most of them shed before they could start; the checks due now soonest
 * first, checks about to be late; the look-ahead's furthest first, claims that fill its room while
 * they wait to fall due.
 *
 * Rows a whole interval or more overdue (up to `passLimit`, whatever the room) are never run late:
 * each is moved to its next occurrence at its phase (`claimedOccurrence`), which is claimed at once
 * when it falls by `horizon` and otherwise left unowned (`passed`) to be claimed when it comes. Held
 * in memory instead, such claims would fill an instance's room for up to an interval, and an
 * instance over capacity would start a fraction of the checks it could.
 *
 * The rows are sorted into those groups by the shortest interval a site may have, one range of the
 * due time index each; a row overdue by more than that is judged by its own interval, and one still
 * inside it is late.
 */
export async function claimDueChecks({
  db,
  owner,
  now,
  horizon,
  intervalMs,
  limit,
  onTimeMs = 5000,
  passLimit = limit
}: {
  db: Db
  owner: string
  now: number
  horizon: number
  intervalMs: number
  limit: number
  onTimeMs?: number
  passLimit?: number
}): Promise<{ claims: Claim[]; passed: PassedOver[] }> {
  if (limit <= 0 && passLimit <= 0) return { claims: [], passed: [] }
  const shortest = Math.min(intervalMs, SHORTEST_SITE_INTERVAL_S * 1000)
  const claimOf = (row: DueSite, dueAt: number, missed: number): Claim => ({
    site: { id: row.id, domain: row.domain, interval_s: row.intervalS },
    intervalMs: siteIntervalMs(row.intervalS, intervalMs),
    dueAt,
    missed,
    overdueAt: row.dueAt.getTime()
  })
  // Read committed: the locking read takes no gap locks, so claims and the recorder's writes to
  // the same index ranges do not deadlock.
  return db.transaction(
    async (trx) => {
      const expiredBy = new Date(now - shortest)
      const lateBy = new Date(Math.max(now - onTimeMs, now - shortest))
      const dueNow = await lockDueSites({ db: trx, after: lateBy, before: new Date(now), limit, order: 'desc' })
      const upcoming = await lockDueSites({ db: trx, after: new Date(now), before: new Date(horizon), limit: limit - dueNow.length })
      const onTime = [...dueNow, ...upcoming]
      const late = await lockDueSites({ db: trx, after: expiredBy, before: lateBy, limit: limit - onTime.length, order: 'desc' })
      const overdue = await lockDueSites({ db: trx, before: expiredBy, limit: passLimit })
      const claims: Claim[] = [...onTime, ...late].map((row) => claimOf(row, row.dueAt.getTime(), 0))
      const expired: Array<{ row: DueSite; occurrence: ReturnType<typeof claimedOccurrence> }> = []
      const lateInOwn: DueSite[] = []
      for (const row of overdue) {
        const occurrence = claimedOccurrence(row.dueAt.getTime(), now, siteIntervalMs(row.intervalS, intervalMs))
        if (occurrence.missed > 0) expired.push({ row, occurrence })
        else lateInOwn.push(row)
      }
      for (const row of lateInOwn.reverse()) if (claims.length < limit) claims.push(claimOf(row, row.dueAt.getTime(), 0))
      const passed: PassedOver[] = []
      for (const { row, occurrence } of expired) {
        const claim = claimOf(row, occurrence.dueAt, occurrence.missed)
        if (occurrence.dueAt <= horizon && claims.length < limit) claims.push(claim)
        else passed.push(claim)
      }
      await setLeases({
        db: trx,
        owner,
        leases: claims.map((c) => ({
          id: c.site.id,
          dueAt: new Date(c.dueAt + c.intervalMs),
          leaseUntil: new Date(c.dueAt + c.intervalMs)
        }))
      })
      await setDueTimes({ db: trx, sites: passed.map((p) => ({ id: p.site.id, dueAt: new Date(p.dueAt) })) })
      return { claims, passed }
    },
    { isolationLevel: 'read committed' }
  )
}

/**
 * Takes over the claims of instances that stopped answering: a claim whose check was not recorded
 * (the site's newest check is older than the claimed due time, an interval of the site's before the
 * claim ends) is claimed again by `owner` and returned, to be run now; one whose check was recorded
 * is only handed over. Due times stay as they are, so the sites' next checks are claimed as usual.
 */
export async function takeOverClaims({
  db,
  owner,
  dead,
  now,
  intervalMs,
  limit
}: {
  db: Db
  owner: string
  dead: readonly string[]
  now: number
  intervalMs: number
  limit: number
}): Promise<Claim[]> {
  if (dead.length === 0) return []
  return db.transaction(async (trx) => {
    const leased = await lockLeasesOf({ db: trx, owners: dead, after: new Date(now), limit })
    await takeLeases({ db: trx, ids: leased.map((l) => l.id), owner })
    const claims: Claim[] = []
    for (const lease of leased) {
      const ms = siteIntervalMs(lease.intervalS, intervalMs)
      const dueAt = lease.leaseUntil.getTime() - ms
      if (lease.checkedAt !== null && lease.checkedAt.getTime() >= dueAt) continue
      claims.push({
        site: { id: lease.id, domain: lease.domain, interval_s: lease.intervalS },
        intervalMs: ms,
        dueAt,
        missed: 0,
        overdueAt: dueAt
      })
    }
    return claims
  })
}

/**
 * After a spell without the database, during which `owner` went on checking the sites it had
 * claimed: writes the due times it reached back, for the claims it still holds, and returns the
 * ids of those (a claim another instance took over meanwhile is its own now).
 */
export async function keepOwnClaims({
  db,
  owner,
  claims
}: {
  db: Db
  owner: string
  claims: ReadonlyArray<{ id: number; dueAt: number }>
}): Promise<Set<number>> {
  if (claims.length === 0) return new Set()
  return db.transaction(async (trx) => {
    const kept = new Set(await lockOwnLeases({ db: trx, ids: claims.map((c) => c.id), owner }))
    await setLeases({
      db: trx,
      owner,
      leases: claims.filter((c) => kept.has(c.id)).map((c) => ({ id: c.id, dueAt: new Date(c.dueAt), leaseUntil: new Date(c.dueAt) }))
    })
    return kept
  })
}
