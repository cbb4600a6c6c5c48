import { monitorOf, type MonitorKind } from '../rules/monitor.js'
import { toDate, type Db } from './db.js'
import { MONITOR_ROW_KINDS } from './monitors.js'
import { forUpdate } from './sites.js'

/** A status page's own fields as stored. */
export interface StatusPageFields {
  slug: string
  title: string
  description: string | null
  logo_url: string | null
}

/** One site of a page, in the page's order. */
export interface StatusPageSite {
  site_id: number
  domain: string
  /** The name the page shows for it; null: the site's own name. */
  display_name: string | null
  /** The site's own name. */
  name: string
}

/** One heartbeat of a page, in the page's order of its heartbeats. */
export interface StatusPageHeartbeat {
  /** The heartbeat's `sites` row: its outages, uptime and maintenance are keyed by it. */
  site_id: number
  slug: string
  /** The name the page shows for it; null: the heartbeat's own. */
  display_name: string | null
  /** The heartbeat's own name. */
  name: string
}

/** One tcp, tls or dns monitor of a page, in the page's order of its monitors. */
export interface StatusPageMonitor {
  /** The monitor's `sites` row: its outages, uptime and maintenance are keyed by it. */
  site_id: number
  slug: string
  kind: MonitorKind
  /** Its identity (`monitor:<slug>`), under which the in-memory state holds it: never shown. */
  domain: string
  /** The name the page shows for it; null: the monitor's own. */
  display_name: string | null
  /** The monitor's own name. */
  name: string
}

/** A stored page with its sites in order, and its heartbeats and monitors in theirs. */
export interface StoredStatusPage extends StatusPageFields {
  id: number
  created_at: Date
  changed_at: Date
  sites: StatusPageSite[]
  heartbeats: StatusPageHeartbeat[]
  monitors: StatusPageMonitor[]
}

/** A site as a page lists it when written: the tracked site's id and the optional display name. */
export interface PageSiteEntry {
  siteId: number
  displayName: string | null
}

/**
 * A page's three lists, rows of `status_page_sites` told apart by their site's kind: its web sites
 * (`http`), its heartbeats (`heartbeat`) and its monitors (`tcp`, `tls`, `dns`).
 */
interface PageLists {
  sites: StatusPageSite[]
  heartbeats: StatusPageHeartbeat[]
  monitors: StatusPageMonitor[]
}

/** Which of a page's lists a write replaces. */
export type PageList = keyof PageLists

function pageOf(r: Record<string, unknown>, lists: PageLists | undefined): StoredStatusPage {
  return {
    id: Number(r.id),
    slug: String(r.slug),
    title: String(r.title),
    description: typeof r.description === 'string' ? r.description : null,
    logo_url: typeof r.logo_url === 'string' ? r.logo_url : null,
    created_at: toDate(r.created_at) as Date,
    changed_at: toDate(r.changed_at) as Date,
    sites: lists?.sites ?? [],
    heartbeats: lists?.heartbeats ?? [],
    monitors: lists?.monitors ?? []
  }
}

const HEARTBEAT = 'heartbeat'

/** The `sites` kinds of each list's rows. */
const LIST_KINDS: Record<PageList, readonly string[]> = { sites: ['http'], heartbeats: [HEARTBEAT], monitors: MONITOR_ROW_KINDS }

/**
 * The sites, heartbeats and monitors of the pages `pageIds`, each list in the page's order (only
 * those not removed: a removed one has left its pages).
 */
async function sitesOf(db: Db, pageIds: readonly number[]): Promise<Map<number, PageLists>> {
  const byPage = new Map<number, PageLists>()
  if (pageIds.length === 0) return byPage
  const rows: Array<Record<string, unknown>> = await db('status_page_sites as p')
    .join('sites as s', 's.id', 'p.site_id')
    .leftJoin('heartbeats as h', 'h.site_id', 's.id')
    .whereIn('p.page_id', pageIds)
    .whereNull('s.removed_at')
    .orderBy([
      { column: 'p.page_id', order: 'asc' },
      { column: 'p.position', order: 'asc' }
    ])
    .select('p.page_id', 'p.site_id', 'p.display_name', 's.domain', 's.name', 's.kind', 'h.slug')
  for (const r of rows) {
    const id = Number(r.page_id)
    const lists = byPage.get(id) ?? { sites: [], heartbeats: [], monitors: [] }
    const display_name = typeof r.display_name === 'string' ? r.display_name : null
    const monitor = monitorOf({ domain: String(r.domain), kind: String(r.kind) })
    if (r.kind === HEARTBEAT) {
      if (typeof r.slug === 'string')
        lists.heartbeats.push({ site_id: Number(r.site_id), slug: r.slug, name: String(r.name), display_name })
    } else if (monitor !== null) {
      lists.monitors.push({ site_id: Number(r.site_id), ...monitor, domain: String(r.domain), name: String(r.name), display_name })
    } else {
      lists.sites.push({ site_id: Number(r.site_id), domain: String(r.domain), name: String(r.name), display_name })
    }
    byPage.set(id, lists)
  }
  return byPage
}

/**
 * Replaces one of a page's lists: its sites, its heartbeats or its monitors. The three share the
 * table and each counts its positions from 0; the other lists are left as they are.
 */
async function writeEntries(db: Db, pageId: number, entries: readonly PageSiteEntry[], list: PageList): Promise<void> {
  // Read plainly, then deleted by key: a subquery on `sites` inside the DELETE would lock every
  // site row it scans on MySQL, against every check being recorded.
  const listed: unknown[] = await db('status_page_sites as p')
    .join('sites as s', 's.id', 'p.site_id')
    .where('p.page_id', pageId)
    .whereIn('s.kind', LIST_KINDS[list])
    .pluck('p.site_id')
  if (listed.length > 0) await db('status_page_sites').where({ page_id: pageId }).whereIn('site_id', listed.map(Number)).delete()
  if (entries.length === 0) return
  await db('status_page_sites').insert(
    entries.map((s, position) => ({ page_id: pageId, site_id: s.siteId, position, display_name: s.displayName }))
  )
}

/**
 * Stores a new page and its sites inside the caller's transaction `db`; returns its id. A slug
 * already taken fails with the engine's unique-key error ({@link isDuplicateKey}).
 */
export async function insertStatusPage({
  db,
  page,
  sites,
  heartbeats = [],
  monitors = [],
  now
}: {
  db: Db
  page: StatusPageFields
  sites: readonly PageSiteEntry[]
  heartbeats?: readonly PageSiteEntry[]
  monitors?: readonly PageSiteEntry[]
  now: Date
}): Promise<number> {
  const [id] = await db('status_pages').insert({ ...page, created_at: now, changed_at: now })
  if (sites.length > 0) await writeEntries(db, Number(id), sites, 'sites')
  if (heartbeats.length > 0) await writeEntries(db, Number(id), heartbeats, 'heartbeats')
  if (monitors.length > 0) await writeEntries(db, Number(id), monitors, 'monitors')
  return Number(id)
}

/**
 * Changes a page inside the caller's transaction `db`: the fields given, and each of its lists
 * (`sites`, `heartbeats`, `monitors`) that is given, replaced whole in the order given, the others
 * kept. False when there is no such page.
 */
export async function updateStatusPage({
  db,
  slug,
  fields,
  sites,
  heartbeats,
  monitors,
  now
}: {
  db: Db
  slug: string
  fields: Partial<Omit<StatusPageFields, 'slug'>>
  sites?: readonly PageSiteEntry[]
  heartbeats?: readonly PageSiteEntry[]
  monitors?: readonly PageSiteEntry[]
  now: Date
}): Promise<boolean> {
  const row: { id: number } | undefined = await forUpdate(db, db('status_pages').where({ slug }).first('id'))
  if (row === undefined) return false
  const id = row.id
  await db('status_pages')
    .where({ id })
    .update({ ...fields, changed_at: now })
  if (sites !== undefined) await writeEntries(db, id, sites, 'sites')
  if (heartbeats !== undefined) await writeEntries(db, id, heartbeats, 'heartbeats')
  if (monitors !== undefined) await writeEntries(db, id, monitors, 'monitors')
  return true
}

/** Deletes a page and its list of sites; false when there is no such page. */
export async function deleteStatusPage({ db, slug }: { db: Db; slug: string }): Promise<boolean> {
  return db.transaction(async (trx) => {
    const row: { id: number } | undefined = await trx('status_pages').where({ slug }).first('id')
    if (row === undefined) return false
    // Deleted explicitly, not left to the cascade: SQLite enforces it only with foreign_keys on.
    await trx('status_page_sites').where({ page_id: row.id }).delete()
    await trx('status_pages').where({ id: row.id }).delete()
    return true
  })
}

/** The page with this slug, its tracked sites, heartbeats and monitors in order; null when there is none. */
export async function findStatusPage({ db, slug }: { db: Db; slug: string }): Promise<StoredStatusPage | null> {
  const row: Record<string, unknown> | undefined = await db('status_pages').where({ slug }).first()
  if (row === undefined) return null
  const lists = await sitesOf(db, [Number(row.id)])
  return pageOf(row, lists.get(Number(row.id)))
}

/** The ids of the `sites` rows the page `slug` lists (heartbeats' and monitors' included), tracked or not, by plain reads; null when there is no such page. */
export async function listPageSiteIds({ db, slug }: { db: Db; slug: string }): Promise<number[] | null> {
  const page: { id: number } | undefined = await db('status_pages').where({ slug }).first('id')
  if (page === undefined) return null
  const ids: unknown[] = await db('status_page_sites').where({ page_id: page.id }).pluck('site_id')
  return ids.map(Number)
}

/** Every page, by slug, with its tracked sites, heartbeats and monitors in order. */
export async function listStatusPages({ db }: { db: Db }): Promise<StoredStatusPage[]> {
  const rows: Array<Record<string, unknown>> = await db('status_pages').orderBy('slug', 'asc').select()
  const sites = await sitesOf(
    db,
    rows.map((r) => Number(r.id))
  )
  return rows.map((r) => pageOf(r, sites.get(Number(r.id))))
}

/**
 * Takes a site off every page inside the caller's transaction `db` (the site stops being tracked);
 * the pages it was on change.
 */
export async function removeSiteFromPages({ db, siteId, now }: { db: Db; siteId: number; now: Date }): Promise<void> {
  const pageIds: number[] = await db('status_page_sites').where({ site_id: siteId }).pluck('page_id')
  if (pageIds.length === 0) return
  await db('status_page_sites').where({ site_id: siteId }).delete()
  await db('status_pages').whereIn('id', pageIds).update({ changed_at: now })
}

/** Every page's slug and when it last changed (epoch ms): what tells a copy in memory it is out of date. */
export async function listStatusPageVersions({ db }: { db: Db }): Promise<Map<string, number>> {
  const versions = new Map<string, number>()
  for (const r of await db('status_pages').select('slug', 'changed_at'))
    versions.set(String(r.slug), (toDate(r.changed_at) as Date).getTime())
  return versions
}

/**
 * Which pages list each of the sites `siteIds` (heartbeats and monitors included), and how each
 * page names it: its display name there (the domain behind it is then not shown) or its own name;
 * a heartbeat or a monitor goes without a domain. One indexed read, whatever
 * the number of pages.
 */
export async function listPagesOfSites({
  db,
  siteIds
}: {
  db: Db
  siteIds: readonly number[]
}): Promise<Array<{ site_id: number; slug: string; name: string; domain: string | null }>> {
  if (siteIds.length === 0) return []
  const rows: Array<Record<string, unknown>> = await db('status_page_sites as s')
    .join('status_pages as p', 'p.id', 's.page_id')
    .join('sites as t', 't.id', 's.site_id')
    .whereIn('s.site_id', [...new Set(siteIds)])
    .select('s.site_id', 'p.slug', 's.display_name', 't.name', 't.domain', 't.kind')
  return rows.map((r) => {
    const display = typeof r.display_name === 'string' ? r.display_name : null
    return {
      site_id: Number(r.site_id),
      slug: String(r.slug),
      name: display ?? String(r.name),
      // A heartbeat's or a monitor's `domain` holds its slug, which its pages never show.
      domain: display === null && r.kind === 'http' ? String(r.domain) : null
    }
  })
}
