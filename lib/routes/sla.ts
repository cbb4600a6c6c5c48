import Boom from '@hapi/boom'
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { maintenanceIntervals } from '../rules/maintenance.js'
import { monitoredSpan, slaFigures, slaWindow, type OutageInterval } from '../rules/sla.js'
import type { Db } from '../store/db.js'
import { listMaintenanceWindows } from '../store/maintenance.js'
import { listOutageTimes } from '../store/outages.js'
import { findSite } from '../store/sites.js'
import { monitorDomain } from '../rules/monitor.js'
import type { OutageRecord } from './outages.js'
import { outagesJson, SlaHistory } from './sla-history.js'

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
  /** Maintenance time inside the monitored part of the window, left out of `monitored_seconds`. */
  maintenance_seconds: number
  downtime_seconds: number
  incidents: number
  longest_outage_seconds: number
  mttr_seconds: number | null
  outages: OutageRecord[]
}

/**
 * Answered from the site's row (its first recorded check), its outages overlapping the window and
 * its maintenance windows (left out of monitored and outage time), never from raw checks: three
 * index reads, however long the window, and for windows within the last 400 days, a copy of the
 * site's closed outages kept between requests (`SlaHistory`) and checked against its two newest
 * outages. A removed site keeps its history: its monitored time ends at the removal. A monitor's
 * (tcp, tls, dns) by its slug, the same way.
 */
export function slaRoutes({ db, now }: { db: Db; now: () => Date }): ServerRoute[] {
  const history = new SlaHistory()
  const sla = async (request: Request, h: ResponseToolkit, domain: string, missing: string) => {
    const at = now()
    const window = slaWindow(request.query, at)
    if (!window.ok) throw Boom.badRequest(window.error)
    const site = await findSite({ db, domain })
    if (site === null) throw Boom.notFound(missing)
    const until = site.removed_at !== null && site.removed_at < at ? site.removed_at : at
    const span = monitoredSpan(site.first_checked_at, window.from, window.to, until)
    const monitored = span.start < span.end
    const [from, to] = [span.start.getTime(), span.end.getTime()]
    const copied = monitored ? await history.window({ db, site, from, to, now: at.getTime() }) : null
    const outages: OutageInterval[] =
      copied?.outages ?? (monitored ? await listOutageTimes({ db, siteId: site.id, from: span.start, to: span.end }) : [])
    const windows = monitored ? ((await listMaintenanceWindows({ db, siteIds: [site.id] })).get(site.id) ?? []) : []
    const { outages: counted, ...figures } = slaFigures({
      outages,
      firstCheckedAt: site.first_checked_at,
      from: window.from,
      to: window.to,
      until,
      maintenance: maintenanceIntervals(windows, from, to)
    })
    const record: Omit<SlaRecord, 'outages'> = {
      domain: site.domain,
      name: site.name,
      from: window.from.toISOString(),
      to: window.to.toISOString(),
      ...figures,
      maintenance_seconds: figures.maintenance_seconds ?? 0
    }
    const head = `${JSON.stringify(record).slice(0, -1)},"outages":`
    const list = copied?.json(counted) ?? [Buffer.from(outagesJson(counted, site, at.getTime()))]
    return h.response(Buffer.concat([Buffer.from(head), ...list, Buffer.from('}')])).type('application/json; charset=utf-8')
  }
  return [
    {
      method: 'GET',
      path: '/api/v1/sites/{domain}/sla',
      options: { auth: requireScope('read'), validate: { query } },
      handler: async (request, h) => {
        const parsed = tryNormaliseDomain(request.params.domain)
        if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
        return sla(request, h, parsed.domain, 'site is not tracked')
      }
    },
    {
      method: 'GET',
      path: '/api/v1/monitors/{slug}/sla',
      options: { auth: requireScope('read'), validate: { query } },
      handler: async (request, h) => {
        const slug = request.params.slug as string
        if (!/^[a-z0-9-]{1,64}$/.test(slug)) throw Boom.badRequest('monitor slug must be 1 to 64 lower-case letters, digits and hyphens')
        return sla(request, h, monitorDomain(slug), 'no monitor has this slug')
      }
    }
  ]
}
