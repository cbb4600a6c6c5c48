import { randomUUID } from 'node:crypto'
import { announced, appendToOutbox } from '../events/outbox.js'
import { sealCheck } from '../monitoring/check-secrets.js'
import { removeSiteIn } from '../monitoring/remove-site.js'
import type { ConfigFile, PageDecl, SiteDecl } from '../rules/config-file.js'
import { windowOfDecl } from '../rules/maintenance.js'
import { monitorDomain } from '../rules/monitor.js'
import { planConfig, type ConfigPlan, type PlanItem } from '../rules/config-plan.js'
import { siteEvent } from '../rules/events.js'
import type { Db } from '../store/db.js'
import { heartbeatDomain } from '../store/heartbeats.js'
import { setSiteAlerting } from '../store/alert-targets.js'
import { readStoredChannels } from '../store/config-resources.js'
import {
  claimConfigLock,
  listPolicyIds,
  markManaged,
  readStoredConfig,
  releaseConfigLock,
  type LockHolder,
  type OpenSealed
} from '../store/config-state.js'
import { replaceMaintenanceWindows } from '../store/maintenance.js'
import { siteIdsByDomain, trackSites, writeSiteSettings, type SettingsToWrite } from '../store/sites.js'
import { deleteStatusPage, insertStatusPage, updateStatusPage, type PageSiteEntry } from '../store/status-pages.js'
import type { SecretBox } from '../webhooks/secret-box.js'
import { boxFor, removeAlerting, unknownNames, writeChannels, writePolicies } from './write-alerting.js'
import { writeHeartbeats, writeWebhooks } from './write-hooks.js'
import { removeMonitors, writeMonitors } from './write-monitors.js'

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

/** The file names what neither it nor the database holds (an alert policy, a channel): nothing was written. */
export class ConfigRefusedError extends Error {
  override name = 'ConfigRefusedError'
  readonly code = 'CONFIG_REFUSED'
  constructor(readonly problems: string[]) {
    super(problems.join('\n'))
  }
}

/** Refuses a file naming a channel or policy that neither it nor the database holds; reads only. */
async function refuseUnknownNames(db: Db, file: ConfigFile): Promise<void> {
  const channels = new Map((await readStoredChannels({ db, open: null })).map((c) => [c.name, c.kind as string]))
  const problems = unknownNames(file, { channels, policies: new Set((await listPolicyIds({ db })).keys()) })
  if (problems.length > 0) throw new ConfigRefusedError(problems)
}

/** Opens stored secrets to compare them with the file's; one this key cannot open reads as unreadable. */
export function opener(box: SecretBox | undefined): OpenSealed | null {
  if (box === undefined) return null
  return (sealed) => {
    try {
      return box.open(sealed)
    } catch {
      return null
    }
  }
}

/** What applying `file` would do now; reads only. */
export async function planFile({
  db,
  file,
  prune,
  box
}: {
  db: Db
  file: ConfigFile
  prune: boolean
  box?: SecretBox
}): Promise<ConfigPlan> {
  await refuseUnknownNames(db, file)
  return planConfig({ file, stored: await readStoredConfig({ db, open: opener(box) }), prune })
}

const touches = (item: PlanItem, fields: readonly string[]): boolean =>
  item.changes.some((c) => fields.includes(c.field) || (fields.includes('check') && c.field.startsWith('check.')))
const SETTINGS_FIELDS = ['name', 'interval_s', 'expect.status', 'expect.body_contains', 'expect.max_response_ms', 'check']

/** A site's settings as stored: its check sealed (null: the plain web check). */
function settingsOf(s: SiteDecl, box: SecretBox | undefined): SettingsToWrite {
  return { interval_s: s.interval_s, expect: s.expect, check: s.check === null ? null : sealCheck(s.check, boxFor(box)) }
}
const ALERTING_FIELDS = ['alert_policy', 'depends_on']

/** Writes the sites part of a plan inside `trx`; returns how many events went to the outbox. */
async function writeSites(
  trx: Db,
  file: ConfigFile,
  plan: ConfigPlan,
  policies: ReadonlyMap<string, number>,
  box: SecretBox | undefined,
  now: Date
): Promise<number> {
  const declared = new Map(file.sites.map((s) => [s.domain, s]))
  const items = plan.items.filter((i) => i.resource === 'site')
  const created = items.filter((i) => i.action === 'create').map((i) => declared.get(i.key) as SiteDecl)
  const tracked = await trackSites({
    db: trx,
    entries: created.map((s) => ({ domain: s.domain, name: s.name, settings: settingsOf(s, box) })),
    now
  })
  await markManaged({ db: trx, table: 'sites', column: 'domain', keys: created.map((s) => s.domain) })
  const events = tracked.filter((s) => s.outcome !== 'already').map((s) => siteEvent('added', s, now))
  const alerting = items.filter((i) => i.action !== 'remove' && touches(i, ALERTING_FIELDS)).map((i) => declared.get(i.key) as SiteDecl)
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
      settings: settingsOf(s, box),
      name: s.name,
      now
    })
  }
  for (const item of items) {
    const s = declared.get(item.key)
    if (s === undefined || item.action === 'remove' || !touches(item, ['maintenance'])) continue
    await replaceMaintenanceWindows({ db: trx, siteId: ids.get(s.domain) as number, windows: s.maintenance.map(windowOfDecl), now })
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

/**
 * Writes the pages part of a plan inside `trx`, after the sites, monitors and heartbeats: a page
 * lists those the file declares, made by this apply or before it. Each of a page's lists is the
 * file's: one the file leaves out is emptied (docs/decisions.md, "Monitoring as code").
 */
async function writePages(trx: Db, file: ConfigFile, plan: ConfigPlan, now: Date): Promise<void> {
  const declared = new Map(file.pages.map((p) => [p.slug, p]))
  const items = plan.items.filter((i) => i.resource === 'page' && i.action !== 'remove')
  const pages = items.map((i) => declared.get(i.key) as PageDecl)
  const ids = await siteIdsByDomain({
    db: trx,
    domains: [
      ...new Set(
        pages.flatMap((p) => [
          ...p.sites.map((s) => s.domain),
          ...p.heartbeats.map((h) => heartbeatDomain(h.slug)),
          ...p.monitors.map((m) => monitorDomain(m.slug))
        ])
      )
    ]
  })
  const entries = <T extends { name: string | null }>(list: readonly T[], domain: (t: T) => string): PageSiteEntry[] =>
    list.map((e) => ({ siteId: ids.get(domain(e)) as number, displayName: e.name }))
  for (const item of items) {
    const { sites, heartbeats, monitors, ...fields } = declared.get(item.key) as PageDecl
    const lists = {
      sites: entries(sites, (s) => s.domain),
      heartbeats: entries(heartbeats, (h) => heartbeatDomain(h.slug)),
      monitors: entries(monitors, (m) => monitorDomain(m.slug))
    }
    if (item.action === 'create') await insertStatusPage({ db: trx, page: fields, ...lists, now })
    else await updateStatusPage({ db: trx, slug: item.key, fields, ...lists, now })
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
  box,
  holder = randomUUID()
}: {
  db: Db
  file: ConfigFile
  prune: boolean
  now: () => Date
  /** Seals the file's secrets and opens the stored ones to compare; needed when the file names any. */
  box?: SecretBox
  holder?: string
}): Promise<Applied> {
  const at = now()
  const other = await claimConfigLock({ db, holder, now: at, until: new Date(at.getTime() + LOCK_LEASE_MS) })
  if (other !== null) throw new ConfigLockedError(other)
  try {
    let events = 0
    const applied = await db.transaction(async (trx): Promise<Applied> => {
      await refuseUnknownNames(trx, file)
      const plan = planConfig({ file, stored: await readStoredConfig({ db: trx, open: opener(box) }), prune })
      if (plan.items.length === 0) return { plan, pages: [] }
      const when = now()
      await writeChannels(trx, file, plan, box, when)
      await writePolicies(trx, file, plan, when)
      events += await writeSites(trx, file, plan, await listPolicyIds({ db: trx }), box, when)
      events += await writeMonitors(trx, file, plan, when)
      events += await writeHeartbeats(trx, file, plan, when)
      await writePages(trx, file, plan, when)
      await writeWebhooks(trx, file, plan, box, when)
      const removed = plan.items.filter((i) => i.action === 'remove')
      for (const item of removed.filter((i) => i.resource === 'page')) await deleteStatusPage({ db: trx, slug: item.key })
      events += await removeMonitors(trx, plan, when)
      for (const item of removed.filter((i) => i.resource === 'site')) {
        if (await removeSiteIn({ db: trx, domain: item.key, now: when })) events++
      }
      await removeAlerting(trx, plan, when)
      return { plan, pages: plan.items.filter((i) => i.resource === 'page').map((i) => i.key) }
    })
    if (events > 0) announced()
    return applied
  } finally {
    await releaseConfigLock({ db, holder })
  }
}
