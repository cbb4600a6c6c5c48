import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { monitoredSpan, slaFigures, slaWindow } from '../rules/sla.js'
import type { Db } from '../store/db.js'
import { listOutagesOverlapping } from '../store/outages.js'
import { findSite } from '../store/sites.js'
import { outageRecord, type OutageRecord } from './outages.js'

const query = Joi.object({
  from: Joi.string().max(64),
  to: Joi.string().max(64)
}).unknown(false)

/** The SLA endpoint's answer: the window asked for, its figures, and the outages that overlap it. */
export interface SlaRecord {
  domain: string
  name: string
  from: string
  to: string
  uptime_percent: number
  monitored_seconds: number
  downtime_seconds: number
  incidents: number
  longest_outage_seconds: number
  mttr_seconds: number | null
  outages: OutageRecord[]
}

/**
 * Answered from the site's row (its first recorded check) and its outages overlapping the window,
 * never from raw checks: two index range reads, however long the window. A removed site keeps its
 * history: its monitored time ends at the removal.
 */
export function slaRoutes({ db, now }: { db: Db; now: () => Date }): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/sites/{domain}/sla',
      options: { auth: requireScope('read'), validate: { query } },
      handler: async (request): Promise<SlaRecord> => {
        const parsed = tryNormaliseDomain(request.params.domain as string)
        if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
        const at = now()
        const window = slaWindow(request.query as { from?: string; to?: string }, at)
        if (!window.ok) throw Boom.badRequest(window.error)
        const site = await findSite({ db, domain: parsed.domain })
        if (site === null) throw Boom.notFound('site is not tracked')
        const until = site.removed_at !== null && site.removed_at < at ? site.removed_at : at
        const span = monitoredSpan(site.first_checked_at, window.from, window.to, until)
        const outages = span.start < span.end ? await listOutagesOverlapping({ db, siteId: site.id, from: span.start, to: span.end }) : []
        const { outages: counted, ...figures } = slaFigures({
          outages,
          firstCheckedAt: site.first_checked_at,
          from: window.from,
          to: window.to,
          until
        })
        const who = { domain: site.domain, name: site.name }
        return {
          ...who,
          from: window.from.toISOString(),
          to: window.to.toISOString(),
          ...figures,
          outages: counted.map((o) => outageRecord({ ...who, started_at: o.started_at, ended_at: o.ended_at }, at))
        }
      }
    }
  ]
}
