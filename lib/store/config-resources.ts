import type { ChannelDecl, HeartbeatDecl, MonitorDecl, PolicyDecl, WebhookDecl } from '../rules/config-file.js'
import { orderedCheck } from '../rules/config-monitors.js'
import { windowDecl } from '../rules/maintenance.js'
import { monitorOf } from '../rules/monitor.js'
import type { Stored } from '../rules/config-plan.js'
import { listChannels, listPolicies } from './alert-config.js'
import type { Db } from './db.js'
import { scheduleOf } from './heartbeats.js'
import { listMaintenanceWindows } from './maintenance.js'
import { MONITOR_ROW_KINDS } from './monitors.js'
import { checkOf, expectOf } from './sites.js'
import { listWebhooks } from './webhooks.js'

/** What `managed_by` says of a resource an apply made. */
export const MANAGED_BY_CONFIG = 'config'

/**
 * Opens a sealed secret (the secret box's `open`); null when this instance's key cannot. Without
 * one, secrets read as unreadable: what only exports, and never compares secrets, needs no key.
 */
export type OpenSealed = (sealed: string) => string | null

async function managedIds(db: Db, table: string): Promise<Set<number>> {
  return new Set((await db(table).where({ managed_by: MANAGED_BY_CONFIG }).pluck('id')).map(Number))
}

/** Webhooks in a file's normal form, sorted by URL; a secret this key cannot open is null. */
export async function readStoredWebhooks({ db, open }: { db: Db; open: OpenSealed | null }): Promise<Array<Stored<WebhookDecl>>> {
  const managed = await managedIds(db, 'webhooks')
  return (await listWebhooks({ db }))
    .map((w) => ({
      url: w.url,
      events: w.events,
      domains: w.domains,
      secret: open === null ? '' : open(w.secret),
      managed: managed.has(w.id)
    }))
    .sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0))
}

/** Heartbeats in a file's normal form, sorted by slug; never their tokens. */
export async function readStoredHeartbeats({ db }: { db: Db }): Promise<Array<Stored<HeartbeatDecl>>> {
  const rows: Array<Record<string, unknown>> = await db('heartbeats')
    .orderBy('slug')
    .select('slug', 'name', 'every_s', 'cron', 'zone', 'grace_s', 'max_runtime_s', 'managed_by')
  return rows.map((r) => ({
    slug: String(r.slug),
    name: String(r.name),
    schedule: scheduleOf(r),
    grace_s: Number(r.grace_s),
    max_runtime_s: r.max_runtime_s === null || r.max_runtime_s === undefined ? null : Number(r.max_runtime_s),
    managed: r.managed_by === MANAGED_BY_CONFIG
  }))
}

/** Monitors of kind tcp, tls and dns in a file's normal form, sorted by slug; their checks hold no secrets. */
export async function readStoredMonitors({ db }: { db: Db }): Promise<Array<Stored<MonitorDecl>>> {
  const rows: Array<Record<string, unknown>> = await db('sites')
    .whereIn('kind', MONITOR_ROW_KINDS)
    .whereNull('removed_at')
    .select('id', 'domain', 'kind', 'name', 'target', 'interval_s', 'max_response_ms', 'check_spec', 'managed_by')
  const windows = await listMaintenanceWindows({ db, siteIds: rows.map((r) => Number(r.id)) })
  const monitors = rows.flatMap((r) => {
    const ref = monitorOf({ domain: String(r.domain), kind: String(r.kind) })
    const check = checkOf(r)
    if (ref === null || check === null) return []
    return [
      {
        slug: ref.slug,
        name: String(r.name),
        target: String(r.target),
        check: orderedCheck(JSON.parse(check) as MonitorDecl['check']),
        interval_s: r.interval_s === null || r.interval_s === undefined ? null : Number(r.interval_s),
        max_response_ms: expectOf(r).max_response_ms,
        maintenance: (windows.get(Number(r.id)) ?? []).map(({ id: _id, ...w }) => windowDecl(w)),
        managed: r.managed_by === MANAGED_BY_CONFIG
      }
    ]
  })
  return monitors.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
}

/**
 * Alert channels in a file's normal form, sorted by name, with their ids (policies name them). A
 * webhook channel's signing secret is the service's own, never in a file: it is left out.
 */
export async function readStoredChannels({
  db,
  open
}: {
  db: Db
  open: OpenSealed | null
}): Promise<Array<Stored<ChannelDecl> & { id: number }>> {
  const managed = await managedIds(db, 'alert_channels')
  const rows = await listChannels({ db })
  const names = new Map(rows.map((c) => [c.id, c.name]))
  return rows
    .map((c) => {
      let secrets: Record<string, unknown> = {}
      if (c.secret !== null) {
        const opened = open === null ? null : open(c.secret)
        secrets = opened === null ? {} : (JSON.parse(opened) as Record<string, unknown>)
      }
      const { secret: _signing, ...declared } = secrets
      return {
        id: c.id,
        name: c.name,
        kind: c.kind,
        config: c.config,
        secrets: c.kind === 'webhook' ? declared : secrets,
        report_to: c.report_to === null ? null : (names.get(c.report_to) ?? null),
        managed: managed.has(c.id)
      }
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id))
}

/** Alert policies in a file's normal form, sorted by name, their channels by name. */
export async function readStoredPolicies({ db }: { db: Db }): Promise<Array<Stored<PolicyDecl> & { id: number }>> {
  const managed = await managedIds(db, 'alert_policies')
  const channels = new Map((await listChannels({ db })).map((c) => [c.id, c.name]))
  const named = (ids: readonly number[]): string[] => ids.flatMap((id) => (channels.has(id) ? [channels.get(id) as string] : []))
  return (await listPolicies({ db }))
    .map((p) => ({
      id: p.id,
      name: p.name,
      channels: named(p.channels),
      events: p.events,
      after_min: p.after_min,
      remind_every_min: p.remind_every_min,
      escalate: p.escalate.map((s) => ({ after_min: s.after_min, channels: named(s.channels) })),
      on_resolved: p.on_resolved,
      group_window_s: p.group_window_s,
      default: p.is_default,
      managed: managed.has(p.id)
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** Marks rows as made by an apply, by a key column. */
export async function markManagedBy({
  db,
  table,
  column,
  keys
}: {
  db: Db
  table: 'sites' | 'status_pages' | 'webhooks' | 'heartbeats' | 'alert_channels' | 'alert_policies'
  column: 'domain' | 'slug' | 'url' | 'name' | 'id'
  keys: ReadonlyArray<string | number>
}): Promise<void> {
  for (let i = 0; i < keys.length; i += 500) {
    await db(table)
      .whereIn(column, keys.slice(i, i + 500))
      .update({ managed_by: MANAGED_BY_CONFIG })
  }
}
