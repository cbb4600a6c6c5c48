import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { pageLimit } from './paging.js'
import { requireScope } from '../auth.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { durationSeconds } from '../rules/outages.js'
import type { Db } from '../store/db.js'
import type { DownCause } from '../rules/down-cause.js'
import { listOutages, type ListedOutage, type OutageCursor } from '../store/outages.js'
import { monitorDomain, monitorOf, type MonitorRef } from '../rules/monitor.js'

const MONITOR_SLUG = '"monitor" must be a monitor\'s slug: 1 to 64 lower-case letters, digits and hyphens'

const query = Joi.object({
  domain: Joi.string().max(2048),
  monitor: Joi.string()
    .pattern(/^[a-z0-9-]{1,64}$/)
    .messages({ 'string.pattern.base': MONITOR_SLUG, 'string.empty': MONITOR_SLUG }),
  ongoing: Joi.string().valid('0', '1').messages({ 'any.only': '"ongoing" must be 1 (only ongoing outages) or 0 (all)' }),
  limit: pageLimit,
  cursor: Joi.string().max(100)
})
  .oxor('domain', 'monitor')
  .unknown(false)
  .messages({ 'object.oxor': 'give "domain" or "monitor", not both' })

/** An outage as the outages endpoint reports it. */
export interface OutageRecord {
  domain: string
  name: string
  started_at: string
  ended_at: string | null
  /** Whole seconds, to `now` while ongoing. */
  duration_seconds: number
  /** Why it opened; null when not recorded (outages older than the record of causes). */
  cause: DownCause | null
  /** A monitor's outage (tcp, tls, dns) names it; its `domain` is then the monitor's identity, `monitor:<slug>`. */
  monitor?: MonitorRef
}

export function outageRecord(o: ListedOutage, now: Date): OutageRecord {
  return {
    domain: o.domain,
    name: o.name,
    started_at: o.started_at.toISOString(),
    ended_at: o.ended_at?.toISOString() ?? null,
    duration_seconds: durationSeconds(o.started_at, o.ended_at, now),
    cause: o.cause,
    ...monitorField(o)
  }
}

function monitorField(o: ListedOutage): { monitor?: MonitorRef } {
  const monitor = monitorOf(o)
  return monitor === null ? {} : { monitor }
}

/** The cursor is opaque to clients: base64url of "<started_at ms>.<id>". */
export function encodeCursor(c: OutageCursor): string {
  return Buffer.from(`${c.startedAt}.${c.id}`).toString('base64url')
}

function decodeCursor(text: string): OutageCursor {
  const m = /^(\d{1,15})\.(\d{1,18})$/.exec(Buffer.from(text, 'base64url').toString('latin1'))
  if (!m) throw Boom.badRequest('"cursor" is not a cursor this API returned (use next_cursor as given)')
  return { startedAt: Number(m[1]), id: Number(m[2]) }
}

export function outageRoutes({ db, now }: { db: Db; now: () => Date }): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/outages',
      options: { auth: requireScope('read'), validate: { query } },
      handler: async (request) => {
        const q = request.query as { domain?: string; monitor?: string; ongoing?: string; limit: number; cursor?: string }
        let domain: string | undefined = q.monitor === undefined ? undefined : monitorDomain(q.monitor)
        if (q.domain !== undefined) {
          const parsed = tryNormaliseDomain(q.domain)
          if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
          domain = parsed.domain
        }
        const page = await listOutages({
          db,
          domain,
          ongoing: q.ongoing === '1',
          limit: q.limit,
          before: q.cursor === undefined ? undefined : decodeCursor(q.cursor)
        })
        const at = now()
        return { outages: page.outages.map((o) => outageRecord(o, at)), next_cursor: page.next ? encodeCursor(page.next) : null }
      }
    }
  ]
}
