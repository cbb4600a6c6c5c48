import type { SiteStatus } from '../checks/consensus.js'
import { outageStep, type OutageStep } from '../checks/outages.js'
import { toDate, type Db } from './db.js'

/** A merged check, ready to store. */
export interface CheckRecord {
  siteId: number
  checkedAt: Date
  status: SiteStatus
  blocked: boolean
  partial: boolean
  responseMs: number | null
  locationsAnswered: number
  locationsTotal: number
  source: 'schedule' | 'demand'
  locations: unknown[]
}

export interface RecordedCheck {
  /** False when a newer check was already recorded: the row is kept, the site's state is not rolled back. */
  current: boolean
  step: OutageStep
  /** The outage opened or closed by this check. */
  outage: { id: number; started_at: Date; ended_at: Date | null } | null
}

/**
 * Stores a check, updates the site's current state and opens or closes its outage, all in one
 * transaction. A check older than the site's newest (a retried write arriving late) is stored but
 * changes neither the state nor the outages, so late delivery never invents a transition. A check of a
 * site removed meanwhile is not stored.
 *
 * `retried` says an earlier attempt failed: the connection may have been lost after that attempt's
 * commit, so a check already stored is not stored twice, and what it did is reported again.
 */
export async function recordCheck({ db, check, retried = false }: { db: Db; check: CheckRecord; retried?: boolean }): Promise<RecordedCheck> {
  const mysql = db.client.config.client === 'mysql2'
  return db.transaction(async (trx) => {
    const siteQuery = trx('sites').where({ id: check.siteId }).first('id', 'checked_at', 'removed_at')
    // Concurrent recorders of one site queue on its row (SQLite has a single connection anyway).
    const site = await (mysql ? siteQuery.forUpdate() : siteQuery)
    if (!site) throw new Error('site not found')
    // Finished after the site was removed: its monitoring (and any outage) already ended.
    if (site.removed_at !== null) return { current: false, step: 'none', outage: null }
    if (retried && (await trx('checks').where({ site_id: check.siteId, checked_at: check.checkedAt, source: check.source }).first('id'))) {
      return alreadyRecorded(trx, check, toDate(site.checked_at))
    }
    await trx('checks').insert({
      site_id: check.siteId,
      checked_at: check.checkedAt,
      status: check.status,
      blocked: check.blocked,
      partial: check.partial,
      response_ms: check.responseMs,
      locations_answered: check.locationsAnswered,
      locations_total: check.locationsTotal,
      source: check.source,
      locations: JSON.stringify(check.locations)
    })
    const last = toDate(site.checked_at)
    if (last !== null && last.getTime() > check.checkedAt.getTime()) return { current: false, step: 'none', outage: null }
    await trx('sites').where({ id: check.siteId }).update({
      status: check.status,
      blocked: check.blocked,
      partial: check.partial,
      response_ms: check.responseMs,
      checked_at: check.checkedAt
    })
    const open = await trx('outages').where({ open_site_id: check.siteId }).first('id', 'started_at')
    const step = outageStep(open !== undefined, check.status)
    if (step === 'open') {
      const [id] = await trx('outages').insert({ site_id: check.siteId, started_at: check.checkedAt, open_site_id: check.siteId })
      return { current: true, step, outage: { id: Number(id), started_at: check.checkedAt, ended_at: null } }
    }
    if (step === 'close' && open) {
      await trx('outages').where({ id: open.id }).update({ ended_at: check.checkedAt, open_site_id: null })
      return { current: true, step, outage: { id: Number(open.id), started_at: toDate(open.started_at) as Date, ended_at: check.checkedAt } }
    }
    return { current: true, step, outage: null }
  })
}

/** What an earlier, committed attempt at recording `check` did, read back from the rows it wrote. */
async function alreadyRecorded(trx: Db, check: CheckRecord, last: Date | null): Promise<RecordedCheck> {
  if (last !== null && last.getTime() > check.checkedAt.getTime()) return { current: false, step: 'none', outage: null }
  const at = check.checkedAt
  const row = await trx('outages').where({ site_id: check.siteId })
    .andWhere((q) => q.where('started_at', at).orWhere('ended_at', at))
    .first('id', 'started_at', 'ended_at')
  if (!row) return { current: true, step: 'none', outage: null }
  const outage = { id: Number(row.id), started_at: toDate(row.started_at) as Date, ended_at: toDate(row.ended_at) }
  return { current: true, step: outage.ended_at !== null && outage.ended_at.getTime() === at.getTime() ? 'close' : 'open', outage }
}

/** Deletes raw checks older than `before`, in batches so no long lock is held; returns how many went. */
export async function pruneChecks({ db, before, batch = 5000 }: { db: Db; before: Date; batch?: number }): Promise<number> {
  let total = 0
  for (;;) {
    const ids = (await db('checks').where('checked_at', '<', before).orderBy('checked_at').limit(batch).pluck('id')) as Array<number | string>
    if (ids.length === 0) return total
    total += await db('checks').whereIn('id', ids).delete()
    if (ids.length < batch) return total
  }
}
