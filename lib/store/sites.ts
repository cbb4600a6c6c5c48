import { toDate, type Db } from './db.js'
import type { SiteRow, SiteStatus } from './tables.js'

export function toSiteRow(r: Record<string, unknown>): SiteRow {
  return {
    id: Number(r.id),
    domain: String(r.domain),
    name: String(r.name),
    added_at: toDate(r.added_at) as Date,
    removed_at: toDate(r.removed_at),
    status: String(r.status) as SiteStatus,
    blocked: Boolean(r.blocked),
    partial: Boolean(r.partial),
    response_ms: r.response_ms === null ? null : Number(r.response_ms),
    checked_at: toDate(r.checked_at)
  }
}

export interface SiteEntry {
  domain: string
  name: string | null
}
export type AddOutcome = 'added' | 'resumed' | 'already'

/**
 * Tracks a normalised domain. A removed site is tracked again in a new tracking period (its
 * history stays); an already tracked one is left alone except for a new name, if one is given.
 */
export async function addSite({ db, entry, now }: { db: Db; entry: SiteEntry; now: Date }): Promise<AddOutcome> {
  const [outcome] = await addSites({ db, entries: [entry], now })
  return outcome as AddOutcome
}

/** Adds many sites in one transaction; returns each entry's outcome in order. Entries must be distinct. */
export async function addSites({ db, entries, now }: { db: Db; entries: readonly SiteEntry[]; now: Date }): Promise<AddOutcome[]> {
  if (entries.length === 0) return []
  return db.transaction(async (trx) => {
    const existing = new Map<string, { removed: boolean }>()
    const rows = await trx('sites')
      .whereIn(
        'domain',
        entries.map((e) => e.domain)
      )
      .select('domain', 'removed_at')
    for (const r of rows) existing.set(String(r.domain), { removed: r.removed_at !== null })
    const fresh = entries.filter((e) => !existing.has(e.domain))
    for (let i = 0; i < fresh.length; i += 200) {
      await trx('sites').insert(
        fresh.slice(i, i + 200).map((e) => ({ domain: e.domain, name: e.name ?? e.domain, added_at: now, changed_at: now }))
      )
    }
    const outcomes: AddOutcome[] = []
    for (const e of entries) {
      const found = existing.get(e.domain)
      if (!found) {
        outcomes.push('added')
        continue
      }
      const patch: Record<string, unknown> = {}
      if (e.name !== null) patch.name = e.name
      if (found.removed)
        Object.assign(patch, {
          removed_at: null,
          added_at: now,
          status: 'unavailable',
          blocked: false,
          partial: false,
          response_ms: null,
          checked_at: null
        })
      if (Object.keys(patch).length > 0)
        await trx('sites')
          .where({ domain: e.domain })
          .update({ ...patch, changed_at: now })
      outcomes.push(found.removed ? 'resumed' : 'already')
    }
    return outcomes
  })
}

/**
 * Stops tracking; the site's checks and outages are kept. An ongoing outage ends at the removal:
 * nobody watches the site any more, so nothing else would ever close it. Returns false when the
 * site was not tracked.
 */
export async function removeSite({ db, domain, now }: { db: Db; domain: string; now: Date }): Promise<boolean> {
  const mysql = db.client.config.client === 'mysql2'
  return db.transaction(async (trx) => {
    const query = trx('sites').where({ domain }).whereNull('removed_at').first('id')
    // The row lock orders this against a check being recorded for the site at the same moment.
    const site = await (mysql ? query.forUpdate() : query)
    if (!site) return false
    await trx('sites').where({ id: site.id }).update({ removed_at: now, changed_at: now })
    const open = await trx('outages').where({ open_site_id: site.id }).first('id', 'started_at')
    if (open) {
      const started = toDate(open.started_at) as Date
      await trx('outages')
        .where({ id: open.id })
        .update({ ended_at: started > now ? started : now, open_site_id: null })
    }
    return true
  })
}

export async function listTrackedSites({ db }: { db: Db }): Promise<SiteRow[]> {
  const rows = await db('sites').whereNull('removed_at').orderBy('domain').select('*')
  return rows.map(toSiteRow)
}
