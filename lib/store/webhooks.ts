import type { Knex } from 'knex'
import { toDate, type Db } from './db.js'

/** A webhook's row; `secret` is the stored ciphertext, never the secret itself. */
export interface WebhookRow {
  id: number
  url: string
  /** Event types it wants; null: every type. */
  events: string[] | null
  /** Normalised domains it wants; null: every domain. */
  domains: string[] | null
  secret: string
  /** The last event id fanned out to it. */
  cursor: number
  created_at: Date
  disabled_at: Date | null
  disabled_reason: string | null
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed'

/** A delivery's row as the deliveries list shows it. */
export interface DeliveryRow {
  id: number
  webhook_id: number
  event_id: number
  type: string
  attempts: number
  status: DeliveryStatus
  last_http_code: number | null
  last_error: string | null
  next_attempt_at: Date
  created_at: Date
  delivered_at: Date | null
}

/** A delivery claimed for sending, with what sending it needs: its webhook and its event. */
export interface ClaimedDelivery {
  id: number
  webhook_id: number
  event_id: number
  type: string
  attempts: number
  url: string
  secret: string
  /** The event's payload (JSON text) and time; null once the event was pruned. */
  data: string | null
  event_at: Date | null
}

/** A delivery row to insert by the fan-out. */
export interface DeliveryInsert {
  webhookId: number
  eventId: number
  type: string
  at: Date
}

/** What an attempt changed, written only while the attempt's lease is still held. */
export interface AttemptOutcome {
  status: DeliveryStatus
  attempts: number
  last_http_code: number | null
  last_error: string | null
  next_attempt_at: Date
  delivered_at: Date | null
}

/** A nullable text column as a string (drivers hand back strings, or null). */
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null)
const jsonList = (v: unknown): string[] | null => {
  const raw = text(v)
  return raw === null ? null : (JSON.parse(raw) as string[])
}

function toWebhookRow(r: Record<string, unknown>): WebhookRow {
  return {
    id: Number(r.id),
    url: String(r.url),
    events: jsonList(r.events),
    domains: jsonList(r.domains),
    secret: String(r.secret),
    cursor: Number(r.cursor),
    created_at: toDate(r.created_at) as Date,
    disabled_at: toDate(r.disabled_at),
    disabled_reason: text(r.disabled_reason)
  }
}

const nullableNumber = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))

function toDeliveryRow(r: Record<string, unknown>): DeliveryRow {
  return {
    id: Number(r.id),
    webhook_id: Number(r.webhook_id),
    event_id: Number(r.event_id),
    type: String(r.type),
    attempts: Number(r.attempts),
    status: String(r.status) as DeliveryStatus,
    last_http_code: nullableNumber(r.last_http_code),
    last_error: text(r.last_error),
    next_attempt_at: toDate(r.next_attempt_at) as Date,
    created_at: toDate(r.created_at) as Date,
    delivered_at: toDate(r.delivered_at)
  }
}

export async function insertWebhook({
  db,
  url,
  events,
  domains,
  secret,
  cursor,
  now
}: {
  db: Db
  url: string
  events: readonly string[] | null
  domains: readonly string[] | null
  secret: string
  cursor: number
  now: Date
}): Promise<WebhookRow> {
  const row = {
    url,
    events: events === null ? null : JSON.stringify(events),
    domains: domains === null ? null : JSON.stringify(domains),
    secret,
    cursor,
    created_at: now
  }
  const [id] = await db('webhooks').insert(row)
  return toWebhookRow({ ...row, id, disabled_at: null, disabled_reason: null })
}

/** Every webhook, oldest first. */
export async function listWebhooks({ db }: { db: Db }): Promise<WebhookRow[]> {
  const rows = await db('webhooks').orderBy('id').select('*')
  return rows.map(toWebhookRow)
}

export async function findWebhook({ db, id }: { db: Db; id: number }): Promise<WebhookRow | null> {
  const row = await db('webhooks').where({ id }).first()
  return row ? toWebhookRow(row) : null
}

/** Deletes a webhook and its delivery log; false when there was none. */
export async function deleteWebhook({ db, id }: { db: Db; id: number }): Promise<boolean> {
  return db.transaction(async (trx) => {
    await trx('webhook_deliveries').where({ webhook_id: id }).delete()
    return (await trx('webhooks').where({ id }).delete()) > 0
  })
}

/** Marks a webhook disabled (once: the first reason stays); false when it already was, or is gone. */
export async function disableWebhook({ db, id, reason, now }: { db: Db; id: number; reason: string; now: Date }): Promise<boolean> {
  const changed = await db('webhooks').whereNull('disabled_at').where({ id }).update({ disabled_at: now, disabled_reason: reason })
  return changed > 0
}

/** Active webhooks whose cursor is below `latest`: the ones with events to fan out. */
export async function listWebhooksBehind({ db, latest }: { db: Db; latest: number }): Promise<WebhookRow[]> {
  const rows = await db('webhooks').whereNull('disabled_at').where('cursor', '<', latest).orderBy('id').select('*')
  return rows.map(toWebhookRow)
}

/** Rows per multi-row insert. */
const INSERT_CHUNK = 200

/** Inserts deliveries as `pending`, due at once; one that exists already (same webhook and event) is left alone. */
export async function insertDeliveries({ db, deliveries }: { db: Db; deliveries: readonly DeliveryInsert[] }): Promise<void> {
  const rows = deliveries.map((d) => ({
    webhook_id: d.webhookId,
    event_id: d.eventId,
    type: d.type,
    attempts: 0,
    status: 'pending',
    next_attempt_at: d.at,
    created_at: d.at
  }))
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db('webhook_deliveries')
      .insert(rows.slice(i, i + INSERT_CHUNK))
      .onConflict(['webhook_id', 'event_id'])
      .ignore()
  }
}

/** Moves a webhook's cursor from `from` to `to`; false when another writer moved it first. */
export async function moveCursor({ db, id, from, to }: { db: Db; id: number; from: number; to: number }): Promise<boolean> {
  return (await db('webhooks').where({ id, cursor: from }).update({ cursor: to })) > 0
}

/**
 * Claims up to `limit` due deliveries of active webhooks for `owner` until `until`, and returns
 * them with their webhook and event. The claim is a conditional UPDATE (pending, due, lease free
 * or expired), atomic per row on both engines: of several instances reading the same candidates,
 * one wins each row and the others skip it.
 */
export async function claimDueDeliveries({
  db,
  owner,
  now,
  until,
  limit
}: {
  db: Db
  owner: string
  now: Date
  until: Date
  limit: number
}): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return []
  const free = (q: Knex.QueryBuilder): void => {
    q.where('d.status', 'pending')
      .where('d.next_attempt_at', '<=', now)
      .where((w) => {
        w.whereNull('d.claimed_until').orWhere('d.claimed_until', '<=', now)
      })
  }
  const candidates = db('webhook_deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .whereNull('w.disabled_at')
    .orderBy('d.next_attempt_at')
    .limit(limit)
    .pluck('d.id')
  free(candidates)
  const ids = (await candidates).map(Number)
  if (ids.length === 0) return []
  const claim = db('webhook_deliveries as d').whereIn('d.id', ids)
  free(claim)
  await claim.update({ claimed_until: until, claimed_by: owner })
  const rows = await db('webhook_deliveries as d')
    .join('webhooks as w', 'w.id', 'd.webhook_id')
    .leftJoin('events as e', 'e.id', 'd.event_id')
    .whereIn('d.id', ids)
    .where('d.claimed_by', owner)
    .orderBy('d.next_attempt_at')
    .select('d.id', 'd.webhook_id', 'd.event_id', 'd.type', 'd.attempts', 'w.url', 'w.secret', 'e.data', { event_at: 'e.created_at' })
  return rows.map((r: Record<string, unknown>) => ({
    id: Number(r.id),
    webhook_id: Number(r.webhook_id),
    event_id: Number(r.event_id),
    type: String(r.type),
    attempts: Number(r.attempts),
    url: String(r.url),
    secret: String(r.secret),
    data: text(r.data),
    event_at: toDate(r.event_at)
  }))
}

/** Writes an attempt's outcome and frees the lease, if `owner` still holds it; false otherwise. */
export async function recordAttempt({
  db,
  id,
  owner,
  outcome
}: {
  db: Db
  id: number
  owner: string
  outcome: AttemptOutcome
}): Promise<boolean> {
  const changed = await db('webhook_deliveries')
    .where({ id, claimed_by: owner })
    .update({ ...outcome, claimed_until: null, claimed_by: null })
  return changed > 0
}

/** Frees a lease without an attempt (the sender stopped before it could send). */
export async function releaseClaim({ db, id, owner }: { db: Db; id: number; owner: string }): Promise<void> {
  await db('webhook_deliveries').where({ id, claimed_by: owner }).update({ claimed_until: null, claimed_by: null })
}

/** Ends every pending delivery of a webhook as `failed` with `error`; returns how many. */
export async function failPendingDeliveries({ db, webhookId, error }: { db: Db; webhookId: number; error: string }): Promise<number> {
  return db('webhook_deliveries')
    .where({ webhook_id: webhookId, status: 'pending' })
    .update({ status: 'failed', last_error: error, claimed_until: null, claimed_by: null })
}

/** A webhook's deliveries, newest first (by id), below `beforeId` when given; at most `limit`. */
export async function listDeliveries({
  db,
  webhookId,
  limit,
  beforeId
}: {
  db: Db
  webhookId: number
  limit: number
  beforeId?: number
}): Promise<DeliveryRow[]> {
  const q = db('webhook_deliveries').where({ webhook_id: webhookId }).orderBy('id', 'desc').limit(limit).select('*')
  if (beforeId !== undefined) q.where('id', '<', beforeId)
  return (await q).map(toDeliveryRow)
}

export async function findDelivery({ db, webhookId, id }: { db: Db; webhookId: number; id: number }): Promise<DeliveryRow | null> {
  const row = await db('webhook_deliveries').where({ id, webhook_id: webhookId }).first()
  return row ? toDeliveryRow(row) : null
}

/** Whether an event is still stored (events are pruned before the delivery log is). */
export async function eventExists({ db, id }: { db: Db; id: number }): Promise<boolean> {
  return (await db('events').where({ id }).first('id')) !== undefined
}

/** Puts a delivery back to `pending`, due at `now`, with its attempts counted from zero and any lease dropped. */
export async function resetDelivery({ db, id, now }: { db: Db; id: number; now: Date }): Promise<void> {
  await db('webhook_deliveries')
    .where({ id })
    .update({ status: 'pending', attempts: 0, next_attempt_at: now, claimed_until: null, claimed_by: null, delivered_at: null })
}

/** Deletes delivery rows created before `before` that are no longer pending; returns how many. */
export async function pruneDeliveries({ db, before }: { db: Db; before: Date }): Promise<number> {
  return db('webhook_deliveries').where('created_at', '<', before).whereNot('status', 'pending').delete()
}

/** Replaces a webhook's filters and, when given, its sealed secret; false when there is none. */
export async function updateWebhook({
  db,
  id,
  events,
  domains,
  secret
}: {
  db: Db
  id: number
  events: readonly string[] | null
  domains: readonly string[] | null
  secret?: string
}): Promise<boolean> {
  const row: Record<string, unknown> = {
    events: events === null ? null : JSON.stringify(events),
    domains: domains === null ? null : JSON.stringify(domains)
  }
  if (secret !== undefined) row.secret = secret
  return (await db('webhooks').where({ id }).update(row)) > 0
}
