import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { addMaintenanceWindow, listSiteMaintenanceWindows, removeMaintenanceWindow } from '../monitoring/maintenance-windows.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { MAX_WINDOWS_PER_SITE, parseMaintenanceWindow } from '../rules/maintenance.js'
import type { Db } from '../store/db.js'
import type { StoredWindow } from '../store/maintenance.js'
import { monitorDomain } from '../rules/monitor.js'

const windowId = (param: string) =>
  Joi.object({
    [param]: Joi.string().required(),
    id: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required()
  }).messages({
    'number.base': 'maintenance window id must be a whole number',
    'number.integer': 'maintenance window id must be a whole number',
    'number.min': 'maintenance window id must be a whole number',
    'number.max': 'maintenance window id must be a whole number',
    'number.unsafe': 'maintenance window id must be a whole number'
  })

/** A window as the API shows it: its id and its normal form, times as ISO 8601. */
export function windowRecord(w: StoredWindow): Record<string, unknown> {
  if ('weekly' in w) return { id: w.id, weekly: w.weekly, reason: w.reason }
  return { id: w.id, from: w.from.toISOString(), to: w.to.toISOString(), reason: w.reason }
}

function domainOf(raw: unknown): string {
  const parsed = tryNormaliseDomain(raw)
  if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
  return parsed.domain
}

/** What a family of window routes is about: a site by domain, or a monitor by slug. */
interface Owner {
  /** The path up to the windows, its parameter in braces. */
  base: string
  /** The `sites` row's domain a request names (a 400 when it cannot be one). */
  domainOf: (raw: unknown) => string
  /** The 404's words. */
  missing: string
}

const SITES: Owner = { base: '/api/v1/sites/{domain}', domainOf, missing: 'site is not tracked' }
const MONITORS: Owner = {
  base: '/api/v1/monitors/{slug}',
  domainOf: (raw) => {
    if (typeof raw !== 'string' || !/^[a-z0-9-]{1,64}$/.test(raw))
      throw Boom.badRequest('monitor slug must be 1 to 64 lower-case letters, digits and hyphens')
    return monitorDomain(raw)
  },
  missing: 'no monitor has this slug'
}

/**
 * The maintenance windows of tracked sites and of monitors (tcp, tls, dns): added and removed with
 * `manage`, listed with `read` (see docs/decisions.md, Maintenance windows). Every change moves the
 * sites' version, so that every instance's in-memory state takes it at its next look;
 * `sitesChanged` brings this instance's in before the answer. Recording reads the windows from the
 * database, never from memory.
 */
export function maintenanceRoutes(deps: { db: Db; now: () => Date; sitesChanged: () => Promise<void> }): ServerRoute[] {
  return [...windowRoutes(deps, SITES), ...windowRoutes(deps, MONITORS)]
}

function windowRoutes(
  { db, now, sitesChanged }: { db: Db; now: () => Date; sitesChanged: () => Promise<void> },
  { base, domainOf, missing }: Owner
): ServerRoute[] {
  const param = base.endsWith('{slug}') ? 'slug' : 'domain'
  return [
    {
      method: 'POST',
      path: `${base}/maintenance`,
      options: { auth: requireScope('manage'), payload: { allow: 'application/json', maxBytes: 4096 } },
      handler: async (request, h) => {
        const domain = domainOf(request.params[param])
        // hapi leaves an empty body null. The rule's own schema, as the operator tool applies it: one wording for both.
        const body: unknown = request.payload
        const parsed = parseMaintenanceWindow(body ?? null)
        if (!parsed.ok) throw Boom.badRequest(parsed.error)
        const added = await addMaintenanceWindow({ db, domain, window: parsed.value, now: now() })
        if (!added.ok) {
          if (added.reason === 'not_tracked') throw Boom.notFound(missing)
          throw Boom.conflict(`a site has at most ${MAX_WINDOWS_PER_SITE} maintenance windows; remove one first`)
        }
        await sitesChanged()
        return h.response(windowRecord(added.window)).code(201)
      }
    },
    {
      method: 'GET',
      path: `${base}/maintenance`,
      options: { auth: requireScope('read') },
      handler: async (request) => {
        const windows = await listSiteMaintenanceWindows({ db, domain: domainOf(request.params[param]) })
        if (windows === null) throw Boom.notFound(missing)
        return { windows: windows.map(windowRecord) }
      }
    },
    {
      method: 'DELETE',
      path: `${base}/maintenance/{id}`,
      options: { auth: requireScope('manage'), validate: { params: windowId(param) } },
      handler: async (request, h) => {
        const id = request.params.id as number
        const outcome = await removeMaintenanceWindow({ db, domain: domainOf(request.params[param]), id, now: now() })
        if (outcome === 'not_tracked') throw Boom.notFound(missing)
        if (outcome === 'no_window') throw Boom.notFound(`no such maintenance window for this ${param === 'slug' ? 'monitor' : 'site'}`)
        await sitesChanged()
        return h.response().code(204)
      }
    }
  ]
}
