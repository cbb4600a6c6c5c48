import type { SiteStatus } from '../rules/consensus.js'
import { outageStep, type OutageStep } from '../rules/outages.js'
import type { Knex } from 'knex'
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

/** Rows per multi-row insert: 10 columns each, well under SQLite's and MySQL's bound-variable limits. */
const INSERT_ROWS = 500
/** Ids per `IN (...)` list. */
const ID_CHUNK = 1000

const NOT_CURRENT: RecordedCheck = { current: false, step: 'none', outage: null }

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

function checkRow(check: CheckRecord): Record<string, unknown> {
  return {
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
  }
}

const checkKey = (siteId: number, at: number, source: string): string => `${siteId}@${at}@${source}`

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
 * Stores a batch of checks in one transaction: one multi-row insert of the checks, one update of
 * the sites' current state, and each outage opened or closed. A site's checks are applied in the
 * order given, exactly as one transaction per check would apply them: a check older than the
 * site's newest (a retried write arriving late) is stored but changes neither the state nor the
 * outages, so late delivery never invents a transition. A check of a site removed meanwhile is not
 * stored. Returns what each check did, in the order given; null for a site whose row is gone.
 *
 * `retried` says an earlier attempt at this same batch failed: the connection may have been lost
 * after that attempt's commit, so checks already stored are not stored twice, and what the
 * committed attempt did is read back and reported again.
 */
export async function recordChecks({
  db,
  checks,
  retried = false
}: {
  db: Db
  checks: readonly CheckRecord[]
  retried?: boolean
}): Promise<Array<RecordedCheck | null>> {
  if (checks.length === 0) return []
  const mysql = db.client.config.client === 'mysql2'
  return db.transaction(async (trx) => {
    const ids = [...new Set(checks.map((c) => c.siteId))].sort((a, b) => a - b)
    const sites = new Map<number, { checked_at: unknown; removed_at: unknown; added_at: unknown }>()
    for (const part of chunks(ids, ID_CHUNK)) {
      const query = trx('sites').whereIn('id', part).orderBy('id').select('id', 'checked_at', 'removed_at', 'added_at')
      // Concurrent writers of one site queue on its row (SQLite has a single connection anyway).
      for (const row of await (mysql ? query.forUpdate() : query)) sites.set(Number(row.id), row)
    }
    const live = checks.filter((c) => {
      const site = sites.get(c.siteId)
      return site !== undefined && site.removed_at === null
    })
    const stored = retried ? await storedChecks(trx, live) : new Map<string, number>()
    if (live.length > 0 && stored.size >= live.length) {
      const replayed = await replayCommitted(trx, live, sites, stored)
      return checks.map((c) => (sites.get(c.siteId) === undefined ? null : (replayed.get(c) ?? NOT_CURRENT)))
    }

    const open = new Map<number, { id: number; started_at: Date }>()
    for (const part of chunks(ids, ID_CHUNK)) {
      for (const row of await trx('outages').whereIn('open_site_id', part).select('id', 'site_id', 'started_at')) {
        open.set(Number(row.site_id), { id: Number(row.id), started_at: toDate(row.started_at) as Date })
      }
    }
    const rows = live.filter((c) => !stored.has(checkKey(c.siteId, c.checkedAt.getTime(), c.source))).map(checkRow)
    for (const part of chunks(rows, INSERT_ROWS)) await trx('checks').insert(part)

    const newest = new Map<number, CheckRecord>()
    const results = new Map<CheckRecord, RecordedCheck>()
    for (const check of live) {
      const site = sites.get(check.siteId)
      const last = newest.get(check.siteId)?.checkedAt ?? toDate(site?.checked_at)
      if (last !== null && last.getTime() > check.checkedAt.getTime()) {
        results.set(check, NOT_CURRENT)
        continue
      }
      newest.set(check.siteId, check)
      const outage = open.get(check.siteId)
      const step = outageStep(outage !== undefined, check.status)
      if (step === 'open') {
        const [id] = await trx('outages').insert({ site_id: check.siteId, started_at: check.checkedAt, open_site_id: check.siteId })
        open.set(check.siteId, { id: Number(id), started_at: check.checkedAt })
        results.set(check, { current: true, step, outage: { id: Number(id), started_at: check.checkedAt, ended_at: null } })
      } else if (step === 'close' && outage) {
        await trx('outages').where({ id: outage.id }).update({ ended_at: check.checkedAt, open_site_id: null })
        open.delete(check.siteId)
        results.set(check, { current: true, step, outage: { id: outage.id, started_at: outage.started_at, ended_at: check.checkedAt } })
      } else {
        results.set(check, { current: true, step: 'none', outage: null })
      }
    }
    await updateSites(trx, [...newest.values()])
    return checks.map((c) => (sites.get(c.siteId) === undefined ? null : (results.get(c) ?? NOT_CURRENT)))
  })
}

/** Sets each site's current state from its newest check, in one statement per 500 sites. */
async function updateSites(trx: Db, newest: readonly CheckRecord[]): Promise<void> {
  const columns: Array<[string, (c: CheckRecord) => Knex.Value]> = [
    ['status', (c) => c.status],
    ['blocked', (c) => c.blocked],
    ['partial', (c) => c.partial],
    ['response_ms', (c) => c.responseMs],
    ['checked_at', (c) => c.checkedAt]
  ]
  for (const part of chunks(newest, 500)) {
    const whens = part.map(() => 'when ? then ?').join(' ')
    const sets = columns.map(() => `?? = case ?? ${whens} end`).join(', ')
    const bindings: Knex.Value[] = []
    for (const [column, value] of columns) {
      bindings.push(column, 'id')
      for (const c of part) bindings.push(c.siteId, value(c))
    }
    await trx.raw(`update ?? set ${sets} where ?? in (${part.map(() => '?').join(', ')})`, [
      'sites',
      ...bindings,
      'id',
      ...part.map((c) => c.siteId)
    ])
  }
}

/** Which of `checks` are already stored, by site, time and source, with their row ids. */
async function storedChecks(trx: Db, checks: readonly CheckRecord[]): Promise<Map<string, number>> {
  const found = new Map<string, number>()
  const wanted = new Set(checks.map((c) => checkKey(c.siteId, c.checkedAt.getTime(), c.source)))
  for (const part of chunks(checks, ID_CHUNK)) {
    const times = part.map((c) => c.checkedAt.getTime())
    const rows = await trx('checks')
      .whereIn('site_id', [...new Set(part.map((c) => c.siteId))])
      .whereBetween('checked_at', [new Date(Math.min(...times)), new Date(Math.max(...times))])
      .select('id', 'site_id', 'checked_at', 'source')
    for (const r of rows) {
      const key = checkKey(Number(r.site_id), (toDate(r.checked_at) as Date).getTime(), String(r.source))
      if (wanted.has(key)) found.set(key, Number(r.id))
    }
  }
  return found
}

/**
 * What an earlier, committed attempt at recording this batch did, read back from the rows it
 * wrote: an outage that starts or ends at a check's time is that check's doing, and a check was
 * current when no check of its site stored before the batch (in its tracking period), nor an
 * earlier one of the batch, is newer.
 */
async function replayCommitted(
  trx: Db,
  checks: readonly CheckRecord[],
  sites: Map<number, { added_at: unknown }>,
  stored: Map<string, number>
): Promise<Map<CheckRecord, RecordedCheck>> {
  const batchIds = [...stored.values()]
  const newest = new Map<number, number>()
  for (const id of new Set(checks.map((c) => c.siteId))) {
    const row = await trx('checks')
      .where({ site_id: id })
      .where('checked_at', '>=', toDate(sites.get(id)?.added_at) as Date)
      .whereNotIn('id', batchIds)
      .max({ at: 'checked_at' })
      .first()
    const at = toDate(row?.at)
    if (at !== null) newest.set(id, at.getTime())
  }
  const results = new Map<CheckRecord, RecordedCheck>()
  for (const check of checks) {
    const at = check.checkedAt.getTime()
    const last = newest.get(check.siteId)
    if (last !== undefined && last > at) {
      results.set(check, NOT_CURRENT)
      continue
    }
    newest.set(check.siteId, at)
    const row = await trx('outages')
      .where({ site_id: check.siteId })
      .andWhere((q) => {
        q.where('started_at', check.checkedAt).orWhere('ended_at', check.checkedAt)
      })
      .first('id', 'started_at', 'ended_at')
    if (!row) {
      results.set(check, { current: true, step: 'none', outage: null })
      continue
    }
    const endedAt = toDate(row.ended_at)
    const closed = endedAt !== null && endedAt.getTime() === at
    // An outage this check opened reads as it was then: open (a later check may have closed it).
    const outage = { id: Number(row.id), started_at: toDate(row.started_at) as Date, ended_at: closed ? endedAt : null }
    results.set(check, { current: true, step: closed ? 'close' : 'open', outage })
  }
  return results
}

/** Deletes raw checks older than `before`, in batches so no long lock is held; returns how many went. */
export async function pruneChecks({ db, before, batch = 5000 }: { db: Db; before: Date; batch?: number }): Promise<number> {
  let total = 0
  for (;;) {
    const ids = (await db('checks').where('checked_at', '<', before).orderBy('checked_at').limit(batch).pluck('id')) as Array<
      number | string
    >
    if (ids.length === 0) return total
    total += await db('checks').whereIn('id', ids).delete()
    if (ids.length < batch) return total
  }
}
