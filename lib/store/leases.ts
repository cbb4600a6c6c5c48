import type { Knex } from 'knex'
import { chunks, ID_CHUNK } from './checks.js'
import { toDate, type Db } from './db.js'
import { PROBED_KINDS } from './sites.js'

/** A tracked site as a claim of its schedule locks it. */
export interface DueSite {
  id: number
  domain: string
  /** Its own check interval in seconds; null: CHECK_INTERVAL_S. */
  intervalS: number | null
  dueAt: Date
}

/** A site's schedule as its row holds it, with what its next due time is judged by. */
export interface DueTime {
  id: number
  domain: string
  intervalS: number | null
  dueAt: Date | null
  checkedAt: Date | null
  removed: boolean
}

/** A claim held by another instance, as a take-over locks it. */
export interface LeasedSite {
  id: number
  domain: string
  intervalS: number | null
  owner: string
  leaseUntil: Date
  checkedAt: Date | null
}

/** An instance's heartbeat. */
export interface InstanceBeat {
  id: string
  seenAt: Date
}

const intervalOf = (r: Record<string, unknown>): number | null => (r.interval_s === null ? null : Number(r.interval_s))

/**
 * Locks up to `limit` tracked sites due after `after` (if given) and at or before `before`, in due
 * order (`asc`, the default: soonest first), until the transaction `db` ends, passing over rows
 * another transaction holds (`SKIP LOCKED`): instances claiming at the same moment each get rows of
 * their own instead of queueing on one another. MySQL 8 and MariaDB 10.6 or later.
 */
export async function lockDueSites({
  db,
  after,
  before,
  limit,
  order = 'asc'
}: {
  db: Db
  after?: Date
  before: Date
  limit: number
  order?: 'asc' | 'desc'
}): Promise<DueSite[]> {
  if (limit <= 0) return []
  const query = db('sites').whereNull('removed_at').where('due_at', '<=', before).whereIn('kind', PROBED_KINDS)
  if (after !== undefined) query.where('due_at', '>', after)
  const rows = await query.orderBy('due_at', order).limit(limit).forUpdate().skipLocked().select('id', 'domain', 'interval_s', 'due_at')
  return rows.map((r) => ({ id: Number(r.id), domain: String(r.domain), intervalS: intervalOf(r), dueAt: toDate(r.due_at) as Date }))
}

const DUE_TIME_COLUMNS = ['id', 'domain', 'interval_s', 'due_at', 'checked_at', 'removed_at']

function toDueTime(r: Record<string, unknown>): DueTime {
  return {
    id: Number(r.id),
    domain: String(r.domain),
    intervalS: intervalOf(r),
    dueAt: toDate(r.due_at),
    checkedAt: toDate(r.checked_at),
    removed: r.removed_at !== null
  }
}

/**
 * The schedule of the sites whose rows changed (added, renamed, resumed, removed, their settings
 * changed: `changed_at`) at or after `changedSince`, removed ones included; of every tracked site when
 * `changedSince` is absent. Indexed (`sites_changed_at`): nothing changed costs one range probe.
 */
export async function listDueTimes({ db, changedSince }: { db: Db; changedSince?: Date }): Promise<DueTime[]> {
  const query = db('sites').whereIn('kind', PROBED_KINDS)
  if (changedSince === undefined) query.whereNull('removed_at')
  else query.where('changed_at', '>=', changedSince)
  return (await query.select(DUE_TIME_COLUMNS)).map(toDueTime)
}

/** Locks the tracked sites `ids` until the transaction `db` ends, passing over rows another holds, and returns their schedule. */
export async function lockDueTimes({ db, ids }: { db: Db; ids: readonly number[] }): Promise<DueTime[]> {
  const locked: DueTime[] = []
  for (const part of chunks(ids, ID_CHUNK)) {
    const rows = await db('sites')
      .whereIn('id', part)
      .whereNull('removed_at')
      .whereIn('kind', PROBED_KINDS)
      .forUpdate()
      .skipLocked()
      .select(DUE_TIME_COLUMNS)
    for (const r of rows) locked.push(toDueTime(r))
  }
  return locked
}

/** One statement per 500 rows setting each row's own value of some columns: `update ... set c = case id when ...`. */
async function updateEach(db: Db, rows: ReadonlyArray<{ id: number; values: Knex.Value[] }>, columns: string[], where = ''): Promise<void> {
  for (const part of chunks(rows, 500)) {
    const whens = part.map(() => 'when ? then ?').join(' ')
    const sets = columns.map(() => `?? = case ?? ${whens} end`).join(', ')
    const bindings: Knex.Value[] = []
    columns.forEach((column, i) => {
      bindings.push(column, 'id')
      for (const r of part) bindings.push(r.id, r.values[i] as Knex.Value)
    })
    await db.raw(`update ?? set ${sets} where ?? in (${part.map(() => '?').join(', ')})${where}`, [
      'sites',
      ...bindings,
      'id',
      ...part.map((r) => r.id)
    ])
  }
}

/** Gives each site its next due time and `owner` the claim of the check before it, until `leaseUntil`. */
export async function setLeases({
  db,
  owner,
  leases
}: {
  db: Db
  owner: string
  leases: ReadonlyArray<{ id: number; dueAt: Date; leaseUntil: Date }>
}): Promise<void> {
  if (leases.length === 0) return
  await updateEach(
    db,
    leases.map((l) => ({ id: l.id, values: [l.dueAt, l.leaseUntil, owner] })),
    ['due_at', 'lease_until', 'lease_owner']
  )
}

/** Tracked sites without a due time yet (added since the last look), up to `limit`. */
export async function listUnscheduledSites({
  db,
  limit
}: {
  db: Db
  limit: number
}): Promise<Array<{ id: number; domain: string; intervalS: number | null }>> {
  const rows = await db('sites')
    .whereNull('removed_at')
    .whereNull('due_at')
    .whereIn('kind', PROBED_KINDS)
    .limit(limit)
    .select('id', 'domain', 'interval_s')
  return rows.map((r) => ({ id: Number(r.id), domain: String(r.domain), intervalS: intervalOf(r) }))
}

/** Sets the first due time of sites that have none yet; a site another instance scheduled meanwhile keeps its own. */
export async function setFirstDueTimes({ db, sites }: { db: Db; sites: ReadonlyArray<{ id: number; dueAt: Date }> }): Promise<void> {
  if (sites.length === 0) return
  await updateEach(
    db,
    sites.map((s) => ({ id: s.id, values: [s.dueAt] })),
    ['due_at'],
    ' and `due_at` is null'
  )
}

/** Moves each site's due time to its own value, claiming nothing. */
export async function setDueTimes({ db, sites }: { db: Db; sites: ReadonlyArray<{ id: number; dueAt: Date }> }): Promise<void> {
  if (sites.length === 0) return
  await updateEach(
    db,
    sites.map((s) => ({ id: s.id, values: [s.dueAt] })),
    ['due_at']
  )
}

/** Locks the claims of `owners` still running after `after` (their checks may not have run), until the transaction ends. */
export async function lockLeasesOf({
  db,
  owners,
  after,
  limit
}: {
  db: Db
  owners: readonly string[]
  after: Date
  limit: number
}): Promise<LeasedSite[]> {
  if (owners.length === 0) return []
  const rows = await db('sites')
    .whereIn('lease_owner', owners)
    .where('lease_until', '>', after)
    .whereNull('removed_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .select('id', 'domain', 'interval_s', 'lease_owner', 'lease_until', 'checked_at')
  return rows.map((r) => ({
    id: Number(r.id),
    domain: String(r.domain),
    intervalS: intervalOf(r),
    owner: String(r.lease_owner),
    leaseUntil: toDate(r.lease_until) as Date,
    checkedAt: toDate(r.checked_at)
  }))
}

/** Hands the claims of the sites `ids` to `owner`, leaving their due times as they are. */
export async function takeLeases({ db, ids, owner }: { db: Db; ids: readonly number[]; owner: string }): Promise<void> {
  for (const part of chunks(ids, ID_CHUNK)) await db('sites').whereIn('id', part).update({ lease_owner: owner })
}

/**
 * Of the sites `ids`, the ones whose claim `owner` still holds, locked until the transaction ends:
 * after a spell without the database, an instance learns which of its claims it may keep.
 */
export async function lockOwnLeases({ db, ids, owner }: { db: Db; ids: readonly number[]; owner: string }): Promise<number[]> {
  const kept: number[] = []
  for (const part of chunks(ids, ID_CHUNK)) {
    const rows = await db('sites').whereIn('id', part).where({ lease_owner: owner }).whereNull('removed_at').forUpdate().select('id')
    for (const r of rows) kept.push(Number(r.id))
  }
  return kept
}

/** Records that instance `id` is alive at `now` (started at `startedAt`). */
export async function beat({ db, id, startedAt, now }: { db: Db; id: string; startedAt: Date; now: Date }): Promise<void> {
  await db('instances').insert({ id, started_at: startedAt, seen_at: now }).onConflict('id').merge(['seen_at'])
}

/** Every instance's last heartbeat. */
export async function listInstances({ db }: { db: Db }): Promise<InstanceBeat[]> {
  const rows = await db('instances').select('id', 'seen_at')
  return rows.map((r) => ({ id: String(r.id), seenAt: toDate(r.seen_at) as Date }))
}

/** Says instance `id` is gone: its heartbeat is set back to `seenAt` (long enough ago to count as dead), so the others take its claims over at once. */
export async function retireInstance({ db, id, now }: { db: Db; id: string; now: Date }): Promise<void> {
  await db('instances').where({ id }).update({ seen_at: now })
}

/** Forgets the instances last seen before `before` (their claims have all lapsed). */
export async function forgetInstances({ db, ids, before }: { db: Db; ids: readonly string[]; before: Date }): Promise<void> {
  if (ids.length === 0) return
  await db('instances').whereIn('id', ids).where('seen_at', '<', before).delete()
}
