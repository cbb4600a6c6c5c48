import { toDate, type Db } from './db.js'
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

/** A stored page with its sites in order. */
export interface StoredStatusPage extends StatusPageFields {
  id: number
  created_at: Date
  changed_at: Date
  sites: StatusPageSite[]
}

/** A site as a page lists it when written: the tracked site's id and the optional display name. */
export interface PageSiteEntry {
  siteId: number
  displayName: string | null
}

function pageOf(r: Record<string, unknown>, sites: StatusPageSite[]): StoredStatusPage {
  return {
    id: Number(r.id),
    slug: String(r.slug),
    title: String(r.title),
    description: typeof r.description === 'string' ? r.description : null,
    logo_url: typeof r.logo_url === 'string' ? r.logo_url : null,
    created_at: toDate(r.created_at) as Date,
    changed_at: toDate(r.changed_at) as Date,
    sites
  }
}

/** The sites of the pages `pageIds`, in each page's order (only tracked sites: a removed one has left its pages). */
async function sitesOf(db: Db, pageIds: readonly number[]): Promise<Map<number, StatusPageSite[]>> {
  const bySite = new Map<number, StatusPageSite[]>()
  if (pageIds.length === 0) return bySite
  const rows: Array<Record<string, unknown>> = await db('status_page_sites as p')
    .join('sites as s', 's.id', 'p.site_id')
    .whereIn('p.page_id', pageIds)
    .whereNull('s.removed_at')
    .orderBy([
      { column: 'p.page_id', order: 'asc' },
      { column: 'p.position', order: 'asc' }
    ])
    .select('p.page_id', 'p.site_id', 'p.display_name', 's.domain', 's.name')
  for (const r of rows) {
    const id = Number(r.page_id)
    const list = bySite.get(id) ?? []
    list.push({
      site_id: Number(r.site_id),
      domain: String(r.domain),
      name: String(r.name),
      display_name: typeof r.display_name === 'string' ? r.display_name : null
    })
    bySite.set(id, list)
  }
  return bySite
}

async function writeSites(db: Db, pageId: number, sites: readonly PageSiteEntry[]): Promise<void> {
  await db('status_page_sites').where({ page_id: pageId }).delete()
  if (sites.length === 0) return
  await db('status_page_sites').insert(
    sites.map((s, position) => ({ page_id: pageId, site_id: s.siteId, position, display_name: s.displayName }))
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
  now
}: {
  db: Db
  page: StatusPageFields
  sites: readonly PageSiteEntry[]
  now: Date
}): Promise<number> {
  const [id] = await db('status_pages').insert({ ...page, created_at: now, changed_at: now })
  await writeSites(db, Number(id), sites)
  return Number(id)
}

/**
 * Changes a page inside the caller's transaction `db`: the fields given, and its sites when
 * `sites` is given (replaced whole, in the order given). False when there is no such page.
 */
export async function updateStatusPage({
  db,
  slug,
  fields,
  sites,
  now
}: {
  db: Db
  slug: string
  fields: Partial<Omit<StatusPageFields, 'slug'>>
  sites?: readonly PageSiteEntry[]
  now: Date
}): Promise<boolean> {
  const row: { id: number } | undefined = await forUpdate(db, db('status_pages').where({ slug }).first('id'))
  if (row === undefined) return false
  const id = row.id
  await db('status_pages')
    .where({ id })
    .update({ ...fields, changed_at: now })
  if (sites !== undefined) await writeSites(db, id, sites)
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

/** The page with this slug and its tracked sites in order; null when there is none. */
export async function findStatusPage({ db, slug }: { db: Db; slug: string }): Promise<StoredStatusPage | null> {
  const row: Record<string, unknown> | undefined = await db('status_pages').where({ slug }).first()
  if (row === undefined) return null
  const sites = await sitesOf(db, [Number(row.id)])
  return pageOf(row, sites.get(Number(row.id)) ?? [])
}

/** The ids of the sites the page `slug` lists, tracked or not, by plain reads; null when there is no such page. */
export async function listPageSiteIds({ db, slug }: { db: Db; slug: string }): Promise<number[] | null> {
  const page: { id: number } | undefined = await db('status_pages').where({ slug }).first('id')
  if (page === undefined) return null
  const ids: unknown[] = await db('status_page_sites').where({ page_id: page.id }).pluck('site_id')
  return ids.map(Number)
}

/** Every page, by slug, with its tracked sites in order. */
export async function listStatusPages({ db }: { db: Db }): Promise<StoredStatusPage[]> {
  const rows: Array<Record<string, unknown>> = await db('status_pages').orderBy('slug', 'asc').select()
  const sites = await sitesOf(
    db,
    rows.map((r) => Number(r.id))
  )
  return rows.map((r) => pageOf(r, sites.get(Number(r.id)) ?? []))
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

/** Which pages list each of the sites `siteIds`: one indexed read, whatever the number of pages. */
export async function listPagesOfSites({
  db,
  siteIds
}: {
  db: Db
  siteIds: readonly number[]
}): Promise<Array<{ site_id: number; slug: string }>> {
  if (siteIds.length === 0) return []
  const rows: Array<Record<string, unknown>> = await db('status_page_sites as s')
    .join('status_pages as p', 'p.id', 's.page_id')
    .whereIn('s.site_id', [...new Set(siteIds)])
    .select('s.site_id', 'p.slug')
  return rows.map((r) => ({ site_id: Number(r.site_id), slug: String(r.slug) }))
}
