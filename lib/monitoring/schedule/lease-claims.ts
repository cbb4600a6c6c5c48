import { claimedOccurrence, firstDueAt } from '../../rules/due-times.js'
import type { Db } from '../../store/db.js'
import {
  forgetDueTimesAfter,
  listUnscheduledSites,
  lockDueSites,
  lockLeasesOf,
  lockOwnLeases,
  setDueTimes,
  setFirstDueTimes,
  setLeases,
  takeLeases
} from '../../store/leases.js'
import type { ScheduledSite } from './check-gate.js'
import { phaseOf } from './phase-wheel.js'

/** A check an instance has claimed: the site, when the check is due, and how many before it were missed. */
export interface Claim {
  site: ScheduledSite
  dueAt: number
  /** Occurrences nobody started within one interval of their due time (see `claimedOccurrence`). */
  missed: number
  /** The overdue due time as the row held it, when `missed` > 0. */
  overdueAt: number
}

/**
 * Gives sites added since the last look their first due time: their phase (the same as a single
 * instance gives them), so that a large import is spread over one interval. Every instance computes
 * the same times, so two doing it at once agree. Returns how many were scheduled.
 */
export async function scheduleNewSites({
  db,
  now,
  intervalMs,
  limit
}: {
  db: Db
  now: number
  intervalMs: number
  limit: number
}): Promise<number> {
  // All of them in this round, `limit` rows a statement: a site left for the next round would be
  // scheduled against a later `now`, and one whose phase fell in between would lose its first check
  // of this interval.
  // A claim moves its site's due time one interval past the claimed check, which is at most half an
  // interval ahead: so a due time two intervals ahead or more was set under a longer CHECK_INTERVAL_S
  // (the service restarted with a shorter one), and the site would wait out the old interval. It is
  // scheduled afresh at its phase.
  await forgetDueTimesAfter({ db, after: new Date(now + 2 * intervalMs) })
  let scheduled = 0
  for (let batch = 0; batch < MAX_SCHEDULE_BATCHES; batch++) {
    const fresh = await listUnscheduledSites({ db, limit })
    await setFirstDueTimes({
      db,
      sites: fresh.map((s) => ({ id: s.id, dueAt: new Date(firstDueAt(phaseOf(s.domain, intervalMs), now, intervalMs)) }))
    })
    scheduled += fresh.length
    if (fresh.length < limit) break
  }
  return scheduled
}

/** A bound on one round's scheduling of new sites (`limit` each): far beyond any import, never a loop without end. */
const MAX_SCHEDULE_BATCHES = 1000

/** A due row found a whole interval or more overdue, moved on to its next occurrence without a claim. */
export interface PassedOver {
  site: ScheduledSite
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
 * interval later and `owner` the claim until then. Each check is claimed by exactly one instance.
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
  // Read committed: the locking read takes no gap locks, so claims and the recorder's writes to
  // the same index ranges do not deadlock.
  return db.transaction(
    async (trx) => {
      const expiredBy = new Date(now - intervalMs)
      const lateBy = new Date(Math.max(now - onTimeMs, now - intervalMs))
      const dueNow = await lockDueSites({ db: trx, after: lateBy, before: new Date(now), limit, order: 'desc' })
      const upcoming = await lockDueSites({ db: trx, after: new Date(now), before: new Date(horizon), limit: limit - dueNow.length })
      const onTime = [...dueNow, ...upcoming]
      const late = await lockDueSites({ db: trx, after: expiredBy, before: lateBy, limit: limit - onTime.length, order: 'desc' })
      const expired = await lockDueSites({ db: trx, before: expiredBy, limit: passLimit })
      const claims: Claim[] = [...onTime, ...late].map((row) => ({
        site: { id: row.id, domain: row.domain },
        dueAt: row.dueAt.getTime(),
        missed: 0,
        overdueAt: row.dueAt.getTime()
      }))
      const passed: PassedOver[] = []
      for (const row of expired) {
        const occurrence = claimedOccurrence(row.dueAt.getTime(), now, intervalMs)
        const overdueAt = row.dueAt.getTime()
        if (occurrence.dueAt <= horizon && claims.length < limit) {
          claims.push({ site: { id: row.id, domain: row.domain }, dueAt: occurrence.dueAt, missed: occurrence.missed, overdueAt })
        } else passed.push({ site: { id: row.id, domain: row.domain }, dueAt: occurrence.dueAt, overdueAt, missed: occurrence.missed })
      }
      await setLeases({
        db: trx,
        owner,
        leases: claims.map((c) => ({ id: c.site.id, dueAt: new Date(c.dueAt + intervalMs), leaseUntil: new Date(c.dueAt + intervalMs) }))
      })
      await setDueTimes({ db: trx, sites: passed.map((p) => ({ id: p.site.id, dueAt: new Date(p.dueAt) })) })
      return { claims, passed }
    },
    { isolationLevel: 'read committed' }
  )
}

/**
 * Takes over the claims of instances that stopped answering: a claim whose check was not recorded
 * (the site's newest check is older than the claimed due time) is claimed again by `owner` and
 * returned, to be run now; one whose check was recorded is only handed over. Due times stay as they
 * are, so the sites' next checks are claimed as usual.
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
      const dueAt = lease.leaseUntil.getTime() - intervalMs
      if (lease.checkedAt !== null && lease.checkedAt.getTime() >= dueAt) continue
      claims.push({ site: { id: lease.id, domain: lease.domain }, dueAt, missed: 0, overdueAt: dueAt })
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
