import type { Knex } from 'knex'
import { chunks, ID_CHUNK } from './checks.js'
import { toDate, type Db } from './db.js'

/** A tracked site as a claim of its schedule locks it. */
export interface DueSite {
  id: number
  domain: string
  dueAt: Date
}

/** A claim held by another instance, as a take-over locks it. */
export interface LeasedSite {
  id: number
  domain: string
  owner: string
  leaseUntil: Date
  checkedAt: Date | null
}

/** An instance's heartbeat. */
export interface InstanceBeat {
  id: string
  seenAt: Date
}

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
  const query = db('sites').whereNull('removed_at').where('due_at', '<=', before)
  if (after !== undefined) query.where('due_at', '>', after)
  const rows = await query.orderBy('due_at', order).limit(limit).forUpdate().skipLocked().select('id', 'domain', 'due_at')
  return rows.map((r) => ({ id: Number(r.id), domain: String(r.domain), dueAt: toDate(r.due_at) as Date }))
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
export async function listUnscheduledSites({ db, limit }: { db: Db; limit: number }): Promise<Array<{ id: number; domain: string }>> {
  const rows = await db('sites').whereNull('removed_at').whereNull('due_at').limit(limit).select('id', 'domain')
  return rows.map((r) => ({ id: Number(r.id), domain: String(r.domain) }))
}

/**
 * Forgets the due times set further ahead than `after` (set under a longer CHECK_INTERVAL_S than the
 * one now in force), so that those sites are scheduled again at their phase in the current interval.
 * Returns how many. Indexed (`sites_due_at`): nothing to do costs one range probe.
 */
export async function forgetDueTimesAfter({ db, after }: { db: Db; after: Date }): Promise<number> {
  return db('sites').whereNull('removed_at').where('due_at', '>', after).update({ due_at: null })
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
    .select('id', 'domain', 'lease_owner', 'lease_until', 'checked_at')
  return rows.map((r) => ({
    id: Number(r.id),
    domain: String(r.domain),
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
