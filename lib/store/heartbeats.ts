import type { HeartbeatSchedule, HeartbeatState, OpenRun, PingKind } from '../rules/heartbeat.js'
import { engineOf, toDate, type Db } from './db.js'
import { forUpdate } from './sites.js'

/** A heartbeat's row, its `sites` row's id included. */
export interface HeartbeatRow {
  id: number
  site_id: number
  slug: string
  name: string
  schedule: HeartbeatSchedule
  grace_s: number
  max_runtime_s: number | null
  paused: boolean
  state: HeartbeatState
  failed: boolean
  last_ping_at: Date | null
  last_ping_kind: PingKind | null
  last_success_at: Date | null
  open_runs: OpenRun[]
  last_message: string | null
  last_run_ms: number | null
  next_deadline: Date | null
  created_at: Date
  changed_at: Date
}

/** The settings a heartbeat is created or changed with. */
export interface HeartbeatSettings {
  name: string
  schedule: HeartbeatSchedule
  grace_s: number
  max_runtime_s: number | null
}

/**
 * A schedule as its columns hold it: `every_s`, or `cron` and `zone` with `every_s` 0 (a simple
 * schedule is 30 s at least, so 0 never means one; migration 21).
 */
function scheduleColumns(schedule: HeartbeatSchedule): { every_s: number; cron: string | null; zone: string | null } {
  if ('cron' in schedule) return { every_s: 0, cron: schedule.cron, zone: schedule.zone }
  return { every_s: schedule.every_s, cron: null, zone: null }
}

function settingsColumns({ schedule, ...rest }: HeartbeatSettings): Record<string, unknown> {
  return { ...rest, ...scheduleColumns(schedule) }
}

export function scheduleOf(r: Record<string, unknown>): HeartbeatSchedule {
  if (typeof r.cron === 'string' && typeof r.zone === 'string') return { cron: r.cron, zone: r.zone }
  return { every_s: Number(r.every_s) }
}

/** What the rules leave after a ping or a deadline: the row's mutable state. */
export type HeartbeatProgress = Pick<
  HeartbeatRow,
  'paused' | 'state' | 'failed' | 'last_ping_at' | 'last_ping_kind' | 'last_success_at' | 'open_runs' | 'last_run_ms' | 'next_deadline'
>

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))

function parseRuns(text: unknown): OpenRun[] {
  try {
    const runs = JSON.parse(String(text)) as unknown
    if (!Array.isArray(runs)) return []
    return runs
      .filter((r): r is { rid: unknown; at: unknown } => typeof r === 'object' && r !== null)
      .map((r) => ({ rid: typeof r.rid === 'string' ? r.rid : null, at: Number(r.at) }))
      .filter((r) => Number.isFinite(r.at))
  } catch {
    return []
  }
}

export function toHeartbeatRow(r: Record<string, unknown>): HeartbeatRow {
  return {
    id: Number(r.id),
    site_id: Number(r.site_id),
    slug: String(r.slug),
    name: String(r.name),
    schedule: scheduleOf(r),
    grace_s: Number(r.grace_s),
    max_runtime_s: num(r.max_runtime_s),
    paused: Boolean(r.paused),
    state: String(r.state) as HeartbeatState,
    failed: Boolean(r.failed),
    last_ping_at: toDate(r.last_ping_at),
    last_ping_kind: typeof r.last_ping_kind === 'string' ? (r.last_ping_kind as PingKind) : null,
    last_success_at: toDate(r.last_success_at),
    open_runs: parseRuns(r.open_runs),
    last_message: typeof r.last_message === 'string' ? r.last_message : null,
    last_run_ms: num(r.last_run_ms),
    next_deadline: toDate(r.next_deadline),
    created_at: toDate(r.created_at) as Date,
    changed_at: toDate(r.changed_at) as Date
  }
}

/** The `sites` row's domain of a heartbeat: no domain can be written with a colon. */
export const heartbeatDomain = (slug: string): string => `heartbeat:${slug}`

/**
 * Inserts a heartbeat and its `sites` row (kind `heartbeat`) inside the caller's transaction.
 * A slug in use fails on the unique index (`isDuplicateKey`).
 */
export async function insertHeartbeat({
  db,
  slug,
  settings,
  tokenHash,
  now
}: {
  db: Db
  slug: string
  settings: HeartbeatSettings
  tokenHash: string
  now: Date
}): Promise<HeartbeatRow> {
  const [siteId] = await db('sites').insert({
    domain: heartbeatDomain(slug),
    name: settings.name,
    kind: 'heartbeat',
    added_at: now,
    changed_at: now,
    status: 'unavailable'
  })
  await db('heartbeats').insert({
    site_id: siteId,
    slug,
    ...settingsColumns(settings),
    token_hash: tokenHash,
    open_runs: '[]',
    created_at: now,
    changed_at: now
  })
  return (await findHeartbeat({ db, slug })) as HeartbeatRow
}

export async function findHeartbeat({ db, slug }: { db: Db; slug: string }): Promise<HeartbeatRow | null> {
  const row = await db('heartbeats').where({ slug }).first('*')
  return row ? toHeartbeatRow(row) : null
}

/** Locks a heartbeat by slug until the transaction ends. */
export async function lockHeartbeat({ db, slug }: { db: Db; slug: string }): Promise<HeartbeatRow | null> {
  const row = await forUpdate(db, db('heartbeats').where({ slug }).first('*'))
  return row ? toHeartbeatRow(row) : null
}

/**
 * Locks the heartbeats ping tokens name (by their hashes) until the transaction ends; by hash,
 * missing ones left out. MySQL locks them in the unique index's order, the same in every
 * transaction, so batches of pings on several instances queue rather than deadlock.
 */
export async function lockHeartbeatsByTokens({
  db,
  tokenHashes
}: {
  db: Db
  tokenHashes: readonly string[]
}): Promise<Map<string, HeartbeatRow>> {
  const rows = new Map<string, HeartbeatRow>()
  if (tokenHashes.length === 0) return rows
  const unique = [...new Set(tokenHashes)].sort()
  const list = unique.map(() => '?').join(', ')
  // The unique index forced on MySQL, as in writeRowsById (heartbeat-writes.ts): a scan would lock rows of other pings.
  const found: unknown =
    engineOf(db) === 'mysql'
      ? (
          (await db.raw(
            `SELECT * FROM heartbeats FORCE INDEX (heartbeats_token_hash) WHERE token_hash IN (${list}) ORDER BY token_hash FOR UPDATE`,
            unique
          )) as unknown[]
        )[0]
      : await db.raw(`SELECT * FROM heartbeats WHERE token_hash IN (${list}) ORDER BY token_hash`, unique)
  for (const r of found as Array<Record<string, unknown>>) rows.set(String(r.token_hash), toHeartbeatRow(r))
  return rows
}

/** Heartbeats in slug order after `after`, at most `limit` plus one (the caller tells if there is more). */
export async function listHeartbeats({ db, after, limit }: { db: Db; after?: string; limit: number }): Promise<HeartbeatRow[]> {
  const q = db('heartbeats')
    .orderBy('slug')
    .limit(limit + 1)
  if (after !== undefined) q.where('slug', '>', after)
  return (await q.select('*')).map(toHeartbeatRow)
}

/** Every heartbeat, for /metrics and pages (bounded by how many an operator adds). */
export async function listAllHeartbeats({ db }: { db: Db }): Promise<HeartbeatRow[]> {
  return (await db('heartbeats').orderBy('slug').select('*')).map(toHeartbeatRow)
}

/**
 * Locks up to `limit` heartbeats whose next deadline is at or before `before`, soonest first,
 * passing over rows another transaction holds (`SKIP LOCKED`): instances sweeping at once each
 * get rows of their own, and a row is judged by one of them at a time.
 */
export async function lockOverdueHeartbeats({ db, before, limit }: { db: Db; before: Date; limit: number }): Promise<HeartbeatRow[]> {
  const query = db('heartbeats').where('next_deadline', '<=', before).orderBy('next_deadline').limit(limit).select('*')
  // SQLite has one writer at a time and no such clause.
  const rows = engineOf(db) === 'mysql' ? await query.forUpdate().skipLocked() : await query
  return rows.map(toHeartbeatRow)
}

/** Changes a heartbeat's settings (and its `sites` row's name). */
export async function writeHeartbeatSettings({
  db,
  row,
  settings,
  now
}: {
  db: Db
  row: HeartbeatRow
  settings: HeartbeatSettings
  now: Date
}): Promise<void> {
  await db('heartbeats')
    .where({ id: row.id })
    .update({ ...settingsColumns(settings), changed_at: now })
  await db('sites').where({ id: row.site_id }).update({ name: settings.name, changed_at: now })
}

export async function writeTokenHash({ db, id, tokenHash, now }: { db: Db; id: number; tokenHash: string; now: Date }): Promise<void> {
  await db('heartbeats').where({ id }).update({ token_hash: tokenHash, changed_at: now })
}

/**
 * Deletes a heartbeat and its pings; its `sites` row stays as history, marked removed, its domain
 * freed for a new heartbeat of the same slug.
 */
export async function deleteHeartbeat({ db, row, now }: { db: Db; row: HeartbeatRow; now: Date }): Promise<void> {
  await db('heartbeat_pings').where({ heartbeat_id: row.id }).delete()
  await db('heartbeats').where({ id: row.id }).delete()
  await db('sites')
    .where({ id: row.site_id })
    .update({ removed_at: now, changed_at: now, domain: `${heartbeatDomain(row.slug)}~${row.site_id}` })
}

/** A ping as kept: its kind, `rid`, the run it ended, its time. */
export interface PingRecord {
  kind: PingKind
  rid: string | null
  run_ms: number | null
  at: Date
}

/**
 * Keeps pings, in the order given (their ids follow it), in one statement written out here: Knex's
 * builder would compare every row's keys first.
 */
export async function insertPings({ db, pings }: { db: Db; pings: ReadonlyArray<PingRecord & { heartbeat_id: number }> }): Promise<void> {
  if (pings.length === 0) return
  await db.raw(
    `INSERT INTO heartbeat_pings (heartbeat_id, kind, rid, run_ms, at) VALUES ${pings.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
    pings.flatMap((p) => [p.heartbeat_id, p.kind, p.rid, p.run_ms, p.at])
  )
}

/** A heartbeat's newest pings, newest first. */
export async function listPings({ db, heartbeatId, limit }: { db: Db; heartbeatId: number; limit: number }): Promise<PingRecord[]> {
  const rows = await db('heartbeat_pings').where({ heartbeat_id: heartbeatId }).orderBy('id', 'desc').limit(limit).select('*')
  return rows.map((r) => ({
    kind: String(r.kind) as PingKind,
    rid: typeof r.rid === 'string' ? r.rid : null,
    run_ms: num(r.run_ms),
    at: toDate(r.at) as Date
  }))
}

/** Deletes pings older than `before`; returns how many. */
export async function prunePings({ db, before }: { db: Db; before: Date }): Promise<number> {
  return db('heartbeat_pings').where('at', '<', before).delete()
}

/** The states of the heartbeats owning the `sites` rows `siteIds` (a status page's), by site id. */
export async function listHeartbeatStates({ db, siteIds }: { db: Db; siteIds: readonly number[] }): Promise<Map<number, HeartbeatState>> {
  const states = new Map<number, HeartbeatState>()
  if (siteIds.length === 0) return states
  for (const r of await db('heartbeats')
    .whereIn('site_id', [...new Set(siteIds)])
    .select('site_id', 'state'))
    states.set(Number(r.site_id), String(r.state) as HeartbeatState)
  return states
}
