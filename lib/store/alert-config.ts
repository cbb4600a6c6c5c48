import type { ChannelKind } from '../rules/alert-channels.js'
import type { AlertEvent, AlertPolicy, PolicyFields } from '../rules/alert-policy.js'
import { toDate, type Db } from './db.js'

/** A channel's row; `secret` is the stored ciphertext (of a JSON object), never the secrets themselves. */
export interface ChannelRow {
  id: number
  name: string
  kind: ChannelKind
  config: Record<string, unknown>
  secret: string | null
  report_to: number | null
  failures: number
  failing_since: Date | null
  last_error: string | null
  refresh_at: Date | null
  created_at: Date
  changed_at: Date
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null)
const json = <T>(v: unknown, fallback: T): T => (typeof v === 'string' ? (JSON.parse(v) as T) : fallback)

export function toChannelRow(r: Record<string, unknown>): ChannelRow {
  return {
    id: Number(r.id),
    name: String(r.name),
    kind: String(r.kind) as ChannelKind,
    config: json(r.config, {}),
    secret: text(r.secret),
    report_to: r.report_to === null || r.report_to === undefined ? null : Number(r.report_to),
    failures: Number(r.failures ?? 0),
    failing_since: toDate(r.failing_since),
    last_error: text(r.last_error),
    refresh_at: toDate(r.refresh_at),
    created_at: toDate(r.created_at) as Date,
    changed_at: toDate(r.changed_at) as Date
  }
}

export async function insertChannel({
  db,
  name,
  kind,
  config,
  secret,
  reportTo,
  now
}: {
  db: Db
  name: string
  kind: ChannelKind
  config: Record<string, unknown>
  secret: string | null
  reportTo: number | null
  now: Date
}): Promise<ChannelRow> {
  const row = {
    name,
    kind,
    config: JSON.stringify(config),
    secret,
    report_to: reportTo,
    failures: 0,
    refresh_at: kind === 'alertmanager' ? now : null,
    created_at: now,
    changed_at: now
  }
  const [id] = await db('alert_channels').insert(row)
  return toChannelRow({ ...row, id, failing_since: null, last_error: null })
}

export async function updateChannel({
  db,
  id,
  fields,
  now
}: {
  db: Db
  id: number
  fields: { name?: string; config?: Record<string, unknown>; secret?: string | null; report_to?: number | null }
  now: Date
}): Promise<boolean> {
  const row: Record<string, unknown> = { changed_at: now }
  if (fields.name !== undefined) row.name = fields.name
  if (fields.config !== undefined) row.config = JSON.stringify(fields.config)
  if (fields.secret !== undefined) row.secret = fields.secret
  if (fields.report_to !== undefined) row.report_to = fields.report_to
  return (await db('alert_channels').where({ id }).update(row)) > 0
}

export async function listChannels({ db, ids }: { db: Db; ids?: readonly number[] }): Promise<ChannelRow[]> {
  const q = db('alert_channels').orderBy('id').select('*')
  if (ids !== undefined) q.whereIn('id', [...ids])
  return (await q).map(toChannelRow)
}

export async function findChannel({ db, id }: { db: Db; id: number }): Promise<ChannelRow | null> {
  const row = await db('alert_channels').where({ id }).first()
  return row ? toChannelRow(row) : null
}

/** Deletes a channel (its notifications and messages go with it) and takes it out of every policy and report; false when there was none. */
export async function deleteChannel({ db, id, now }: { db: Db; id: number; now: Date }): Promise<boolean> {
  return db.transaction(async (trx) => {
    for (const policy of await listPolicies({ db: trx })) {
      const channels = policy.channels.filter((c) => c !== id)
      const escalate = policy.escalate
        .map((s) => ({ ...s, channels: s.channels.filter((c) => c !== id) }))
        .filter((s) => s.channels.length > 0)
      if (channels.length !== policy.channels.length || JSON.stringify(escalate) !== JSON.stringify(policy.escalate))
        await trx('alert_policies')
          .where({ id: policy.id })
          .update({ channels: JSON.stringify(channels), escalate: JSON.stringify(escalate), changed_at: now })
    }
    await trx('alert_channels').where({ report_to: id }).update({ report_to: null })
    return (await trx('alert_channels').where({ id }).delete()) > 0
  })
}

/** Records an attempt's effect on a channel's health. */
export async function updateChannelHealth({
  db,
  id,
  failures,
  failingSince,
  lastError
}: {
  db: Db
  id: number
  failures: number
  failingSince: Date | null
  lastError: string | null
}): Promise<void> {
  await db('alert_channels').where({ id }).update({ failures, failing_since: failingSince, last_error: lastError })
}

function toPolicy(r: Record<string, unknown>): AlertPolicy {
  return {
    id: Number(r.id),
    name: String(r.name),
    channels: json<number[]>(r.channels, []),
    events: json<AlertEvent[]>(r.events, []),
    after_min: Number(r.after_min),
    remind_every_min: r.remind_every_min === null || r.remind_every_min === undefined ? null : Number(r.remind_every_min),
    escalate: json<AlertPolicy['escalate']>(r.escalate, []),
    on_resolved: Boolean(r.on_resolved),
    group_window_s: Number(r.group_window_s),
    is_default: r.is_default !== null && r.is_default !== undefined && Number(r.is_default) === 1
  }
}

function policyColumns(p: PolicyFields): Record<string, unknown> {
  return {
    name: p.name,
    channels: JSON.stringify(p.channels),
    events: JSON.stringify(p.events),
    after_min: p.after_min,
    remind_every_min: p.remind_every_min,
    escalate: JSON.stringify(p.escalate),
    on_resolved: p.on_resolved,
    group_window_s: p.group_window_s,
    is_default: p.is_default ? 1 : null
  }
}

/** Inserts a policy inside the caller's transaction; a new default one takes the place of the old. */
export async function insertPolicy({ db, policy, now }: { db: Db; policy: PolicyFields; now: Date }): Promise<AlertPolicy> {
  if (policy.is_default) await db('alert_policies').where({ is_default: 1 }).update({ is_default: null, changed_at: now })
  const [id] = await db('alert_policies').insert({ ...policyColumns(policy), created_at: now, changed_at: now })
  return { ...policy, id: Number(id) }
}

/** Replaces a policy's fields inside the caller's transaction; false when there is none. */
export async function updatePolicy({ db, id, policy, now }: { db: Db; id: number; policy: PolicyFields; now: Date }): Promise<boolean> {
  if (policy.is_default) await db('alert_policies').where({ is_default: 1 }).whereNot({ id }).update({ is_default: null, changed_at: now })
  return (
    (await db('alert_policies')
      .where({ id })
      .update({ ...policyColumns(policy), changed_at: now })) > 0
  )
}

export async function listPolicies({ db, ids }: { db: Db; ids?: readonly number[] }): Promise<AlertPolicy[]> {
  const q = db('alert_policies').orderBy('id').select('*')
  if (ids !== undefined) q.whereIn('id', [...ids])
  return (await q).map(toPolicy)
}

export async function findPolicy({ db, id }: { db: Db; id: number }): Promise<AlertPolicy | null> {
  const row = await db('alert_policies').where({ id }).first()
  return row ? toPolicy(row) : null
}

/** Deletes a policy (its alerts go with it) and detaches it from sites and pages; false when there was none. */
export async function deletePolicy({ db, id }: { db: Db; id: number }): Promise<boolean> {
  return db.transaction(async (trx) => {
    await trx('sites').where({ alert_policy_id: id }).update({ alert_policy_id: null })
    await trx('status_pages').where({ alert_policy_id: id }).update({ alert_policy_id: null })
    return (await trx('alert_policies').where({ id }).delete()) > 0
  })
}

/** How many sites and pages name each policy. */
export async function countAttachments({ db }: { db: Db }): Promise<Map<number, { sites: number; pages: number }>> {
  const out = new Map<number, { sites: number; pages: number }>()
  const entry = (id: number): { sites: number; pages: number } => {
    let e = out.get(id)
    if (!e) out.set(id, (e = { sites: 0, pages: 0 }))
    return e
  }
  const sites = await db('sites')
    .whereNull('removed_at')
    .whereNotNull('alert_policy_id')
    .groupBy('alert_policy_id')
    .select('alert_policy_id')
    .count({ n: '*' })
  for (const r of sites as Array<Record<string, unknown>>) entry(Number(r.alert_policy_id)).sites = Number(r.n)
  const pages = await db('status_pages')
    .whereNotNull('alert_policy_id')
    .groupBy('alert_policy_id')
    .select('alert_policy_id')
    .count({ n: '*' })
  for (const r of pages as Array<Record<string, unknown>>) entry(Number(r.alert_policy_id)).pages = Number(r.n)
  return out
}
