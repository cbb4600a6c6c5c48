import { durationSeconds } from '../rules/outages.js'
import { toDate, type Db } from './db.js'

/** An outage as the outages endpoint reports it (spec 2.3). */
export interface OutageRecord {
  domain: string
  name: string
  started_at: string
  ended_at: string | null
  duration_seconds: number
}

/** Where the previous page ended: keyset pagination on (started_at, id), never OFFSET. */
export interface OutageCursor {
  startedAt: number
  id: number
}

export interface OutagePage {
  outages: OutageRecord[]
  next: OutageCursor | null
}

/**
 * Confirmed outages newest first (started_at, then id, descending), optionally for one domain or
 * only the ongoing ones, continuing after `before`. Each page is one indexed range scan of outages
 * and a primary-key lookup of each listed outage's site.
 */
export async function listOutages({
  db,
  domain,
  ongoing,
  limit,
  before,
  now
}: {
  db: Db
  domain?: string
  ongoing: boolean
  limit: number
  before?: OutageCursor
  now: Date
}): Promise<OutagePage> {
  // Outages are ordered and cut to the page on their own first, then joined to their sites: joined
  // first, MySQL reads every site, joins all their outages and sorts them (seen at 10,000 sites).
  const page = db('outages')
    .select('id', 'site_id', 'started_at', 'ended_at')
    .orderBy([
      { column: 'started_at', order: 'desc' },
      { column: 'id', order: 'desc' }
    ])
    .limit(limit + 1)
  // Domains are unique, so this is one site id (or none: an empty list).
  if (domain !== undefined) page.where('site_id', db('sites').where({ domain }).select('id'))
  if (ongoing) page.whereNull('ended_at')
  if (before) {
    const at = new Date(before.startedAt)
    page.where((w) => {
      w.where('started_at', '<', at).orWhere((e) => {
        e.where('started_at', '=', at).andWhere('id', '<', before.id)
      })
    })
  }
  const q = db
    .from(page.as('o'))
    .join('sites as s', 's.id', 'o.site_id')
    .select('o.id', 'o.started_at', 'o.ended_at', 's.domain', 's.name')
    .orderBy([
      { column: 'o.started_at', order: 'desc' },
      { column: 'o.id', order: 'desc' }
    ])
  const rows = await q
  const shown = rows.slice(0, limit)
  const outages = shown.map((r): OutageRecord => {
    const started = toDate(r.started_at) as Date
    const ended = toDate(r.ended_at)
    return {
      domain: String(r.domain),
      name: String(r.name),
      started_at: started.toISOString(),
      ended_at: ended?.toISOString() ?? null,
      duration_seconds: durationSeconds(started, ended, now)
    }
  })
  const last = shown[shown.length - 1]
  const next = rows.length > limit && last ? { startedAt: (toDate(last.started_at) as Date).getTime(), id: Number(last.id) } : null
  return { outages, next }
}
