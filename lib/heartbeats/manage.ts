import { randomBytes } from 'node:crypto'
import { announced, appendToOutbox } from '../events/outbox.js'
import { heartbeatOutageEvent } from '../rules/events.js'
import type { HeartbeatSchedule } from '../rules/heartbeat.js'
import { outageEndOnRemoval } from '../rules/outages.js'
import type { Db } from '../store/db.js'
import {
  deleteHeartbeat,
  insertHeartbeat,
  lockHeartbeat,
  writeHeartbeatSettings,
  writeTokenHash,
  type HeartbeatRow,
  type HeartbeatSettings
} from '../store/heartbeats.js'
import { closeOutage, listOpenOutages } from '../store/outages.js'
import { removeSiteFromPages } from '../store/status-pages.js'
import { tokenHashOf } from './pings.js'
import { clockOf, settleHeartbeat } from './settle.js'

/** A new ping token: 192 random bits, base64url (32 characters). Shown once; only its hash is kept. */
export const newPingToken = (): string => randomBytes(24).toString('base64url')

/** A ping token as a route accepts it: what {@link newPingToken} makes. */
export const PING_TOKEN = /^[A-Za-z0-9_-]{32}$/

/** Creates a heartbeat; returns it with its token, shown this once. A slug in use throws (`isDuplicateKey`). */
export async function addHeartbeat({
  db,
  slug,
  settings,
  now
}: {
  db: Db
  slug: string
  settings: HeartbeatSettings
  now: Date
}): Promise<{ row: HeartbeatRow; token: string }> {
  const token = newPingToken()
  const row = await db.transaction((trx) => insertHeartbeat({ db: trx, slug, settings, tokenHash: tokenHashOf(token), now }))
  return { row, token }
}

/** A change as the API and the operator tool take it (heartbeatPatch, judged): its schedule nested. */
export interface HeartbeatChange {
  name?: string
  schedule?: HeartbeatSchedule
  grace_s?: number
  max_runtime_s?: number | null
  paused?: boolean
}

/** The stored settings a change sets: the keys it gives. */
export function changedSettings(change: HeartbeatChange): Partial<HeartbeatSettings> & { paused?: boolean } {
  return {
    ...(change.name === undefined ? {} : { name: change.name }),
    ...(change.schedule === undefined ? {} : { schedule: change.schedule }),
    ...(change.grace_s === undefined ? {} : { grace_s: change.grace_s }),
    ...(change.max_runtime_s === undefined ? {} : { max_runtime_s: change.max_runtime_s }),
    ...(change.paused === undefined ? {} : { paused: change.paused })
  }
}

/**
 * Changes a heartbeat's settings and, when `paused` is given, pauses or resumes it, then settles
 * its state by the new settings (a shorter schedule may make it late at once; pausing closes its
 * outage). Null when there is no such heartbeat.
 */
export async function changeHeartbeat({
  db,
  slug,
  patch,
  now
}: {
  db: Db
  slug: string
  patch: Partial<HeartbeatSettings> & { paused?: boolean }
  now: Date
}): Promise<HeartbeatRow | null> {
  const changed = await db.transaction(async (trx) => {
    const row = await lockHeartbeat({ db: trx, slug })
    if (row === null) return null
    const { paused, ...rest } = patch
    const settings: HeartbeatSettings = {
      name: rest.name ?? row.name,
      schedule: rest.schedule ?? row.schedule,
      grace_s: rest.grace_s ?? row.grace_s,
      max_runtime_s: rest.max_runtime_s === undefined ? row.max_runtime_s : rest.max_runtime_s
    }
    await writeHeartbeatSettings({ db: trx, row, settings, now })
    const next = { ...row, ...settings, paused: paused ?? row.paused }
    const settled = await settleHeartbeat({ db: trx, row: next, clock: clockOf(next), now: now.getTime(), at: now.getTime() })
    if (settled.events.length > 0) await appendToOutbox({ db: trx, events: settled.events })
    return { slug, step: settled.step }
  })
  if (changed === null) return null
  if (changed.step !== 'none') announced()
  return lockHeartbeat({ db, slug })
}

/** Gives a heartbeat a new token, the old one refused from now; null when there is no such heartbeat. */
export async function rotateToken({
  db,
  slug,
  now
}: {
  db: Db
  slug: string
  now: Date
}): Promise<{ row: HeartbeatRow; token: string } | null> {
  return db.transaction(async (trx) => {
    const row = await lockHeartbeat({ db: trx, slug })
    if (row === null) return null
    const token = newPingToken()
    await writeTokenHash({ db: trx, id: row.id, tokenHash: tokenHashOf(token), now })
    return { row, token }
  })
}

/**
 * Deletes a heartbeat: its ongoing outage ends now (announced), it leaves its status pages, and
 * its `sites` row stays as history. False when there is no such heartbeat.
 */
export async function removeHeartbeat({ db, slug, now }: { db: Db; slug: string; now: Date }): Promise<boolean> {
  const removed = await db.transaction(async (trx) => {
    const row = await lockHeartbeat({ db: trx, slug })
    if (row === null) return false
    const open = (await listOpenOutages({ db: trx, siteIds: [row.site_id] })).get(row.site_id) ?? null
    const end = outageEndOnRemoval(open, now)
    await removeSiteFromPages({ db: trx, siteId: row.site_id, now })
    await deleteHeartbeat({ db: trx, row, now })
    if (open && end) {
      await closeOutage({ db: trx, id: open.id, endedAt: end })
      const named = { siteId: row.site_id, slug: row.slug, name: row.name }
      await appendToOutbox({ db: trx, events: [heartbeatOutageEvent('close', named, { started_at: open.started_at, ended_at: end }, now)] })
    }
    return true
  })
  if (removed) announced()
  return removed
}
