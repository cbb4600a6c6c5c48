import type { Knex } from 'knex'
import { toDate, type Db } from './db.js'
import type { SiteStatus } from './tables.js'
import type { SiteCertificate } from '../rules/certificates.js'
import type { SlowState } from '../rules/slow.js'
import { causeText, downCause } from '../rules/down-cause.js'

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
  /** The site's certificate as this check saw it (see `siteCertificate`); absent or null: none. */
  tls?: SiteCertificate | null
}

/** Rows per multi-row insert: 10 columns each, well under SQLite's and MySQL's bound-variable limits. */
const INSERT_ROWS = 500
/** Ids per `IN (...)` list. */
export const ID_CHUNK = 1000

export function chunks<T>(items: readonly T[], size: number): T[][] {
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

/** Identifies a stored check: its site, time and source (see `findStoredChecks`). */
export function checkKey(check: Pick<CheckRecord, 'siteId' | 'checkedAt' | 'source'>): string {
  return `${check.siteId}@${check.checkedAt.getTime()}@${check.source}`
}

/** Stores checks as rows, 500 to a multi-row insert. */
export async function insertChecks({ db, checks }: { db: Db; checks: readonly CheckRecord[] }): Promise<void> {
  for (const part of chunks(checks.map(checkRow), INSERT_ROWS)) await db('checks').insert(part)
}

/** Which of `checks` are already stored, by `checkKey`, with their row ids. */
export async function findStoredChecks({ db, checks }: { db: Db; checks: readonly CheckRecord[] }): Promise<Map<string, number>> {
  const found = new Map<string, number>()
  const wanted = new Set(checks.map(checkKey))
  for (const part of chunks(checks, ID_CHUNK)) {
    const times = part.map((c) => c.checkedAt.getTime())
    const rows = await db('checks')
      .whereIn('site_id', [...new Set(part.map((c) => c.siteId))])
      .whereBetween('checked_at', [new Date(Math.min(...times)), new Date(Math.max(...times))])
      .select('id', 'site_id', 'checked_at', 'source')
    for (const r of rows) {
      const key = checkKey({
        siteId: Number(r.site_id),
        checkedAt: toDate(r.checked_at) as Date,
        source: String(r.source) as CheckRecord['source']
      })
      if (wanted.has(key)) found.set(key, Number(r.id))
    }
  }
  return found
}

/** The newest check of a site stored at or after `since`, leaving out the rows `exceptIds`; null when none. */
export async function newestCheckTime({
  db,
  siteId,
  since,
  exceptIds = []
}: {
  db: Db
  siteId: number
  since: Date
  exceptIds?: readonly number[]
}): Promise<Date | null> {
  const query = db('checks').where({ site_id: siteId }).where('checked_at', '>=', since)
  for (const part of chunks(exceptIds, ID_CHUNK)) query.whereNotIn('id', part)
  const row = await query.max({ at: 'checked_at' }).first()
  return toDate(row?.at)
}

/**
 * Sets each site's current state from the check given for it, in one statement per 500 sites, its
 * `state_at` to the time of writing and its `state_by` to `writer`: other instances read the states
 * written since they last looked (`listChangedStates`), and the writer need not read its own back. A
 * site's first recorded check time is set once, to `firstAt` (its earliest check of the batch), and
 * never moved afterwards.
 */
export async function updateSiteStates({
  db,
  checks,
  firstAt = new Map(),
  slow,
  writer = null
}: {
  db: Db
  checks: readonly CheckRecord[]
  firstAt?: ReadonlyMap<number, Date>
  /** Each site's slow rule state after the checks (see lib/rules/slow.ts); absent: left as it is. */
  slow?: ReadonlyMap<number, SlowState>
  /** Who writes (see `SiteStates.writer`); null: nobody in particular, read back by every reader. */
  writer?: string | null
}): Promise<void> {
  const writtenAt = new Date()
  const columns: Array<[string, (c: CheckRecord) => Knex.Value]> = [
    ['status', (c) => c.status],
    ['blocked', (c) => c.blocked],
    ['partial', (c) => c.partial],
    ['response_ms', (c) => c.responseMs],
    ['checked_at', (c) => c.checkedAt],
    ['tls_expires_at', (c) => c.tls?.expiresAt ?? null],
    ['tls_issuer', (c) => c.tls?.issuer ?? null],
    ['cause', (c) => causeText(downCause(c.locations))]
  ]
  if (slow) {
    columns.push(['slow', (c) => slow.get(c.siteId)?.slow ?? false], ['slow_streak', (c) => slow.get(c.siteId)?.streak ?? 0])
  }
  for (const part of chunks(checks, 500)) {
    const whens = part.map(() => 'when ? then ?').join(' ')
    const sets = columns.map(() => `?? = case ?? ${whens} end`).join(', ')
    const bindings: Knex.Value[] = []
    for (const [column, value] of columns) {
      bindings.push(column, 'id')
      for (const c of part) bindings.push(c.siteId, value(c))
    }
    bindings.push('first_checked_at', 'first_checked_at', 'id')
    for (const c of part) bindings.push(c.siteId, firstAt.get(c.siteId) ?? c.checkedAt)
    await db.raw(
      `update ?? set ${sets}, ?? = coalesce(??, case ?? ${whens} end), ?? = ?, ?? = ? where ?? in (${part.map(() => '?').join(', ')})`,
      ['sites', ...bindings, 'state_at', writtenAt, 'state_by', writer, 'id', ...part.map((c) => c.siteId)]
    )
  }
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
