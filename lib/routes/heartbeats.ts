import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { addHeartbeat, changedSettings, changeHeartbeat, removeHeartbeat, rotateToken } from '../heartbeats/manage.js'
import type { HeartbeatSchedule } from '../rules/heartbeat.js'
import { heartbeatBody, heartbeatPatch, slugFromName } from '../rules/heartbeat-fields.js'
import { durationSeconds } from '../rules/outages.js'
import { isDuplicateKey, type Db } from '../store/db.js'
import { findHeartbeat, listHeartbeats, type HeartbeatRow } from '../store/heartbeats.js'
import { listOpenOutages, type OutageRow } from '../store/outages.js'
import { pageLimit } from './paging.js'

const iso = (d: Date | null): string | null => d?.toISOString() ?? null

/** A heartbeat's status record, as every heartbeat route answers it. */
export function heartbeatRecord(row: HeartbeatRow, outage: OutageRow | null, now: Date): Record<string, unknown> {
  return {
    slug: row.slug,
    name: row.name,
    schedule: row.schedule,
    grace_s: row.grace_s,
    max_runtime_s: row.max_runtime_s,
    state: row.state,
    paused: row.paused,
    last_ping_at: iso(row.last_ping_at),
    last_ping_kind: row.last_ping_kind,
    last_success_at: iso(row.last_success_at),
    last_run_seconds: row.last_run_ms === null ? null : Math.round(row.last_run_ms) / 1000,
    runs_open: row.open_runs.length,
    next_deadline_at: iso(row.next_deadline),
    last_message: row.last_message,
    outage:
      outage === null
        ? null
        : { started_at: outage.started_at.toISOString(), duration_seconds: durationSeconds(outage.started_at, null, now) },
    created_at: row.created_at.toISOString()
  }
}

const listQuery = Joi.object({ limit: pageLimit, cursor: Joi.string().max(100) }).unknown(false)

const encodeCursor = (slug: string): string => Buffer.from(slug).toString('base64url')
function decodeCursor(text: string): string {
  const slug = Buffer.from(text, 'base64url').toString('latin1')
  if (!/^[a-z0-9-]{1,64}$/.test(slug) || encodeCursor(slug) !== text) {
    throw Boom.badRequest('"cursor" is not a cursor this API returned (use next_cursor as given)')
  }
  return slug
}

const slugParam = Joi.object({ slug: Joi.string().pattern(/^[a-z0-9-]{1,64}$/) }).messages({
  'string.pattern.base': 'heartbeat slug must be 1 to 64 lower-case letters, digits and hyphens'
})

interface Body {
  name: string
  slug?: string
  schedule: HeartbeatSchedule
  grace_s: number
  max_runtime_s?: number | null
}
type Patch = Partial<Omit<Body, 'slug'>> & { paused?: boolean }

/**
 * Heartbeats as a resource: created (with their ping URL, shown on creation and rotation only:
 * the token is kept as a hash), listed with paging like sites, changed, paused, removed.
 */
export function heartbeatRoutes({ db, now, publicUrl }: { db: Db; now: () => Date; publicUrl: string }): ServerRoute[] {
  const record = async (row: HeartbeatRow): Promise<Record<string, unknown>> => {
    const open = (await listOpenOutages({ db, siteIds: [row.site_id] })).get(row.site_id) ?? null
    return heartbeatRecord(row, open, now())
  }
  const pingUrl = (token: string): string => `${publicUrl}/ping/${token}`
  const found = async (slug: string): Promise<HeartbeatRow> => {
    const row = await findHeartbeat({ db, slug })
    if (row === null) throw Boom.notFound('no heartbeat has this slug')
    return row
  }
  const payload = { allow: 'application/json', maxBytes: 4096 }
  return [
    {
      method: 'GET',
      path: '/api/v1/heartbeats',
      options: { auth: requireScope('read'), validate: { query: listQuery } },
      handler: async (request) => {
        const q = request.query as { limit: number; cursor?: string }
        const rows = await listHeartbeats({ db, limit: q.limit, ...(q.cursor === undefined ? {} : { after: decodeCursor(q.cursor) }) })
        const shown = rows.slice(0, q.limit)
        const open = await listOpenOutages({ db, siteIds: shown.map((r) => r.site_id) })
        const at = now()
        const last = shown.at(-1)
        return {
          heartbeats: shown.map((r) => heartbeatRecord(r, open.get(r.site_id) ?? null, at)),
          next_cursor: rows.length > q.limit && last ? encodeCursor(last.slug) : null
        }
      }
    },
    {
      method: 'POST',
      path: '/api/v1/heartbeats',
      options: { auth: requireScope('manage'), payload, validate: { payload: heartbeatBody } },
      handler: async (request, h) => {
        const body = request.payload as Body
        const slug = body.slug ?? slugFromName(body.name)
        if (slug === '') throw Boom.badRequest('"slug" is required when the name has no letters or digits')
        const settings = {
          name: body.name,
          schedule: body.schedule,
          grace_s: body.grace_s,
          max_runtime_s: body.max_runtime_s ?? null
        }
        const added = await addHeartbeat({ db, slug, settings, now: now() }).catch((err: unknown) => {
          if (isDuplicateKey(err)) throw Boom.conflict(`a heartbeat named ${slug} exists`)
          throw err
        })
        const answer = { ...(await record(added.row)), ping_url: pingUrl(added.token) }
        return h.response(answer).code(201).location(`/api/v1/heartbeats/${slug}`)
      }
    },
    {
      method: 'GET',
      path: '/api/v1/heartbeats/{slug}',
      options: { auth: requireScope('read'), validate: { params: slugParam } },
      handler: async (request) => record(await found(request.params.slug as string))
    },
    {
      method: 'PATCH',
      path: '/api/v1/heartbeats/{slug}',
      options: { auth: requireScope('manage'), payload, validate: { params: slugParam, payload: heartbeatPatch } },
      handler: async (request) => {
        const body = request.payload as Patch
        const patch = changedSettings(body)
        const row = await changeHeartbeat({ db, slug: request.params.slug as string, patch, now: now() })
        if (row === null) throw Boom.notFound('no heartbeat has this slug')
        return record(row)
      }
    },
    {
      method: 'DELETE',
      path: '/api/v1/heartbeats/{slug}',
      options: { auth: requireScope('manage'), validate: { params: slugParam } },
      handler: async (request, h) => {
        if (!(await removeHeartbeat({ db, slug: request.params.slug as string, now: now() })))
          throw Boom.notFound('no heartbeat has this slug')
        return h.response().code(204)
      }
    },
    {
      method: 'POST',
      path: '/api/v1/heartbeats/{slug}/token',
      options: { auth: requireScope('manage'), validate: { params: slugParam } },
      handler: async (request) => {
        const rotated = await rotateToken({ db, slug: request.params.slug as string, now: now() })
        if (rotated === null) throw Boom.notFound('no heartbeat has this slug')
        return { ...(await record(rotated.row)), ping_url: pingUrl(rotated.token) }
      }
    }
  ]
}
