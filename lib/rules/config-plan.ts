import { shownCheck, type HttpCheck } from './check-spec.js'
import type { ChannelDecl, ConfigFile, HeartbeatDecl, MonitorDecl, PageDecl, PolicyDecl, SiteDecl, WebhookDecl } from './config-file.js'

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
  monitors: Array<Stored<MonitorDecl>>
  pages: Array<Stored<PageDecl>>
  webhooks: Array<Stored<WebhookDecl>>
  heartbeats: Array<Stored<HeartbeatDecl>>
  channels: Array<Stored<ChannelDecl>>
  alert_policies: Array<Stored<PolicyDecl>>
}

/**
 * A secret's value in a flat resource: compared by value, never shown (a plan says only that it
 * changes). Null: a stored secret this instance's key cannot open, which any value replaces.
 */
export class Secret {
  constructor(readonly value: string | null) {}
}

export interface FieldChange {
  field: string
  old: unknown
  new: unknown
}

export type PlanAction = 'create' | 'change' | 'remove'

export type ResourceKind = 'site' | 'monitor' | 'page' | 'webhook' | 'heartbeat' | 'channel' | 'alert_policy'

export interface PlanItem {
  resource: ResourceKind
  /** The domain, slug, URL or name. */
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
    depends_on: s.depends_on,
    // No windows is not set, as an absent field is: a new site without any shows none.
    maintenance: s.maintenance.length === 0 ? null : s.maintenance,
    ...flatCheck(s.check)
  }
}

/** A site's check: its shape shown with secret header values masked, each secret compared as a field of its own. */
function flatCheck(check: SiteDecl['check']): Flat {
  if (check === null) return { check: null }
  const shown = shownCheck(check) as HttpCheck
  // Headers compare by name, not by the order a file happens to write them in.
  const out: Flat = { check: { ...shown, headers: Object.fromEntries(Object.entries(shown.headers).sort()) } }
  for (const name of check.secret_headers) out[`check.headers.${name}`] = new Secret(check.headers[name] ?? null)
  return out
}

/** A monitor's check compared key by key (`check.port`), so that a plan shows the one setting that changes. */
function flatMonitor(m: MonitorDecl): Flat {
  const out: Flat = {
    name: m.name,
    target: m.target,
    interval_s: m.interval_s,
    max_response_ms: m.max_response_ms,
    maintenance: m.maintenance.length === 0 ? null : m.maintenance
  }
  for (const [key, value] of Object.entries(m.check)) out[`check.${key}`] = value
  return out
}

/** A page's lists as a plan shows them: an entry without a name of its own as its domain or slug alone. */
function flatPage(p: PageDecl): Flat {
  const bySlug = (e: { slug: string; name: string | null }): unknown => (e.name === null ? e.slug : { slug: e.slug, name: e.name })
  return {
    title: p.title,
    description: p.description,
    logo_url: p.logo_url,
    sites: p.sites.map((s) => (s.name === null ? s.domain : { domain: s.domain, name: s.name })),
    // None is not set, as an absent field is: a new page without any shows none.
    heartbeats: p.heartbeats.length === 0 ? null : p.heartbeats.map(bySlug),
    monitors: p.monitors.length === 0 ? null : p.monitors.map(bySlug)
  }
}

function flatWebhook(w: WebhookDecl): Flat {
  return { events: w.events, domains: w.domains, secret: new Secret(w.secret) }
}

function flatHeartbeat(h: HeartbeatDecl): Flat {
  return { name: h.name, schedule: h.schedule, grace_s: h.grace_s, max_runtime_s: h.max_runtime_s }
}

function flatChannel(c: ChannelDecl): Flat {
  const out: Flat = { kind: c.kind, report_to: c.report_to }
  for (const key of [...Object.keys(c.config), ...Object.keys(c.secrets)].sort())
    out[`config.${key}`] = key in c.secrets ? new Secret(String(c.secrets[key])) : c.config[key]
  return out
}

function flatPolicy(p: PolicyDecl): Flat {
  return {
    channels: p.channels,
    events: p.events,
    after_min: p.after_min,
    remind_every_min: p.remind_every_min,
    escalate: p.escalate,
    on_resolved: p.on_resolved,
    group_window_s: p.group_window_s,
    default: p.default
  }
}

/** Secrets by their value, and every object's keys in one order: a file may write them in any. */
const canonical = (_key: string, v: unknown): unknown => {
  if (v instanceof Secret) return { secret: v.value }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v
  return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a, canonical) === JSON.stringify(b, canonical)
const masked = (v: unknown, label: string): unknown => (v instanceof Secret ? (v.value === null ? null : label) : v)

function fieldChanges(old: Flat | null, next: Flat | null): FieldChange[] {
  const keys = [...new Set([...Object.keys(next ?? {}), ...Object.keys(old ?? {})])]
  const changes: FieldChange[] = []
  for (const field of keys) {
    const o = old === null ? null : (old[field] ?? null)
    const n = next === null ? null : (next[field] ?? null)
    if (!same(o, n)) changes.push({ field, old: masked(o, '(secret)'), new: masked(n, old === null ? '(secret)' : '(new secret)') })
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

/** A webhook the file gives no secret keeps the stored one. */
function keepingSecrets(file: ConfigFile, stored: StoredConfig): WebhookDecl[] {
  const secrets = new Map(stored.webhooks.map((w) => [w.url, w.secret]))
  return file.webhooks.map((w) => (w.secret === null && secrets.has(w.url) ? { ...w, secret: secrets.get(w.url) ?? null } : w))
}

function planList<T>(
  resource: ResourceKind,
  key: (t: T) => string,
  flat: (t: T) => Flat,
  desired: readonly T[],
  stored: ReadonlyArray<Stored<T>>,
  prune: boolean
): { items: PlanItem[]; kept: number } {
  return planOf(
    resource,
    new Map(desired.map((d) => [key(d), flat(d)])),
    new Map(stored.map((d) => [key(d), flat(d)])),
    new Map(stored.map((d) => [key(d), d.managed])),
    prune
  )
}

/** The diff from what is stored to what the file declares. */
export function planConfig({ file, stored, prune }: { file: ConfigFile; stored: StoredConfig; prune: boolean }): ConfigPlan {
  const parts = [
    planList('channel', (c) => c.name, flatChannel, file.channels, stored.channels, prune),
    planList('alert_policy', (p) => p.name, flatPolicy, file.alert_policies, stored.alert_policies, prune),
    planList('site', (s) => s.domain, flatSite, file.sites, stored.sites, prune),
    planList('monitor', (m) => m.slug, flatMonitor, file.monitors, stored.monitors, prune),
    planList('page', (p) => p.slug, flatPage, file.pages, stored.pages, prune),
    planList('heartbeat', (h) => h.slug, flatHeartbeat, file.heartbeats, stored.heartbeats, prune),
    planList('webhook', (w) => w.url, flatWebhook, keepingSecrets(file, stored), stored.webhooks, prune)
  ]
  return { items: parts.flatMap((p) => p.items), kept: parts.reduce((n, p) => n + p.kept, 0) }
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

export { configText } from './config-text.js'
