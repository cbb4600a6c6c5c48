import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { addMonitor, changeMonitor, removeMonitor } from '../monitoring/monitors.js'
import type { Sealer } from '../monitoring/check-secrets.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import type { StatusRecord } from '../monitoring/state/status-record.js'
import { shownCheck, type CheckSpec } from '../rules/check-spec.js'
import { monitorDomain, monitorOf, type MonitorKind } from '../rules/monitor.js'
import { monitorBody, monitorPatch, monitorSlug, type MonitorChange, type MonitorInput } from '../rules/monitor-fields.js'
import { isDuplicateKey, type Db } from '../store/db.js'
import { findMonitor, listMonitors } from '../store/monitors.js'
import type { SiteRow } from '../store/tables.js'
import { pageLimit } from './paging.js'
import { uptimeSummary } from '../rules/uptime.js'

const SLUG = /^[a-z0-9-]{1,64}$/
const SLUG_MESSAGE = 'monitor slug must be 1 to 64 lower-case letters, digits and hyphens'
const slugParam = Joi.object({ slug: Joi.string().pattern(SLUG) }).messages({ 'string.pattern.base': SLUG_MESSAGE })
const listQuery = Joi.object({ limit: pageLimit, cursor: Joi.string().max(100) }).unknown(false)
/** A body holds a check (a `send` of 4 KiB, 20 expected answers of 1 KiB) with room for JSON's escapes. */
const payload = { allow: 'application/json', maxBytes: 64 * 1024 }

const encodeCursor = (slug: string): string => Buffer.from(slug).toString('base64url')
function decodeCursor(text: string): string {
  const slug = Buffer.from(text, 'base64url').toString('latin1')
  if (!SLUG.test(slug) || encodeCursor(slug) !== text)
    throw Boom.badRequest('"cursor" is not a cursor this API returned (use next_cursor as given)')
  return slug
}

/** A monitor's status record: the sites' status record (same rules), named by slug, kind and target instead of a domain. */
export interface MonitorStatus extends Omit<StatusRecord, 'domain' | 'settings' | 'url'> {
  slug: string
  kind: MonitorKind
  target: string
}

/** What a monitor is and how it stands: its settings, its check and its current verdict. */
export interface MonitorRecord {
  slug: string
  kind: MonitorKind
  name: string
  target: string
  check: CheckSpec
  interval_s: number | null
  max_response_ms: number | null
  status: StatusRecord['status']
  checked_at: string | null
  added_at: string
}

/** The status record of a monitor the state does not hold yet (added an instant ago): nothing checked. */
function pendingStatus(row: SiteRow, at: Date): Omit<StatusRecord, 'domain' | 'settings' | 'url'> {
  return {
    name: row.name,
    status: 'pending',
    blocked: false,
    partial: false,
    response_ms: null,
    checked_at: null,
    uptime_percent: uptimeSummary([], null, at),
    last_outage: null,
    tls: null,
    slow: false,
    cause: null
  }
}

/**
 * Monitors of kind tcp, tls and dns as a resource (docs/decisions.md, "Checks beyond a GET"):
 * created, listed with paging like sites, changed, removed, and their status record. Each is a
 * `sites` row probed by the scheduler as a site is; `sitesChanged` brings the scheduler and the
 * in-memory state up to date before an answer.
 */
export function monitorRoutes({
  db,
  states,
  now,
  sitesChanged,
  box
}: {
  db: Db
  states: SiteStates
  now: () => Date
  sitesChanged: () => Promise<void>
  /** Seals a check's secrets for the database (the webhooks' SecretBox). */
  box: Sealer
}): ServerRoute[] {
  const status = (row: SiteRow, at: Date): MonitorStatus => {
    const ref = monitorOf(row) as { kind: MonitorKind; slug: string }
    const held = states.statusRecord(row.domain, at)
    const { domain: _d, settings: _s, url: _u, ...rest } = held ?? { ...pendingStatus(row, at), domain: '', settings: {}, url: '' }
    return { slug: ref.slug, kind: ref.kind, target: row.target ?? '', ...rest, name: row.name }
  }
  const record = (row: SiteRow, at: Date): MonitorRecord => {
    const ref = monitorOf(row) as { kind: MonitorKind; slug: string }
    const held = states.current(row.domain, at)
    return {
      slug: ref.slug,
      kind: ref.kind,
      name: row.name,
      target: row.target ?? '',
      check: shownCheck(JSON.parse(row.check ?? '{}') as CheckSpec),
      interval_s: row.interval_s,
      max_response_ms: row.expect.max_response_ms,
      status: held?.status ?? 'pending',
      checked_at: row.checked_at?.toISOString() ?? null,
      added_at: row.added_at.toISOString()
    }
  }
  const found = async (slug: string): Promise<SiteRow> => {
    const row = await findMonitor({ db, domain: monitorDomain(slug) })
    if (row === null) throw Boom.notFound('no monitor has this slug')
    return row
  }
  return [
    {
      method: 'GET',
      path: '/api/v1/monitors',
      options: { auth: requireScope('read'), validate: { query: listQuery } },
      handler: async (request) => {
        const q = request.query as { limit: number; cursor?: string }
        const after = q.cursor === undefined ? undefined : monitorDomain(decodeCursor(q.cursor))
        const rows = await listMonitors({ db, limit: q.limit, ...(after === undefined ? {} : { after }) })
        const shown = rows.slice(0, q.limit)
        const at = now()
        const last = shown.at(-1)
        return {
          monitors: shown.map((r) => record(r, at)),
          next_cursor: rows.length > q.limit && last ? encodeCursor((monitorOf(last) as { slug: string }).slug) : null
        }
      }
    },
    {
      method: 'POST',
      path: '/api/v1/monitors',
      options: { auth: requireScope('manage'), payload, validate: { payload: monitorBody } },
      handler: async (request, h) => {
        const body = request.payload as MonitorInput
        const slug = monitorSlug(body)
        if (slug === '') throw Boom.badRequest('"slug" is required when the name has no letters or digits')
        const row = await addMonitor({ db, slug, input: body, box, now: now() }).catch((err: unknown) => {
          if (isDuplicateKey(err)) throw Boom.conflict(`a monitor named ${slug} exists`)
          throw err
        })
        await sitesChanged()
        return h.response(record(row, now())).code(201).location(`/api/v1/monitors/${slug}`)
      }
    },
    {
      method: 'GET',
      path: '/api/v1/monitors/{slug}',
      options: { auth: requireScope('read'), validate: { params: slugParam } },
      handler: async (request) => record(await found(request.params.slug as string), now())
    },
    {
      method: 'GET',
      path: '/api/v1/monitors/{slug}/status',
      options: { auth: requireScope('read'), validate: { params: slugParam } },
      handler: async (request) => status(await found(request.params.slug as string), now())
    },
    {
      method: 'PATCH',
      path: '/api/v1/monitors/{slug}',
      options: { auth: requireScope('manage'), payload, validate: { params: slugParam, payload: monitorPatch } },
      handler: async (request) => {
        const slug = request.params.slug as string
        if (!(await changeMonitor({ db, slug, change: request.payload as MonitorChange, box, now: now() })))
          throw Boom.notFound('no monitor has this slug')
        await sitesChanged()
        return record(await found(slug), now())
      }
    },
    {
      method: 'DELETE',
      path: '/api/v1/monitors/{slug}',
      options: { auth: requireScope('manage'), validate: { params: slugParam } },
      handler: async (request, h) => {
        if (!(await removeMonitor({ db, slug: request.params.slug as string, now: now() }))) throw Boom.notFound('no monitor has this slug')
        await sitesChanged()
        return h.response().code(204)
      }
    }
  ]
}
