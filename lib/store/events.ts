import { toDate, type Db } from './db.js'

/** An event's row as the store hands it out: the payload still as its stored JSON text. */
export interface EventRow {
  id: number
  type: string
  site_id: number | null
  data: string
  created_at: Date
}

/** An event to append, its payload already serialised. */
export interface EventInsert {
  type: string
  siteId: number | null
  data: string
  at: Date
}

function toEventRow(r: Record<string, unknown>): EventRow {
  return {
    id: Number(r.id),
    type: String(r.type),
    site_id: r.site_id === null ? null : Number(r.site_id),
    data: String(r.data),
    created_at: toDate(r.created_at) as Date
  }
}

/** Rows per multi-row insert. */
const INSERT_CHUNK = 200

/**
 * Appends events inside the caller's transaction `db` and returns their rows. The sequence row is
 * updated first and stays locked until that transaction ends, so transactions that append commit
 * in the order of their ids: call this last in a transaction, after its other locks, to keep it short.
 */
export async function appendEvents({ db, events }: { db: Db; events: readonly EventInsert[] }): Promise<EventRow[]> {
  if (events.length === 0) return []
  if (!db.isTransaction) throw new Error('appendEvents runs inside a transaction')
  await db('event_sequence').where({ id: 1 }).increment('last_id', events.length)
  const seq = await db('event_sequence').where({ id: 1 }).first('last_id')
  const first = Number(seq.last_id) - events.length + 1
  const rows = events.map((e, i) => ({ id: first + i, type: e.type, site_id: e.siteId, data: e.data, created_at: e.at }))
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) await db('events').insert(rows.slice(i, i + INSERT_CHUNK))
  return rows.map((r) => ({ ...r }))
}

/** Events after `afterId`, oldest first, at most `limit`. */
export async function listEventsAfter({ db, afterId, limit }: { db: Db; afterId: number; limit: number }): Promise<EventRow[]> {
  const rows = await db('events').where('id', '>', afterId).orderBy('id').limit(limit).select('*')
  return rows.map(toEventRow)
}

/** The newest event id committed so far (0 before any event). */
export async function latestEventId({ db }: { db: Db }): Promise<number> {
  const row = await db('event_sequence').where({ id: 1 }).first('last_id')
  return row ? Number(row.last_id) : 0
}

/** The oldest event id still stored, or null when none is. */
export async function oldestEventId({ db }: { db: Db }): Promise<number | null> {
  const row = await db('events').min({ id: 'id' }).first()
  return row?.id === null || row?.id === undefined ? null : Number(row.id)
}

/** A site's events, newest first, at most `limit`. */
export async function listSiteEvents({ db, siteId, limit }: { db: Db; siteId: number; limit: number }): Promise<EventRow[]> {
  const rows = await db('events').where({ site_id: siteId }).orderBy('id', 'desc').limit(limit).select('*')
  return rows.map(toEventRow)
}

/** Deletes events created before `before`; returns how many. */
export async function pruneEvents({ db, before }: { db: Db; before: Date }): Promise<number> {
  return db('events').where('created_at', '<', before).delete()
}
