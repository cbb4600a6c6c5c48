import { announced, appendToOutbox } from '../../events/outbox.js'
import { dueExpiryThreshold, type ExpiryNotice } from '../../rules/certificates.js'
import { certificateEvent, outageEvent, slowEvent, type NewEvent } from '../../rules/events.js'
import { slowStep, type SlowState } from '../../rules/slow.js'
import { isStale, outageTransition, type OutageSnapshot } from '../../rules/outages.js'
import { checkKey, findStoredChecks, insertChecks, newestCheckTime, updateSiteStates, type CheckRecord } from '../../store/checks.js'
import type { Db } from '../../store/db.js'
import { closeOutage, findOutageAt, insertOutage, listOpenOutages } from '../../store/outages.js'
import { lockSites, updateExpiryNotices, type LockedSite } from '../../store/sites.js'
import { listMaintenanceWindows, updateMaintenanceUntil } from '../../store/maintenance.js'
import { MaintenanceSteps } from './maintenance-steps.js'
import { causeText, downCause } from '../../rules/down-cause.js'
import type { RecordedCheck } from '../state/recorded-check.js'

export type { RecordedCheck } from '../state/recorded-check.js'

const NOT_CURRENT: RecordedCheck = { current: false, step: 'none', outage: null, slow: false, slowEvent: null }

/**
 * Stores a check, updates the site's current state and opens or closes its outage, all in one
 * transaction (see `recordChecks`). Throws `site not found` when the site's row is gone.
 */
export async function recordCheck({
  db,
  check,
  retried = false
}: {
  db: Db
  check: CheckRecord
  retried?: boolean
}): Promise<RecordedCheck> {
  const [recorded] = await recordChecks({ db, checks: [check], retried })
  if (!recorded) throw new Error('site not found')
  return recorded
}

/**
 * Stores a batch of checks in one transaction: the sites' rows locked, one multi-row insert of the
 * checks, each outage opened or closed as `outageTransition` says, and one update of the sites'
 * current state. A site's checks are applied in the order given, exactly as one transaction per
 * check would apply them: a stale check (a retried write arriving late) is stored but changes
 * neither the state nor the outages, so late delivery never invents a transition. A check of a site
 * removed meanwhile is not stored. Returns what each check did, in the order given; null for a site
 * whose row is gone.
 *
 * Each outage opened or closed is announced (`outage.opened`, `outage.closed`) in the same
 * transaction, after its other writes, so that the sequence lock is held for the commit alone. So is
 * each `certificate.expiring` threshold a check's certificate crossed, with the site's record of
 * what was announced, so that no restart or other instance announces it again. During a site's
 * maintenance no outage opens, and its start and end are announced likewise (`MaintenanceSteps`).
 *
 * `retried` says an earlier attempt at this same batch failed: the connection may have been lost
 * after that attempt's commit, so checks already stored are not stored twice, and what the
 * committed attempt did is read back and reported again (its events committed with it, so they
 * are not announced twice).
 *
 * `committed` runs after the commit and before the events are announced: whoever an announced event
 * wakes (a status page re-rendering on it) then reads the in-memory state the recorder applied there.
 */
export async function recordChecks({
  db,
  checks,
  retried = false,
  writer = null,
  committed
}: {
  db: Db
  checks: readonly CheckRecord[]
  retried?: boolean
  /** Who records, written with the sites' states (see `SiteStates.writer`). */
  writer?: string | null
  committed?: (recorded: ReadonlyArray<RecordedCheck | null>) => void
}): Promise<Array<RecordedCheck | null>> {
  if (checks.length === 0) return []
  let events = 0
  const recorded = await db.transaction(async (trx) => {
    const ids = checks.map((c) => c.siteId)
    const sites = await lockSites({ db: trx, ids })
    const live = checks.filter((c) => sites.get(c.siteId)?.removed_at === null)
    const stored = retried ? await findStoredChecks({ db: trx, checks: live }) : new Map<string, number>()
    let results: Map<CheckRecord, RecordedCheck>
    if (live.length > 0 && stored.size >= live.length) results = await replayCommitted(trx, live, sites, stored)
    else {
      // One indexed read of the batch's windows, after the sites' row locks: see MaintenanceSteps.
      const maintenance = new MaintenanceSteps(await listMaintenanceWindows({ db: trx, siteIds: live.map((c) => c.siteId) }), sites)
      results = await applyChecks(trx, live, sites, stored, writer, maintenance)
      const { notices, events: announce } = announcements(live, sites, results, maintenance)
      await updateExpiryNotices({ db: trx, notices })
      await updateMaintenanceUntil({ db: trx, until: maintenance.changed })
      events = (await appendToOutbox({ db: trx, events: announce })).length
    }
    return checks.map((c) => (sites.get(c.siteId) === undefined ? null : (results.get(c) ?? NOT_CURRENT)))
  })
  committed?.(recorded)
  if (events > 0) announced()
  return recorded
}

/**
 * The events the checks announce, in the order of the checks: the outages they opened or closed,
 * and the `certificate.expiring` thresholds their certificates crossed (see `dueExpiryThreshold`),
 * with what each site's record of announced thresholds becomes.
 */
function announcements(
  checks: readonly CheckRecord[],
  sites: ReadonlyMap<number, LockedSite>,
  results: ReadonlyMap<CheckRecord, RecordedCheck>,
  maintenance: MaintenanceSteps
): { events: NewEvent[]; notices: Map<number, ExpiryNotice> } {
  const events: NewEvent[] = []
  const notices = new Map<number, ExpiryNotice>()
  for (const check of checks) {
    const r = results.get(check)
    const site = sites.get(check.siteId)
    if (!r?.current || !site) continue
    events.push(...maintenance.announce(check))
    if (r.outage && r.step !== 'none') events.push(outageEvent(r.step, site, r.outage, check.checkedAt))
    if (r.slowEvent) {
      events.push(slowEvent(r.slowEvent, site, { response_ms: check.responseMs, max_response_ms: site.max_response_ms }, check.checkedAt))
    }
    const certificate = check.tls
    if (!certificate) continue
    const days = dueExpiryThreshold(certificate.expiresAt, check.checkedAt, notices.get(site.id) ?? site.tls_notice)
    if (days === null) continue
    notices.set(site.id, { expiresAt: certificate.expiresAt, days })
    events.push(certificateEvent(site, certificate, days, check.checkedAt))
  }
  return { events, notices }
}

/** Stores the checks not stored yet and applies each to its site's outages and current state. */
async function applyChecks(
  trx: Db,
  checks: readonly CheckRecord[],
  sites: ReadonlyMap<number, LockedSite>,
  stored: ReadonlyMap<string, number>,
  writer: string | null,
  maintenance: MaintenanceSteps
): Promise<Map<CheckRecord, RecordedCheck>> {
  const open = await listOpenOutages({ db: trx, siteIds: checks.map((c) => c.siteId) })
  await insertChecks({ db: trx, checks: checks.filter((c) => !stored.has(checkKey(c))) })

  const snapshots = new Map<number, OutageSnapshot>()
  const openIds = new Map<number, number>()
  for (const [siteId, outage] of open) openIds.set(siteId, outage.id)
  const newest = new Map<number, CheckRecord>()
  const firstAt = new Map<number, Date>()
  const slowStates = new Map<number, SlowState>()
  const results = new Map<CheckRecord, RecordedCheck>()
  for (const check of checks) {
    const snapshot = snapshots.get(check.siteId) ?? {
      checkedAt: sites.get(check.siteId)?.checked_at ?? null,
      open: open.get(check.siteId) ?? null
    }
    const { change, after } = outageTransition(snapshot, check, { inMaintenance: maintenance.inMaintenance(check) })
    snapshots.set(check.siteId, after)
    if (change.kind === 'stale') {
      results.set(check, NOT_CURRENT)
      continue
    }
    newest.set(check.siteId, check)
    const first = firstAt.get(check.siteId)
    if (first === undefined || check.checkedAt < first) firstAt.set(check.siteId, check.checkedAt)
    const site = sites.get(check.siteId) as LockedSite
    const slow = slowStep(slowStates.get(check.siteId) ?? site.slow, {
      status: check.status,
      response_ms: check.responseMs,
      max_response_ms: site.max_response_ms
    })
    slowStates.set(check.siteId, slow.state)
    const spell = { slow: slow.state.slow, slowEvent: slow.event }
    if (change.kind === 'open') {
      const id = await insertOutage({ db: trx, siteId: check.siteId, startedAt: change.at, cause: causeText(downCause(check.locations)) })
      openIds.set(check.siteId, id)
      results.set(check, { current: true, step: 'open', outage: { id, started_at: change.at, ended_at: null }, ...spell })
    } else if (change.kind === 'close') {
      const id = openIds.get(check.siteId) as number
      await closeOutage({ db: trx, id, endedAt: change.at })
      openIds.delete(check.siteId)
      const outage = { id, started_at: change.outage.started_at, ended_at: change.at }
      results.set(check, { current: true, step: 'close', outage, ...spell })
    } else {
      results.set(check, { current: true, step: 'none', outage: null, ...spell })
    }
  }
  await updateSiteStates({ db: trx, checks: [...newest.values()], firstAt, slow: slowStates, writer })
  return results
}

/**
 * What an earlier, committed attempt at recording this batch did, read back from the rows it
 * wrote: an outage that starts or ends at a check's time is that check's doing, and a check was
 * current unless it is stale against the checks of its site stored before the batch (in its
 * tracking period) and the earlier ones of the batch.
 */
async function replayCommitted(
  trx: Db,
  checks: readonly CheckRecord[],
  sites: ReadonlyMap<number, LockedSite>,
  stored: ReadonlyMap<string, number>
): Promise<Map<CheckRecord, RecordedCheck>> {
  const batchIds = [...stored.values()]
  const newest = new Map<number, Date | null>()
  for (const id of new Set(checks.map((c) => c.siteId))) {
    const since = sites.get(id)?.added_at as Date
    newest.set(id, await newestCheckTime({ db: trx, siteId: id, since, exceptIds: batchIds }))
  }
  const results = new Map<CheckRecord, RecordedCheck>()
  for (const check of checks) {
    if (isStale(newest.get(check.siteId) ?? null, check.checkedAt)) {
      results.set(check, NOT_CURRENT)
      continue
    }
    newest.set(check.siteId, check.checkedAt)
    // The committed attempt's slow state is the row's now; its events committed with it.
    const slow = sites.get(check.siteId)?.slow.slow ?? false
    const row = await findOutageAt({ db: trx, siteId: check.siteId, at: check.checkedAt })
    if (!row) {
      results.set(check, { current: true, step: 'none', outage: null, slow, slowEvent: null })
      continue
    }
    const closed = row.ended_at !== null && row.ended_at.getTime() === check.checkedAt.getTime()
    // An outage this check opened reads as it was then: open (a later check may have closed it).
    const outage = { id: row.id, started_at: row.started_at, ended_at: closed ? row.ended_at : null }
    results.set(check, { current: true, step: closed ? 'close' : 'open', outage, slow, slowEvent: null })
  }
  return results
}
