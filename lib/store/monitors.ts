import type { Db } from './db.js'
import { expectColumns, forUpdate, toSiteRow } from './sites.js'
import type { SiteRow } from './tables.js'
import type { Expectations } from '../rules/expectations.js'

/*
 * Monitors of kind tcp, tls and dns: `sites` rows of that kind, their domain the monitor's identity
 * (`monitor:<slug>`, made by lib/rules/monitor.ts), their `target` the host they probe and
 * `check_spec` their check (lib/monitoring/check-secrets.ts's stored form).
 */

/** The kinds of the `sites` rows that are monitors. */
export const MONITOR_ROW_KINDS: readonly string[] = ['tcp', 'tls', 'dns']

/** What a monitor's row stores besides its state. */
export interface MonitorColumns {
  name: string
  kind: string
  target: string
  interval_s: number | null
  expect: Expectations
  /** The check as stored. */
  check: string
}

function columns(m: MonitorColumns): Record<string, unknown> {
  return {
    name: m.name,
    kind: m.kind,
    target: m.target,
    interval_s: m.interval_s,
    ...expectColumns(m.expect),
    check_spec: m.check
  }
}

/**
 * Inserts a monitor's row (domain `domain`, its identity) inside the caller's transaction; returns
 * it. An identity in use fails on the domains' unique index (`isDuplicateKey`).
 */
export async function insertMonitor({
  db,
  domain,
  monitor,
  now
}: {
  db: Db
  domain: string
  monitor: MonitorColumns
  now: Date
}): Promise<SiteRow> {
  await db('sites').insert({ domain, ...columns(monitor), added_at: now, changed_at: now, status: 'unavailable' })
  return (await findMonitor({ db, domain })) as SiteRow
}

/** A monitor's row by identity, while it is tracked; null otherwise. */
export async function findMonitor({ db, domain }: { db: Db; domain: string }): Promise<SiteRow | null> {
  const row = await db('sites').where({ domain }).whereIn('kind', MONITOR_ROW_KINDS).whereNull('removed_at').first('*')
  return row ? toSiteRow(row) : null
}

/** {@link findMonitor}, the row locked until the caller's transaction ends. */
export async function lockMonitor({ db, domain }: { db: Db; domain: string }): Promise<SiteRow | null> {
  const row = await forUpdate(db, db('sites').where({ domain }).whereIn('kind', MONITOR_ROW_KINDS).whereNull('removed_at').first('*'))
  return row ? toSiteRow(row) : null
}

/** Tracked monitors in identity order after `after` (an identity), at most `limit` plus one (the caller tells if there is more). */
export async function listMonitors({ db, after, limit }: { db: Db; after?: string; limit: number }): Promise<SiteRow[]> {
  const q = db('sites')
    .whereIn('kind', MONITOR_ROW_KINDS)
    .whereNull('removed_at')
    .orderBy('domain')
    .limit(limit + 1)
  if (after !== undefined) q.where('domain', '>', after)
  return (await q.select('*')).map(toSiteRow)
}

/** Writes a monitor's settings; `changed_at` moves, so that every instance reads the monitor again. */
export async function writeMonitor({ db, id, monitor, now }: { db: Db; id: number; monitor: MonitorColumns; now: Date }): Promise<void> {
  await db('sites')
    .where({ id })
    .update({ ...columns(monitor), changed_at: now })
}

/**
 * Marks a monitor removed at `now`: its row stays as history (checks, outages), its identity freed
 * for a new monitor of the same slug, as a deleted heartbeat's.
 */
export async function markMonitorRemoved({ db, row, now }: { db: Db; row: SiteRow; now: Date }): Promise<void> {
  await db('sites')
    .where({ id: row.id })
    .update({ removed_at: now, changed_at: now, domain: `${row.domain}~${row.id}` })
}
