import { chunks, ID_CHUNK } from './checks.js'
import { toDate, type Db } from './db.js'
import type { MaintenanceWindow, Weekday } from '../rules/maintenance.js'

/** How `weekly_day` stores a day: its number, Sunday 0, as JavaScript's getDay counts. */
const STORED_DAYS: readonly Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat']

/** A stored maintenance window: the rule's window with its row id. */
export type StoredWindow = MaintenanceWindow & { id: number }

const COLUMNS = ['id', 'site_id', 'starts_at', 'ends_at', 'weekly_day', 'weekly_time', 'weekly_minutes', 'weekly_zone', 'reason']

function windowOf(r: Record<string, unknown>): StoredWindow {
  const id = Number(r.id)
  const reason = typeof r.reason === 'string' ? r.reason : null
  if (r.weekly_day === null || r.weekly_day === undefined) {
    return { id, from: toDate(r.starts_at) as Date, to: toDate(r.ends_at) as Date, reason }
  }
  return {
    id,
    weekly: {
      day: STORED_DAYS[Number(r.weekly_day)] as Weekday,
      time: String(r.weekly_time),
      duration_minutes: Number(r.weekly_minutes),
      zone: String(r.weekly_zone)
    },
    reason
  }
}

function windowColumns(window: MaintenanceWindow): Record<string, unknown> {
  if ('weekly' in window) {
    const w = window.weekly
    return { weekly_day: STORED_DAYS.indexOf(w.day), weekly_time: w.time, weekly_minutes: w.duration_minutes, weekly_zone: w.zone }
  }
  return { starts_at: window.from, ends_at: window.to }
}

/**
 * A change to a site's windows moves the sites' version (`sitesVersion`, the newest `changed_at`),
 * so that every instance reads the windows again at its next look. Written first, so the site's
 * row is locked before the windows change: a check recorded meanwhile reads them before or after.
 */
async function markWindowsChanged(db: Db, siteId: number, now: Date): Promise<void> {
  await db('sites').where({ id: siteId }).update({ changed_at: now })
}

/** Stores a window of a site inside the caller's transaction `db`; returns its id. */
export async function insertMaintenanceWindow({
  db,
  siteId,
  window,
  now
}: {
  db: Db
  siteId: number
  window: MaintenanceWindow
  now: Date
}): Promise<number> {
  await markWindowsChanged(db, siteId, now)
  const [id] = await db('maintenance_windows').insert({ site_id: siteId, ...windowColumns(window), reason: window.reason, created_at: now })
  return Number(id)
}

/** Deletes a window of a site inside the caller's transaction `db`; false when the site has no such window. */
export async function deleteMaintenanceWindow({
  db,
  siteId,
  id,
  now
}: {
  db: Db
  siteId: number
  id: number
  now: Date
}): Promise<boolean> {
  const deleted = await db('maintenance_windows').where({ id, site_id: siteId }).delete()
  if (deleted === 0) return false
  await markWindowsChanged(db, siteId, now)
  return true
}

/** How many windows a site has. */
export async function countMaintenanceWindows({ db, siteId }: { db: Db; siteId: number }): Promise<number> {
  const row = (await db('maintenance_windows').where({ site_id: siteId }).count({ n: '*' }).first()) as { n?: unknown } | undefined
  return Number(row?.n ?? 0)
}

/** The windows of the given sites, each site's in id order; sites without any are missing. One indexed read per 1,000 sites. */
export async function listMaintenanceWindows({
  db,
  siteIds
}: {
  db: Db
  siteIds: readonly number[]
}): Promise<Map<number, StoredWindow[]>> {
  const windows = new Map<number, StoredWindow[]>()
  for (const part of chunks([...new Set(siteIds)], ID_CHUNK)) {
    const rows = await db('maintenance_windows').whereIn('site_id', part).orderBy('id').select(COLUMNS)
    for (const r of rows) pushTo(windows, Number(r.site_id), windowOf(r))
  }
  return windows
}

/** The windows of every tracked site, by site, each in id order. */
export async function listTrackedMaintenanceWindows({ db }: { db: Db }): Promise<Map<number, StoredWindow[]>> {
  const rows = await db('maintenance_windows')
    .join('sites', 'sites.id', 'maintenance_windows.site_id')
    .whereNull('sites.removed_at')
    .orderBy('maintenance_windows.id')
    .select(COLUMNS.map((c) => `maintenance_windows.${c}`))
  const windows = new Map<number, StoredWindow[]>()
  for (const r of rows) pushTo(windows, Number(r.site_id), windowOf(r))
  return windows
}

function pushTo(windows: Map<number, StoredWindow[]>, siteId: number, window: StoredWindow): void {
  const list = windows.get(siteId)
  if (list) list.push(window)
  else windows.set(siteId, [window])
}

/** Records, inside the caller's transaction `db`, the end of the maintenance each site's events announced (null: none). */
export async function updateMaintenanceUntil({ db, until }: { db: Db; until: ReadonlyMap<number, Date | null> }): Promise<void> {
  for (const [id, at] of until) await db('sites').where({ id }).update({ maintenance_until: at })
}

/** Replaces every window of a site with `windows` (in that order), inside the caller's transaction `db`. */
export async function replaceMaintenanceWindows({
  db,
  siteId,
  windows,
  now
}: {
  db: Db
  siteId: number
  windows: readonly MaintenanceWindow[]
  now: Date
}): Promise<void> {
  await markWindowsChanged(db, siteId, now)
  await db('maintenance_windows').where({ site_id: siteId }).delete()
  for (const window of windows) {
    await db('maintenance_windows').insert({ site_id: siteId, ...windowColumns(window), reason: window.reason, created_at: now })
  }
}
