import { chunks, ID_CHUNK } from './checks.js'
import type { Db } from './db.js'

/** What decides a monitor's alerts: its own policy, its pages' policies, and its parent. */
export interface MonitorAlerting {
  alert_policy_id: number | null
  page_policy_ids: number[]
  depends_on_site_id: number | null
}

/** The alerting settings of the given sites (any kind of monitor: they are all `sites` rows). */
export async function listMonitorAlerting({ db, siteIds }: { db: Db; siteIds: readonly number[] }): Promise<Map<number, MonitorAlerting>> {
  const out = new Map<number, MonitorAlerting>()
  for (const part of chunks([...new Set(siteIds)], ID_CHUNK)) {
    const rows = await db('sites').whereIn('id', part).select('id', 'alert_policy_id', 'depends_on_site_id')
    for (const r of rows) {
      out.set(Number(r.id), {
        alert_policy_id: r.alert_policy_id === null ? null : Number(r.alert_policy_id),
        page_policy_ids: [],
        depends_on_site_id: r.depends_on_site_id === null ? null : Number(r.depends_on_site_id)
      })
    }
    const pages = await db('status_page_sites as s')
      .join('status_pages as p', 'p.id', 's.page_id')
      .whereIn('s.site_id', part)
      .whereNotNull('p.alert_policy_id')
      .orderBy('p.id')
      .select('s.site_id', 'p.alert_policy_id')
    for (const r of pages) {
      const entry = out.get(Number(r.site_id))
      const id = Number(r.alert_policy_id)
      if (entry && !entry.page_policy_ids.includes(id)) entry.page_policy_ids.push(id)
    }
  }
  return out
}

/** Sets a site's policy and parent (undefined: kept; null: cleared); false when no such site. */
export async function setSiteAlerting({
  db,
  siteId,
  policyId,
  dependsOn
}: {
  db: Db
  siteId: number
  policyId?: number | null
  dependsOn?: number | null
}): Promise<boolean> {
  const row: Record<string, unknown> = {}
  if (policyId !== undefined) row.alert_policy_id = policyId
  if (dependsOn !== undefined) row.depends_on_site_id = dependsOn
  if (Object.keys(row).length === 0) return (await db('sites').where({ id: siteId }).first('id')) !== undefined
  return (await db('sites').where({ id: siteId }).update(row)) > 0
}

/** A status page's policy by slug, or undefined when there is no such page. */
export async function findPageAlertPolicy({
  db,
  slug
}: {
  db: Db
  slug: string
}): Promise<{ id: number; alert_policy_id: number | null } | undefined> {
  const row = await db('status_pages').where({ slug }).first('id', 'alert_policy_id')
  return row ? { id: Number(row.id), alert_policy_id: row.alert_policy_id === null ? null : Number(row.alert_policy_id) } : undefined
}

export async function setPageAlertPolicy({ db, slug, policyId }: { db: Db; slug: string; policyId: number | null }): Promise<boolean> {
  return (await db('status_pages').where({ slug }).update({ alert_policy_id: policyId })) > 0
}

/** The sites among `siteIds` that have an outage going on now. */
export async function sitesDown({ db, siteIds }: { db: Db; siteIds: readonly number[] }): Promise<Set<number>> {
  const down = new Set<number>()
  for (const part of chunks([...new Set(siteIds)], ID_CHUNK)) {
    const rows = await db('outages').whereIn('site_id', part).whereNull('ended_at').select('site_id')
    for (const r of rows) down.add(Number(r.site_id))
  }
  return down
}

/**
 * Whether making `siteId` depend on `parentId` would make a loop (the parent, or one of its
 * parents, depends on the site).
 */
export async function wouldLoop({ db, siteId, parentId }: { db: Db; siteId: number; parentId: number }): Promise<boolean> {
  let at: number | null = parentId
  for (let hops = 0; at !== null && hops < 100; hops++) {
    if (at === siteId) return true
    const row: { depends_on_site_id?: unknown } | undefined = await db('sites').where({ id: at }).first('depends_on_site_id')
    at = row?.depends_on_site_id === null || row?.depends_on_site_id === undefined ? null : Number(row.depends_on_site_id)
  }
  return at !== null
}
