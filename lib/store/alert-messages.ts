import type { Knex } from 'knex'
import { toDate, type Db } from './db.js'

/** What a message is: an alert (one policy's group), a summary (what the rate bound held back), a test, a channel's failing, an Alertmanager re-send. */
export type MessageKind = 'alert' | 'summary' | 'test' | 'failing' | 'refresh'
export type MessageStatus = 'pending' | 'delivered' | 'failed'

export interface MessageRow {
  id: number
  channel_id: number
  policy_id: number | null
  kind: MessageKind
  title: string
  items: number
  /** The content (JSON text), rendered per channel kind at each attempt. */
  body: string
  status: MessageStatus
  attempts: number
  last_http_code: number | null
  last_error: string | null
  answer: string | null
  next_attempt_at: Date
  created_at: Date
  delivered_at: Date | null
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null)
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))

function toMessageRow(r: Record<string, unknown>): MessageRow {
  return {
    id: Number(r.id),
    channel_id: Number(r.channel_id),
    policy_id: num(r.policy_id),
    kind: String(r.kind) as MessageKind,
    title: String(r.title),
    items: Number(r.items),
    body: String(r.body),
    status: String(r.status) as MessageStatus,
    attempts: Number(r.attempts),
    last_http_code: num(r.last_http_code),
    last_error: text(r.last_error),
    answer: text(r.answer),
    next_attempt_at: toDate(r.next_attempt_at) as Date,
    created_at: toDate(r.created_at) as Date,
    delivered_at: toDate(r.delivered_at)
  }
}

/** Kinds that count against a channel's messages a minute. */
const COUNTED: readonly MessageKind[] = ['alert', 'summary', 'failing']

export async function insertMessage({
  db,
  channelId,
  policyId,
  kind,
  title,
  items,
  body,
  now
}: {
  db: Db
  channelId: number
  policyId: number | null
  kind: MessageKind
  title: string
  items: number
  body: string
  now: Date
}): Promise<number> {
  const [id] = await db('alert_messages').insert({
    channel_id: channelId,
    policy_id: policyId,
    kind,
    title: title.slice(0, 300),
    items,
    body,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    created_at: now
  })
  return Number(id)
}

/** When each policy's last message to the channel was made, and the channel's messages of the last minute. */
export async function channelHistory({
  db,
  channelId,
  now
}: {
  db: Db
  channelId: number
  now: Date
}): Promise<{ lastByPolicy: Map<number, Date>; recent: Date[] }> {
  const last = await db('alert_messages')
    .where({ channel_id: channelId, kind: 'alert' })
    .groupBy('policy_id')
    .select('policy_id')
    .max({ at: 'created_at' })
  const lastByPolicy = new Map<number, Date>()
  for (const r of last as Array<Record<string, unknown>>) lastByPolicy.set(Number(r.policy_id), toDate(r.at) as Date)
  const recent = await db('alert_messages')
    .where({ channel_id: channelId })
    .whereIn('kind', [...COUNTED])
    .where('created_at', '>', new Date(now.getTime() - 60_000))
    .pluck('created_at')
  return { lastByPolicy, recent: recent.map((v: unknown) => toDate(v) as Date) }
}

/** Pending messages looked at per claim: the heads of that many channels' queues at most. */
const SCAN = 5000

/**
 * Claims, for `owner` until `until`, the oldest pending message of each channel whose turn it is
 * (due, its lease free or expired): a channel's messages go one at a time, in order. The claim is a
 * conditional UPDATE, so of several instances one wins each message.
 */
export async function claimChannelHeads({
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
}): Promise<MessageRow[]> {
  if (limit <= 0) return []
  const pending = await db('alert_messages')
    .where({ status: 'pending' })
    .orderBy('id')
    .limit(SCAN)
    .select('id', 'channel_id', 'next_attempt_at', 'claimed_until')
  const seen = new Set<number>()
  const due: number[] = []
  for (const r of pending) {
    const channel = Number(r.channel_id)
    if (seen.has(channel)) continue
    seen.add(channel)
    const claimed = toDate(r.claimed_until)
    if ((toDate(r.next_attempt_at) as Date) <= now && (claimed === null || claimed <= now)) due.push(Number(r.id))
    if (due.length >= limit) break
  }
  if (due.length === 0) return []
  const free = (q: Knex.QueryBuilder): Knex.QueryBuilder =>
    q.where({ status: 'pending' }).where((w) => {
      w.whereNull('claimed_until').orWhere('claimed_until', '<=', now)
    })
  await free(db('alert_messages').whereIn('id', due)).update({ claimed_until: until, claimed_by: owner })
  const rows = await db('alert_messages').whereIn('id', due).where({ claimed_by: owner }).orderBy('id').select('*')
  return rows.map(toMessageRow)
}

/** What an attempt changed, written only while its lease is still held. */
export interface MessageOutcome {
  status: MessageStatus
  attempts: number
  last_http_code: number | null
  last_error: string | null
  answer: string | null
  next_attempt_at: Date
  delivered_at: Date | null
}

export async function recordMessageAttempt({
  db,
  id,
  owner,
  outcome
}: {
  db: Db
  id: number
  owner: string
  outcome: MessageOutcome
}): Promise<boolean> {
  const changed = await db('alert_messages')
    .where({ id, claimed_by: owner })
    .update({
      ...outcome,
      last_error: outcome.last_error?.slice(0, 300) ?? null,
      answer: outcome.answer?.slice(0, 300) ?? null,
      claimed_until: null,
      claimed_by: null
    })
  return changed > 0
}

/** Frees a lease without an attempt (the sender stopped before it could send). */
export async function releaseMessageClaim({ db, id, owner }: { db: Db; id: number; owner: string }): Promise<void> {
  await db('alert_messages').where({ id, claimed_by: owner }).update({ claimed_until: null, claimed_by: null })
}

/**
 * Frees the leases an earlier life of this instance held (its name, another suffix): it died
 * without recording them, and nobody else will send them before the leases run out.
 */
export async function releaseEarlierClaims({ db, instance, owner }: { db: Db; instance: string; owner: string }): Promise<number> {
  return db('alert_messages')
    .where('claimed_by', 'like', `${instance.replace(/[\\%_]/g, (c) => `\\${c}`)}:%`)
    .whereNot({ claimed_by: owner })
    .update({ claimed_until: null, claimed_by: null })
}

/** A channel's messages, newest first, below `beforeId` when given. */
export async function listMessages({
  db,
  channelId,
  limit,
  beforeId
}: {
  db: Db
  channelId: number
  limit: number
  beforeId?: number
}): Promise<MessageRow[]> {
  const q = db('alert_messages').where({ channel_id: channelId }).orderBy('id', 'desc').limit(limit).select('*')
  if (beforeId !== undefined) q.where('id', '<', beforeId)
  return (await q).map(toMessageRow)
}

/** Records a message sent at once (a test), with its outcome. */
export async function insertSentMessage({
  db,
  channelId,
  title,
  body,
  outcome,
  now
}: {
  db: Db
  channelId: number
  title: string
  body: string
  outcome: Omit<MessageOutcome, 'next_attempt_at'>
  now: Date
}): Promise<number> {
  const [id] = await db('alert_messages').insert({
    channel_id: channelId,
    policy_id: null,
    kind: 'test',
    title: title.slice(0, 300),
    items: 0,
    body,
    ...outcome,
    last_error: outcome.last_error?.slice(0, 300) ?? null,
    answer: outcome.answer?.slice(0, 300) ?? null,
    next_attempt_at: now,
    created_at: now
  })
  return Number(id)
}

/** Whether the channel has a pending message of `kind`. */
export async function hasPending({ db, channelId, kind }: { db: Db; channelId: number; kind: MessageKind }): Promise<boolean> {
  return (await db('alert_messages').where({ channel_id: channelId, kind, status: 'pending' }).first('id')) !== undefined
}

/** Alertmanager channels whose re-send is due; each is moved to `next` by whoever takes it. */
export async function takeDueRefreshes({ db, now, next }: { db: Db; now: Date; next: Date }): Promise<number[]> {
  const rows = await db('alert_channels').where({ kind: 'alertmanager' }).where('refresh_at', '<=', now).select('id', 'refresh_at')
  const taken: number[] = []
  for (const r of rows) {
    const moved = await db('alert_channels').where({ id: r.id, refresh_at: r.refresh_at }).update({ refresh_at: next })
    if (moved > 0) taken.push(Number(r.id))
  }
  return taken
}

/** Pending messages per channel, for health. */
export async function countPending({ db }: { db: Db }): Promise<Map<number, number>> {
  const rows = await db('alert_messages').where({ status: 'pending' }).groupBy('channel_id').select('channel_id').count({ n: '*' })
  return new Map(rows.map((r: Record<string, unknown>) => [Number(r.channel_id), Number(r.n)]))
}

/** Deletes messages made before `before` that are no longer pending; returns how many. */
export async function pruneMessages({ db, before }: { db: Db; before: Date }): Promise<number> {
  return db('alert_messages').where('created_at', '<', before).whereNot('status', 'pending').delete()
}
