import type { HeartbeatState, OpenRun, PingKind } from '../rules/heartbeat.js'
import { toDate, type Db } from './db.js'
import { forUpdate } from './sites.js'

/** A heartbeat's row, its `sites` row's id included. */
export interface HeartbeatRow {
  id: number
  site_id: number
  slug: string
  name: string
  every_s: number
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
  every_s: number
  grace_s: number
  max_runtime_s: number | null
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
    every_s: Number(r.every_s),
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
    ...settings,
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

/** Locks the heartbeat a ping token names (by its hash) until the transaction ends. */
export async function lockHeartbeatByToken({ db, tokenHash }: { db: Db; tokenHash: string }): Promise<HeartbeatRow | null> {
  const row = await forUpdate(db, db('heartbeats').where({ token_hash: tokenHash }).first('*'))
  return row ? toHeartbeatRow(row) : null
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
  const rows = db.client.config.client === 'mysql2' ? await query.forUpdate().skipLocked() : await query
  return rows.map(toHeartbeatRow)
}

/** Writes what the rules left, and the last message when a ping carried one. */
export async function writeHeartbeatProgress({
  db,
  id,
  progress,
  message,
  now
}: {
  db: Db
  id: number
  progress: HeartbeatProgress
  message?: string | null
  now: Date
}): Promise<void> {
  await db('heartbeats')
    .where({ id })
    .update({
      ...progress,
      open_runs: JSON.stringify(progress.open_runs),
      ...(message === undefined ? {} : { last_message: message }),
      changed_at: now
    })
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
    .update({ ...settings, changed_at: now })
  await db('sites').where({ id: row.site_id }).update({ name: settings.name, changed_at: now })
}

export async function writeTokenHash({ db, id, tokenHash, now }: { db: Db; id: number; tokenHash: string; now: Date }): Promise<void> {
  await db('heartbeats').where({ id }).update({ token_hash: tokenHash, changed_at: now })
}

/** Mirrors a heartbeat's state on its `sites` row, where uptime, pages and alerts read it. */
export async function writeHeartbeatSite({
  db,
  siteId,
  status,
  at,
  firstPing
}: {
  db: Db
  siteId: number
  status: 'up' | 'down' | 'unavailable'
  at: Date | null
  firstPing: boolean
}): Promise<void> {
  await db('sites')
    .where({ id: siteId })
    .update({ status, checked_at: at, ...(firstPing ? { first_checked_at: at } : {}) })
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

export async function insertPing({ db, heartbeatId, ping }: { db: Db; heartbeatId: number; ping: PingRecord }): Promise<void> {
  await db('heartbeat_pings').insert({ heartbeat_id: heartbeatId, ...ping })
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
