import { chunks, ID_CHUNK } from './checks.js'
import { toDate, type Db } from './db.js'
import { parseCause, type DownCause } from '../rules/down-cause.js'

/** An outage's row. */
export interface OutageRow {
  id: number
  site_id: number
  started_at: Date
  ended_at: Date | null
}

/** A listed outage with its site's domain and name. */
export interface ListedOutage {
  domain: string
  name: string
  /** A monitor's kind (tcp, tls, dns); absent for a web site. */
  kind?: string
  started_at: Date
  ended_at: Date | null
  /** Why it opened: the opening check's failing locations (lib/rules/down-cause.ts); null when not recorded. */
  cause: DownCause | null
}

/** Where the previous page ended: keyset pagination on (started_at, id), never OFFSET. */
export interface OutageCursor {
  startedAt: number
  id: number
}

export interface OutagePage {
  outages: ListedOutage[]
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
  before
}: {
  db: Db
  domain?: string
  ongoing: boolean
  limit: number
  before?: OutageCursor
}): Promise<OutagePage> {
  // Outages are ordered and cut to the page on their own first, then joined to their sites: joined
  // first, MySQL reads every site, joins all their outages and sorts them.
  const page = db('outages')
    .select('id', 'site_id', 'started_at', 'ended_at', 'cause')
    .orderBy([
      { column: 'started_at', order: 'desc' },
      { column: 'id', order: 'desc' }
    ])
    .limit(limit + 1)
  // Domains (and monitors' identities, `monitor:<slug>`) are unique, so this is one site id (or none: an empty list).
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
    .select('o.id', 'o.started_at', 'o.ended_at', 'o.cause', 's.domain', 's.name', 's.kind')
    .orderBy([
      { column: 'o.started_at', order: 'desc' },
      { column: 'o.id', order: 'desc' }
    ])
  const rows = await q
  const shown = rows.slice(0, limit)
  const outages = shown.map((r): ListedOutage => ({
    domain: String(r.domain),
    name: String(r.name),
    ...(r.kind === 'http' ? {} : { kind: String(r.kind) }),
    started_at: toDate(r.started_at) as Date,
    ended_at: toDate(r.ended_at),
    cause: parseCause(r.cause)
  }))
  const last = shown[shown.length - 1]
  const next = rows.length > limit && last ? { startedAt: (toDate(last.started_at) as Date).getTime(), id: Number(last.id) } : null
  return { outages, next }
}

function toOutageRow(r: Record<string, unknown>): OutageRow {
  return { id: Number(r.id), site_id: Number(r.site_id), started_at: toDate(r.started_at) as Date, ended_at: toDate(r.ended_at) }
}

/** The sites' ongoing outages (at most one each), by site id. */
export async function listOpenOutages({ db, siteIds }: { db: Db; siteIds: readonly number[] }): Promise<Map<number, OutageRow>> {
  const open = new Map<number, OutageRow>()
  for (const part of chunks([...new Set(siteIds)], ID_CHUNK)) {
    for (const row of await db('outages').whereIn('open_site_id', part).select('id', 'site_id', 'started_at', 'ended_at')) {
      const outage = toOutageRow(row)
      open.set(outage.site_id, outage)
    }
  }
  return open
}

/** Opens an outage of the site at `startedAt`; returns its id. A site has one open outage at most (unique `open_site_id`). */
export async function insertOutage({
  db,
  siteId,
  startedAt,
  cause = null
}: {
  db: Db
  siteId: number
  startedAt: Date
  /** Why it opened, as `causeText` stores it. */
  cause?: string | null
}): Promise<number> {
  const [id] = await db('outages').insert({ site_id: siteId, started_at: startedAt, open_site_id: siteId, cause })
  return Number(id)
}

/** Ends an ongoing outage at `endedAt`. */
export async function closeOutage({ db, id, endedAt }: { db: Db; id: number; endedAt: Date }): Promise<void> {
  await db('outages').where({ id }).update({ ended_at: endedAt, open_site_id: null })
}

/** A site's outage that starts or ends at `at`, if any. */
export async function findOutageAt({ db, siteId, at }: { db: Db; siteId: number; at: Date }): Promise<OutageRow | null> {
  const row = await db('outages')
    .where({ site_id: siteId })
    .andWhere((q) => {
      q.where('started_at', at).orWhere('ended_at', at)
    })
    .first('id', 'site_id', 'started_at', 'ended_at')
  return row ? toOutageRow(row) : null
}

/** An outage's span in epoch milliseconds, open-ended while ongoing, with its row id. */
export interface OutageTimes {
  id: number
  started: number
  ended: number | null
}

function toMs(value: unknown): number | null {
  return typeof value === 'number' ? value : (toDate(value)?.getTime() ?? null)
}

/**
 * A site's outages overlapping [from, to) (`to` left out: no end), oldest first, as epoch
 * milliseconds: a year of a flapping site is thousands of rows, and a Date each costs more than the
 * rest of an SLA. A site's outages never overlap (one open at a time, each closed before the next
 * opens), so only the newest one starting before `from` can reach into the window: two range reads
 * of the (site, start, id, end) index, which holds every column read, however long the site's history.
 */
export async function listOutageTimes({ db, siteId, from, to }: { db: Db; siteId: number; from: Date; to?: Date }): Promise<OutageTimes[]> {
  const before = await db('outages')
    .where({ site_id: siteId })
    .where('started_at', '<', from)
    .orderBy([
      { column: 'started_at', order: 'desc' },
      { column: 'id', order: 'desc' }
    ])
    .first('id', 'started_at', 'ended_at')
  const inside = db('outages').where({ site_id: siteId }).where('started_at', '>=', from)
  if (to !== undefined) inside.where('started_at', '<', to)
  // In the index's own order, so no sort, and the index holds the end too: no row read.
  const rows: OutageTimes[] = []
  const edge = before ? toTimes(before) : null
  if (edge && (edge.ended === null || edge.ended > from.getTime())) rows.push(edge)
  for (const r of await inside.orderBy([{ column: 'started_at' }, { column: 'id' }]).select('id', 'started_at', 'ended_at'))
    rows.push(toTimes(r))
  return rows
}

/**
 * A site's two newest outages, newest first: the ongoing one, if any, and the newest that ended.
 * Outages are only ever added as the site's newest and closed once, so a copy of the closed ones is
 * current while the newest closed id is the same. One short backward read of the same index.
 */
export async function newestOutageTimes({ db, siteId }: { db: Db; siteId: number }): Promise<OutageTimes[]> {
  const rows = await db('outages')
    .where({ site_id: siteId })
    .orderBy([
      { column: 'started_at', order: 'desc' },
      { column: 'id', order: 'desc' }
    ])
    .limit(2)
    .select('id', 'started_at', 'ended_at')
  return rows.map(toTimes)
}

function toTimes(row: { id: unknown; started_at: unknown; ended_at: unknown }): OutageTimes {
  return { id: Number(row.id), started: toMs(row.started_at) as number, ended: toMs(row.ended_at) }
}

/** An outage of one of several sites, as epoch milliseconds. */
export interface SiteOutageTimes extends OutageTimes {
  site_id: number
}

/**
 * The outages of the sites `siteIds` (a status page's: a few dozen) overlapping [from, to), each
 * site's oldest first, in one query: those starting inside, a range read of the (site, start, id,
 * end) index that holds every column read, and per site the newest one starting before `from` if it
 * reaches into it (a site's outages never overlap, so no other can), found by the index's
 * per-site maximum rather than by reading a year of history back to the service.
 */
export async function listSitesOutageTimes({
  db,
  siteIds,
  from,
  to
}: {
  db: Db
  siteIds: readonly number[]
  from: Date
  to: Date
}): Promise<SiteOutageTimes[]> {
  if (siteIds.length === 0) return []
  const ids = [...new Set(siteIds)]
  const newestBefore = db('outages')
    .whereIn('site_id', ids)
    .where('started_at', '<', from)
    .groupBy('site_id')
    .select('site_id')
    .max({ s: 'started_at' })
  const edge = db('outages as o')
    .join(newestBefore.as('e'), (j) => {
      j.on('o.site_id', 'e.site_id').andOn('o.started_at', 'e.s')
    })
    .where((q) => {
      q.whereNull('o.ended_at').orWhere('o.ended_at', '>', from)
    })
    .select('o.id', 'o.site_id', 'o.started_at', 'o.ended_at')
  const rows: Array<Record<string, unknown>> = await db('outages')
    .whereIn('site_id', ids)
    .where('started_at', '>=', from)
    .where('started_at', '<', to)
    .select('id', 'site_id', 'started_at', 'ended_at')
    .unionAll(edge)
    .orderBy([{ column: 'site_id' }, { column: 'started_at' }, { column: 'id' }])
  return rows.map((r) => ({ ...toTimes(r as { id: unknown; started_at: unknown; ended_at: unknown }), site_id: Number(r.site_id) }))
}
