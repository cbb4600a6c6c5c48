import { randomUUID } from 'node:crypto'
import { announced, appendToOutbox } from '../events/outbox.js'
import { removeSiteIn } from '../monitoring/remove-site.js'
import type { ConfigFile, SiteDecl } from '../rules/config-file.js'
import { planConfig, type ConfigPlan, type PlanItem } from '../rules/config-plan.js'
import { siteEvent } from '../rules/events.js'
import type { Db } from '../store/db.js'
import { setSiteAlerting } from '../store/alert-targets.js'
import { claimConfigLock, listPolicyIds, markManaged, readStoredConfig, releaseConfigLock, type LockHolder } from '../store/config-state.js'
import { siteIdsByDomain, trackSites, writeSiteSettings } from '../store/sites.js'
import { deleteStatusPage, insertStatusPage, updateStatusPage } from '../store/status-pages.js'

/** How long an apply may hold the lock: a killed one frees it after this. */
export const LOCK_LEASE_MS = 5 * 60_000

/** Another apply holds the lock: this one wrote nothing. */
export class ConfigLockedError extends Error {
  override name = 'ConfigLockedError'
  readonly code = 'CONFIG_LOCKED'
  constructor(readonly holder: LockHolder) {
    super(`another apply is in progress (until ${holder.until.toISOString()} at the latest); try again when it is done`)
  }
}

/** The file names what the database lacks (an alert policy): nothing was written. */
export class ConfigRefusedError extends Error {
  override name = 'ConfigRefusedError'
  readonly code = 'CONFIG_REFUSED'
  constructor(readonly problems: string[]) {
    super(problems.join('\n'))
  }
}

/** Every alert policy the file names must exist: the file does not declare policies yet. */
function policyIdsFor(file: ConfigFile, ids: ReadonlyMap<string, number>): Map<string, number> {
  const problems = file.sites
    .filter((s) => s.alert_policy !== null && !ids.has(s.alert_policy))
    .map((s) => `site ${s.domain}: alert_policy: no alert policy is named ${JSON.stringify(s.alert_policy)}`)
  if (problems.length > 0) throw new ConfigRefusedError(problems)
  return new Map(ids)
}

/** What applying `file` would do now; reads only. */
export async function planFile({ db, file, prune }: { db: Db; file: ConfigFile; prune: boolean }): Promise<ConfigPlan> {
  policyIdsFor(file, await listPolicyIds({ db }))
  return planConfig({ file, stored: await readStoredConfig({ db }), prune })
}

const touches = (item: PlanItem, fields: readonly string[]): boolean => item.changes.some((c) => fields.includes(c.field))
const SETTINGS_FIELDS = ['name', 'interval_s', 'expect.status', 'expect.body_contains', 'expect.max_response_ms']
const ALERTING_FIELDS = ['alert_policy', 'depends_on']

/** Writes the sites part of a plan inside `trx`; returns how many events went to the outbox. */
async function writeSites(trx: Db, file: ConfigFile, plan: ConfigPlan, policies: ReadonlyMap<string, number>, now: Date): Promise<number> {
  const declared = new Map(file.sites.map((s) => [s.domain, s]))
  const items = plan.items.filter((i) => i.resource === 'site')
  const created = items.filter((i) => i.action === 'create').map((i) => declared.get(i.key) as SiteDecl)
  const tracked = await trackSites({
    db: trx,
    entries: created.map((s) => ({ domain: s.domain, name: s.name, settings: { interval_s: s.interval_s, expect: s.expect } })),
    now
  })
  await markManaged({ db: trx, table: 'sites', column: 'domain', keys: created.map((s) => s.domain) })
  const events = tracked.filter((s) => s.outcome !== 'already').map((s) => siteEvent('added', s, now))
  const alerting = items.filter((i) => touches(i, ALERTING_FIELDS)).map((i) => declared.get(i.key) as SiteDecl)
  const ids = await siteIdsByDomain({
    db: trx,
    domains: [...new Set([...items.map((i) => i.key), ...alerting.flatMap((s) => (s.depends_on === null ? [] : [s.depends_on]))])]
  })
  for (const item of items) {
    if (item.action !== 'change' || !touches(item, SETTINGS_FIELDS)) continue
    const s = declared.get(item.key) as SiteDecl
    await writeSiteSettings({
      db: trx,
      id: ids.get(s.domain) as number,
      settings: { interval_s: s.interval_s, expect: s.expect },
      name: s.name,
      now
    })
  }
  for (const s of alerting) {
    await setSiteAlerting({
      db: trx,
      siteId: ids.get(s.domain) as number,
      policyId: s.alert_policy === null ? null : (policies.get(s.alert_policy) ?? null),
      dependsOn: s.depends_on === null ? null : (ids.get(s.depends_on) ?? null)
    })
  }
  await appendToOutbox({ db: trx, events })
  return events.length
}

/** Writes the pages part of a plan inside `trx` (after the sites: a page lists sites the file declares). */
async function writePages(trx: Db, file: ConfigFile, plan: ConfigPlan, now: Date): Promise<void> {
  const declared = new Map(file.pages.map((p) => [p.slug, p]))
  const items = plan.items.filter((i) => i.resource === 'page' && i.action !== 'remove')
  const ids = await siteIdsByDomain({
    db: trx,
    domains: [...new Set(items.flatMap((i) => declared.get(i.key)?.sites.map((s) => s.domain) ?? []))]
  })
  for (const item of items) {
    const { sites, ...fields } = declared.get(item.key) as ConfigFile['pages'][number]
    const entries = sites.map((s) => ({ siteId: ids.get(s.domain) as number, displayName: s.name }))
    if (item.action === 'create') await insertStatusPage({ db: trx, page: fields, sites: entries, now })
    else await updateStatusPage({ db: trx, slug: item.key, fields, sites: entries, now })
  }
  await markManaged({ db: trx, table: 'status_pages', column: 'slug', keys: items.filter((i) => i.action === 'create').map((i) => i.key) })
}

/** What an apply did: the plan it carried out, and the slugs of the pages it wrote (their renders are stale). */
export interface Applied {
  plan: ConfigPlan
  pages: string[]
}

/**
 * Applies a file in one transaction: the plan is made inside it, from what is stored then, and
 * carried out whole or not at all. One apply at a time across every instance and the operator
 * tool (the lock row); the loser gets {@link ConfigLockedError} and writes nothing. A plan with no
 * items writes nothing at all. After the commit, the outbox is woken; the caller tells the
 * scheduler and the pages (every other instance sees the moved `changed_at`).
 */
export async function applyFile({
  db,
  file,
  prune,
  now,
  holder = randomUUID()
}: {
  db: Db
  file: ConfigFile
  prune: boolean
  now: () => Date
  holder?: string
}): Promise<Applied> {
  const at = now()
  const other = await claimConfigLock({ db, holder, now: at, until: new Date(at.getTime() + LOCK_LEASE_MS) })
  if (other !== null) throw new ConfigLockedError(other)
  try {
    let events = 0
    const applied = await db.transaction(async (trx): Promise<Applied> => {
      const policies = policyIdsFor(file, await listPolicyIds({ db: trx }))
      const plan = planConfig({ file, stored: await readStoredConfig({ db: trx }), prune })
      if (plan.items.length === 0) return { plan, pages: [] }
      const when = now()
      events += await writeSites(trx, file, plan, policies, when)
      await writePages(trx, file, plan, when)
      const removed = plan.items.filter((i) => i.action === 'remove')
      for (const item of removed.filter((i) => i.resource === 'page')) await deleteStatusPage({ db: trx, slug: item.key })
      for (const item of removed.filter((i) => i.resource === 'site')) {
        if (await removeSiteIn({ db: trx, domain: item.key, now: when })) events++
      }
      return { plan, pages: plan.items.filter((i) => i.resource === 'page').map((i) => i.key) }
    })
    if (events > 0) announced()
    return applied
  } finally {
    await releaseConfigLock({ db, holder })
  }
}
