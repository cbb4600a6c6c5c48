import type { AlertKind, AlertProgress, StepWhat } from '../rules/alert-timeline.js'
import { chunks, ID_CHUNK } from './checks.js'
import { engineOf, toDate, type Db } from './db.js'

/** What an alert is about, as its messages name it. */
export interface AlertSubject {
  /** The monitor's kind: `http` for a web site, `heartbeat`, ... */
  monitor: string
  domain: string | null
  slug: string | null
  name: string
}

export interface AlertRow extends AlertProgress {
  id: number
  policy_id: number
  site_id: number
  kind: AlertKind
  dedup: string
  subject: AlertSubject
  detail: string | null
  started_at: Date
  ended_at: Date | null
  next_due_at: Date | null
}

/** A new alert, due at once. */
export interface AlertInsert {
  policy_id: number
  site_id: number
  kind: AlertKind
  dedup: string
  subject: AlertSubject
  detail: string | null
  started_at: Date
  ended_at: Date | null
}

function toAlertRow(r: Record<string, unknown>): AlertRow {
  return {
    id: Number(r.id),
    policy_id: Number(r.policy_id),
    site_id: Number(r.site_id),
    kind: String(r.kind) as AlertKind,
    dedup: String(r.dedup),
    subject: JSON.parse(String(r.subject)) as AlertSubject,
    detail: typeof r.detail === 'string' ? r.detail : null,
    started_at: toDate(r.started_at) as Date,
    ended_at: toDate(r.ended_at),
    opened_at: toDate(r.opened_at),
    reminders: Number(r.reminders),
    escalated: Number(r.escalated),
    reached: JSON.parse(String(r.reached)) as number[],
    done: Boolean(r.done),
    next_due_at: toDate(r.next_due_at)
  }
}

/** The last event id turned into alerts. */
export async function readAlertCursor({ db }: { db: Db }): Promise<number> {
  const row = await db('alert_cursor').where({ id: 1 }).first('last_event_id')
  return row ? Number(row.last_event_id) : 0
}

/** Moves the cursor from `from` to `to`; false when another writer moved it first. */
export async function moveAlertCursor({ db, from, to }: { db: Db; from: number; to: number }): Promise<boolean> {
  return (await db('alert_cursor').where({ id: 1, last_event_id: from }).update({ last_event_id: to })) > 0
}

const INSERT_CHUNK = 200

/** Inserts alerts due at `now`; one that exists already (same policy and dedup key) is left alone. */
export async function insertAlerts({ db, alerts, now }: { db: Db; alerts: readonly AlertInsert[]; now: Date }): Promise<void> {
  const rows = alerts.map((a) => ({
    ...a,
    subject: JSON.stringify(a.subject),
    reminders: 0,
    escalated: 0,
    reached: '[]',
    done: false,
    next_due_at: now,
    created_at: now
  }))
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db('alerts')
      .insert(rows.slice(i, i + INSERT_CHUNK))
      .onConflict(['policy_id', 'dedup'])
      .ignore()
  }
}

/** Ends a site's alerts of `kind` still going (those of `dedup` only, when given), due at `now` to say so. */
export async function endAlerts({
  db,
  siteId,
  kind,
  dedup,
  endedAt,
  now
}: {
  db: Db
  siteId: number
  kind: AlertKind
  dedup: string | null
  endedAt: Date
  now: Date
}): Promise<number> {
  const q = db('alerts').where({ site_id: siteId, kind, done: false }).whereNull('ended_at')
  if (dedup !== null) q.where({ dedup })
  return q.update({ ended_at: endedAt, next_due_at: now })
}

/**
 * Takes up to `limit` alerts due at `now` inside the transaction `db`, locked until it ends; on
 * MySQL rows another instance holds are skipped, SQLite has one writer at a time.
 */
export async function lockDueAlerts({ db, now, limit }: { db: Db; now: Date; limit: number }): Promise<AlertRow[]> {
  const q = db('alerts').where('next_due_at', '<=', now).orderBy('next_due_at').limit(limit).select('*')
  const rows = engineOf(db) === 'mysql' ? await q.forUpdate().skipLocked() : await q
  return rows.map(toAlertRow)
}

export async function saveAlertProgress({
  db,
  id,
  progress,
  next
}: {
  db: Db
  id: number
  progress: AlertProgress
  next: Date | null
}): Promise<void> {
  await db('alerts')
    .where({ id })
    .update({
      opened_at: progress.opened_at,
      reminders: progress.reminders,
      escalated: progress.escalated,
      reached: JSON.stringify(progress.reached),
      done: progress.done,
      next_due_at: progress.done ? null : next
    })
}

/** A notification to insert: a step of an alert, for one channel. */
export interface NotificationInsert {
  alert_id: number
  policy_id: number
  channel_id: number
  step: string
  what: StepWhat
  created_at: Date
}

/** Inserts notifications; one that exists already (same alert, step and channel) is left alone. */
export async function insertNotifications({ db, rows }: { db: Db; rows: readonly NotificationInsert[] }): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db('alert_notifications')
      .insert(rows.slice(i, i + INSERT_CHUNK))
      .onConflict(['alert_id', 'step', 'channel_id'])
      .ignore()
  }
}

/** Channels with notifications not yet in a message. */
export async function channelsWithPending({ db }: { db: Db }): Promise<number[]> {
  const rows = await db('alert_notifications').whereNull('message_id').distinct('channel_id')
  return rows.map((r: { channel_id: unknown }) => Number(r.channel_id))
}

/** A notification waiting for its message, with its alert. */
export interface PendingItem {
  id: number
  policy_id: number
  step: string
  what: StepWhat
  at: Date
  alert: AlertRow
}

/** A channel's notifications not yet in a message, oldest first. */
export async function listPendingNotifications({ db, channelId }: { db: Db; channelId: number }): Promise<PendingItem[]> {
  const rows = await db('alert_notifications as n')
    .join('alerts as a', 'a.id', 'n.alert_id')
    .where('n.channel_id', channelId)
    .whereNull('n.message_id')
    .orderBy('n.id')
    .select('a.*', { n_id: 'n.id', n_step: 'n.step', n_what: 'n.what', n_at: 'n.created_at' })
  return rows.map((r: Record<string, unknown>) => {
    const alert = toAlertRow(r)
    return {
      id: Number(r.n_id),
      policy_id: alert.policy_id,
      step: String(r.n_step),
      what: String(r.n_what) as StepWhat,
      at: toDate(r.n_at) as Date,
      alert
    }
  })
}

/** The incident each alert already belongs to on a channel (from its earlier notifications there). */
export async function incidentsOf({
  db,
  channelId,
  alertIds
}: {
  db: Db
  channelId: number
  alertIds: readonly number[]
}): Promise<Map<number, string>> {
  const out = new Map<number, string>()
  for (const part of chunks([...new Set(alertIds)], ID_CHUNK)) {
    const rows = await db('alert_notifications')
      .where({ channel_id: channelId })
      .whereIn('alert_id', part)
      .whereNotNull('incident')
      .orderBy('id')
      .select('alert_id', 'incident')
    for (const r of rows) if (!out.has(Number(r.alert_id))) out.set(Number(r.alert_id), String(r.incident))
  }
  return out
}

/** Of an incident's alerts on a channel, how many have not ended (other than `except`). */
export async function openInIncident({
  db,
  channelId,
  incident,
  except
}: {
  db: Db
  channelId: number
  incident: string
  except: readonly number[]
}): Promise<number> {
  const row = (await db('alert_notifications as n')
    .join('alerts as a', 'a.id', 'n.alert_id')
    .where({ 'n.channel_id': channelId, 'n.incident': incident })
    .whereNull('a.ended_at')
    .whereNotIn('a.id', [...except, 0])
    .countDistinct({ n: 'a.id' })
    .first()) as { n?: unknown } | undefined
  return Number(row?.n ?? 0)
}

/** Puts notifications into a message, each with its incident key. */
export async function assignMessage({
  db,
  messageId,
  incidents
}: {
  db: Db
  messageId: number
  incidents: ReadonlyMap<number, string>
}): Promise<void> {
  const byIncident = new Map<string, number[]>()
  for (const [id, incident] of incidents) {
    const list = byIncident.get(incident)
    if (list) list.push(id)
    else byIncident.set(incident, [id])
  }
  for (const [incident, ids] of byIncident)
    for (const part of chunks(ids, ID_CHUNK))
      await db('alert_notifications').whereIn('id', part).update({ message_id: messageId, incident })
}

/** The alerts going on (opened, not ended) that have reached a channel: what an Alertmanager must keep hearing. */
export async function firingOnChannel({ db, channelId }: { db: Db; channelId: number }): Promise<AlertRow[]> {
  const ids = db('alert_notifications').where({ channel_id: channelId }).whereNotNull('message_id').distinct('alert_id')
  const rows = await db('alerts').whereIn('id', ids).whereNull('ended_at').whereNotNull('opened_at').orderBy('id').select('*')
  return rows.map(toAlertRow)
}

/** Deletes finished alerts made before `before` (their notifications go with them); returns how many. */
export async function pruneAlerts({ db, before }: { db: Db; before: Date }): Promise<number> {
  return db('alerts').where({ done: true }).where('created_at', '<', before).delete()
}
