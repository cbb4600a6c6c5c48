import { claimedOccurrence, firstDueAt } from '../rules/due-times.js'
import type { Db } from '../store/db.js'
import {
  forgetDueTimesAfter,
  listUnscheduledSites,
  lockDueSites,
  lockLeasesOf,
  lockOwnLeases,
  setFirstDueTimes,
  setLeases,
  takeLeases
} from '../store/leases.js'
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
  // of this interval (10,000 sites at 1,000 a round lost 375 due times, bench/monitor found).
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

/**
 * Claims up to `limit` checks due by `horizon` for `owner`, in one transaction: the due rows are
 * locked (rows other instances are claiming are passed over), each gets its next due time one
 * interval later and `owner` the claim until then. Each check is claimed by exactly one instance.
 */
export async function claimDueChecks({
  db,
  owner,
  now,
  horizon,
  intervalMs,
  limit
}: {
  db: Db
  owner: string
  now: number
  horizon: number
  intervalMs: number
  limit: number
}): Promise<Claim[]> {
  if (limit <= 0) return []
  // Read committed: the locking read takes no gap locks, so claims and the recorder's writes to
  // the same index ranges do not deadlock.
  return db.transaction(
    async (trx) => {
      const due = await lockDueSites({ db: trx, before: new Date(horizon), limit })
      const claims = due.map((row) => {
        const occurrence = claimedOccurrence(row.dueAt.getTime(), now, intervalMs)
        return {
          site: { id: row.id, domain: row.domain },
          dueAt: occurrence.dueAt,
          missed: occurrence.missed,
          overdueAt: row.dueAt.getTime()
        }
      })
      await setLeases({
        db: trx,
        owner,
        leases: claims.map((c) => ({ id: c.site.id, dueAt: new Date(c.dueAt + intervalMs), leaseUntil: new Date(c.dueAt + intervalMs) }))
      })
      return claims
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
