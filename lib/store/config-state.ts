import type { CheckSpec, HttpCheck } from '../rules/check-spec.js'
import { windowDecl, type PageDecl, type SiteDecl } from '../rules/config-file.js'
import type { Stored, StoredConfig } from '../rules/config-plan.js'
import {
  MANAGED_BY_CONFIG,
  readStoredChannels,
  readStoredHeartbeats,
  readStoredMonitors,
  readStoredPolicies,
  readStoredWebhooks,
  markManagedBy,
  type OpenSealed
} from './config-resources.js'
import { toDate, type Db } from './db.js'
import { listMaintenanceWindows } from './maintenance.js'
import { checkOf, expectOf } from './sites.js'
import { listStatusPages } from './status-pages.js'

export { MANAGED_BY_CONFIG, type OpenSealed } from './config-resources.js'

/** A stored http check with its secret header values opened ('' when this key cannot open them). */
function openedCheck(stored: string | null, open: OpenSealed | null): HttpCheck | null {
  if (stored === null) return null
  const spec = JSON.parse(stored) as CheckSpec
  if (spec.type !== 'http') return null
  const headers = { ...spec.headers }
  for (const name of spec.secret_headers) {
    const sealed = headers[name]
    if (sealed !== undefined) headers[name] = (open === null ? null : open(sealed)) ?? ''
  }
  return { ...spec, headers }
}

/** Everything a file may declare, as stored, in a file's normal form, and whether an apply made each one. */
export async function readStoredConfig({ db, open = null }: { db: Db; open?: OpenSealed | null }): Promise<StoredConfig> {
  const policies = new Map<number, string>()
  for (const r of await db('alert_policies').select('id', 'name')) policies.set(Number(r.id), String(r.name))
  const rows: Array<Record<string, unknown>> = await db('sites')
    .whereNull('removed_at')
    .where('kind', 'http')
    .orderBy('domain')
    .select(
      'id',
      'domain',
      'name',
      'interval_s',
      'expect_status',
      'body_contains',
      'max_response_ms',
      'alert_policy_id',
      'depends_on_site_id',
      'check_spec',
      'managed_by'
    )
  const domains = new Map(rows.map((r) => [Number(r.id), String(r.domain)]))
  const windows = await listMaintenanceWindows({ db, siteIds: [...domains.keys()] })
  const sites: Array<Stored<SiteDecl>> = rows.map((r) => ({
    domain: String(r.domain),
    name: String(r.name),
    interval_s: r.interval_s === null ? null : Number(r.interval_s),
    expect: expectOf(r),
    alert_policy: r.alert_policy_id === null ? null : (policies.get(Number(r.alert_policy_id)) ?? null),
    // A parent that is no longer tracked depends on nothing a file could name.
    depends_on: r.depends_on_site_id === null ? null : (domains.get(Number(r.depends_on_site_id)) ?? null),
    maintenance: (windows.get(Number(r.id)) ?? []).map(({ id: _id, ...w }) => windowDecl(w)),
    check: openedCheck(checkOf(r), open),
    managed: r.managed_by === MANAGED_BY_CONFIG
  }))
  const managedPages = new Set<string>(
    (await db('status_pages').where({ managed_by: MANAGED_BY_CONFIG }).pluck('slug')).map((s: unknown) => String(s))
  )
  const pages: Array<Stored<PageDecl>> = (await listStatusPages({ db })).map((p) => ({
    slug: p.slug,
    title: p.title,
    description: p.description,
    logo_url: p.logo_url,
    sites: p.sites.map((s) => ({ domain: s.domain, name: s.display_name })),
    heartbeats: p.heartbeats.map((h) => ({ slug: h.slug, name: h.display_name })),
    monitors: p.monitors.map((m) => ({ slug: m.slug, name: m.display_name })),
    managed: managedPages.has(p.slug)
  }))
  pages.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
  return {
    sites,
    monitors: await readStoredMonitors({ db }),
    pages,
    webhooks: await readStoredWebhooks({ db, open }),
    heartbeats: await readStoredHeartbeats({ db }),
    channels: (await readStoredChannels({ db, open })).map(({ id: _id, ...c }) => c),
    alert_policies: (await readStoredPolicies({ db })).map(({ id: _id, ...p }) => p)
  }
}

/** Alert policies' ids by name. */
export async function listPolicyIds({ db }: { db: Db }): Promise<Map<string, number>> {
  const ids = new Map<string, number>()
  for (const r of await db('alert_policies').select('id', 'name')) ids.set(String(r.name), Number(r.id))
  return ids
}

/** Marks sites or pages as made by an apply. */
export async function markManaged({
  db,
  table,
  column,
  keys
}: {
  db: Db
  table: 'sites' | 'status_pages'
  column: 'domain' | 'slug'
  keys: readonly string[]
}): Promise<void> {
  await markManagedBy({ db, table, column, keys })
}

/** Who holds the apply lock and until when; null when nobody does. */
export interface LockHolder {
  holder: string
  until: Date
}

/**
 * Claims the one apply lock for `holder` until `until`, unless another holds it and its lease has
 * not run out; returns who holds it then (null: claimed). One conditional update: two claims at
 * once cannot both win, on either engine.
 */
export async function claimConfigLock({
  db,
  holder,
  now,
  until
}: {
  db: Db
  holder: string
  now: Date
  until: Date
}): Promise<LockHolder | null> {
  const claimed = await db('config_lock')
    .where({ id: 1 })
    .andWhere((q) => {
      void q.whereNull('holder').orWhere('locked_until', '<', now)
    })
    .update({ holder, locked_until: until })
  if (claimed > 0) return null
  const row: Record<string, unknown> | undefined = await db('config_lock').where({ id: 1 }).first('holder', 'locked_until')
  return { holder: typeof row?.holder === 'string' ? row.holder : '', until: toDate(row?.locked_until) ?? now }
}

/** Lets the lock go, if `holder` still holds it. */
export async function releaseConfigLock({ db, holder }: { db: Db; holder: string }): Promise<void> {
  await db('config_lock').where({ id: 1, holder }).update({ holder: null, locked_until: null })
}
