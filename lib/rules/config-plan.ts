import { stringify } from 'yaml'
import type { ConfigFile, PageDecl, SiteDecl } from './config-file.js'

/**
 * What applying a file would do, as a pure diff of two normal forms: what the file declares and
 * what is stored. A resource the file names and the store lacks is created; one both hold with a
 * field that differs is changed, field by field (old and new); one the store holds, an earlier
 * apply made and the file no longer names is removed, with `prune` only. What was made by hand is
 * never removed: the file may change it, and leaving it out leaves it alone.
 */

/** A stored resource and whether an apply made it (`managed_by`). */
export type Stored<T> = T & { managed: boolean }

/** What is stored, in the file's normal form. */
export interface StoredConfig {
  sites: Array<Stored<SiteDecl>>
  pages: Array<Stored<PageDecl>>
}

export interface FieldChange {
  field: string
  old: unknown
  new: unknown
}

export type PlanAction = 'create' | 'change' | 'remove'

export interface PlanItem {
  resource: 'site' | 'page'
  /** The domain or the slug. */
  key: string
  action: PlanAction
  /** Every field set (create), that differs (change) or that goes (remove). */
  changes: FieldChange[]
}

export interface ConfigPlan {
  items: PlanItem[]
  /** Resources an apply made that the file leaves out: kept, unless applied with `prune`. */
  kept: number
}

type Flat = Record<string, unknown>

function flatSite(s: SiteDecl): Flat {
  return {
    name: s.name,
    interval_s: s.interval_s,
    'expect.status': s.expect.status,
    'expect.body_contains': s.expect.body_contains,
    'expect.max_response_ms': s.expect.max_response_ms,
    alert_policy: s.alert_policy,
    depends_on: s.depends_on
  }
}

function flatPage(p: PageDecl): Flat {
  return {
    title: p.title,
    description: p.description,
    logo_url: p.logo_url,
    sites: p.sites.map((s) => (s.name === null ? s.domain : { domain: s.domain, name: s.name }))
  }
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

function fieldChanges(old: Flat | null, next: Flat | null): FieldChange[] {
  const keys = Object.keys(next ?? old ?? {})
  const changes: FieldChange[] = []
  for (const field of keys) {
    const o = old === null ? null : (old[field] ?? null)
    const n = next === null ? null : (next[field] ?? null)
    if (!same(o, n)) changes.push({ field, old: o, new: n })
  }
  return changes
}

function planOf(
  resource: PlanItem['resource'],
  desired: ReadonlyMap<string, Flat>,
  stored: ReadonlyMap<string, Flat>,
  managed: ReadonlyMap<string, boolean>,
  prune: boolean
): { items: PlanItem[]; kept: number } {
  const items: PlanItem[] = []
  let kept = 0
  for (const [key, next] of desired) {
    const old = stored.get(key) ?? null
    if (old === null) items.push({ resource, key, action: 'create', changes: fieldChanges(null, next) })
    else {
      const changes = fieldChanges(old, next)
      if (changes.length > 0) items.push({ resource, key, action: 'change', changes })
    }
  }
  for (const [key, old] of stored) {
    if (desired.has(key) || managed.get(key) !== true) continue
    if (prune) items.push({ resource, key, action: 'remove', changes: fieldChanges(old, null) })
    else kept++
  }
  return { items, kept }
}

/** The diff from what is stored to what the file declares. */
export function planConfig({ file, stored, prune }: { file: ConfigFile; stored: StoredConfig; prune: boolean }): ConfigPlan {
  const sites = planOf(
    'site',
    new Map(file.sites.map((s) => [s.domain, flatSite(s)])),
    new Map(stored.sites.map((s) => [s.domain, flatSite(s)])),
    new Map(stored.sites.map((s) => [s.domain, s.managed])),
    prune
  )
  const pages = planOf(
    'page',
    new Map(file.pages.map((p) => [p.slug, flatPage(p)])),
    new Map(stored.pages.map((p) => [p.slug, flatPage(p)])),
    new Map(stored.pages.map((p) => [p.slug, p.managed])),
    prune
  )
  return { items: [...sites.items, ...pages.items], kept: sites.kept + pages.kept }
}

export function planCounts(plan: ConfigPlan): Record<PlanAction, number> {
  const counts = { create: 0, change: 0, remove: 0 }
  for (const item of plan.items) counts[item.action]++
  return counts
}

const shown = (value: unknown): string => (value === null ? '(none)' : JSON.stringify(value))
const SIGN: Record<PlanAction, string> = { create: '+', change: '~', remove: '-' }

/** The plan as `terraform plan` prints one: a line per resource, a line per field, a summary. */
export function planText(plan: ConfigPlan, { applied = false }: { applied?: boolean } = {}): string {
  const lines: string[] = []
  for (const item of plan.items) {
    lines.push(`${SIGN[item.action]} ${item.resource} ${item.key}`)
    for (const c of item.changes) {
      if (item.action === 'create') lines.push(`    ${c.field}: ${shown(c.new)}`)
      else if (item.action === 'remove') lines.push(`    ${c.field}: ${shown(c.old)}`)
      else lines.push(`    ${c.field}: ${shown(c.old)} -> ${shown(c.new)}`)
    }
  }
  const counts = planCounts(plan)
  const keptNote = plan.kept > 0 ? ` ${plan.kept} made by an earlier apply and left out of the file kept (--prune removes them).` : ''
  if (plan.items.length === 0) lines.push(`No changes: what is running matches the file.${keptNote}`)
  else if (applied) lines.push(`Applied: ${counts.create} created, ${counts.change} changed, ${counts.remove} removed.${keptNote}`)
  else lines.push(`Plan: ${counts.create} to create, ${counts.change} to change, ${counts.remove} to remove.${keptNote}`)
  return lines.join('\n')
}

/** The file a normal form is written as: what is not set left out, so that export reads like a hand-written file. */
export function configText(file: ConfigFile, schemaUrl: string | null): string {
  const sites = file.sites.map((s) => {
    const out: Record<string, unknown> = { domain: s.domain }
    if (s.name !== s.domain) out.name = s.name
    if (s.interval_s !== null) out.interval_s = s.interval_s
    const expect = Object.fromEntries(Object.entries(s.expect).filter(([, v]) => v !== null))
    if (Object.keys(expect).length > 0) out.expect = expect
    if (s.alert_policy !== null) out.alert_policy = s.alert_policy
    if (s.depends_on !== null) out.depends_on = s.depends_on
    return out
  })
  const pages = file.pages.map((p) => {
    const out: Record<string, unknown> = { slug: p.slug, title: p.title }
    if (p.description !== null) out.description = p.description
    if (p.logo_url !== null) out.logo_url = p.logo_url
    out.sites = p.sites.map((s) => (s.name === null ? { domain: s.domain } : { domain: s.domain, name: s.name }))
    return out
  })
  const head = schemaUrl === null ? '' : `# yaml-language-server: $schema=${schemaUrl}\n`
  return head + stringify({ sites, pages }, { lineWidth: 0 })
}
