import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { addSite } from '../monitoring/add-sites.js'
import { removeSite } from '../monitoring/remove-site.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { parseSiteName, SiteNameError } from '../rules/site-name.js'
import { applySettings, NO_SETTINGS, siteFieldKeys, type SettingsPatch } from '../rules/site-settings.js'
import { isDuplicateKey, type Db } from '../store/db.js'
import { changeSite } from '../monitoring/change-site.js'
import { pageLimit } from './paging.js'

const listQuery = Joi.object({
  limit: pageLimit,
  cursor: Joi.string().max(400)
}).unknown(false)

const settingsKeys = siteFieldKeys

const addBody = Joi.object({ domain: Joi.string().allow('').required(), ...settingsKeys })
  .required()
  .unknown(false)
  .label('request body')
  .messages({
    'object.base': 'request body must be a JSON object with a "domain" field and optional "name", "interval_s" and "expect"'
  })

const changeBody = Joi.object(settingsKeys).required().min(1).unknown(false).label('request body').messages({
  'object.base': 'request body must be a JSON object with any of "name", "interval_s" and "expect"',
  'object.min': 'request body must change at least one of "name", "interval_s" and "expect"'
})

interface SettingsBody extends SettingsPatch {
  name?: string
}

function nameOf(raw: string | undefined): string | null {
  try {
    return parseSiteName(raw)
  } catch (err) {
    if (err instanceof SiteNameError) throw Boom.badRequest(err.message)
    throw err
  }
}

/** The cursor is opaque to clients: base64url of the last domain listed. */
function encodeCursor(domain: string): string {
  return Buffer.from(domain).toString('base64url')
}

function decodeCursor(text: string): string {
  const domain = Buffer.from(text, 'base64url').toString('latin1')
  if (!/^[a-z0-9.-]{1,253}$/.test(domain) || encodeCursor(domain) !== text) {
    throw Boom.badRequest('"cursor" is not a cursor this API returned (use next_cursor as given)')
  }
  return domain
}

function domainOf(raw: unknown): string {
  const parsed = tryNormaliseDomain(raw)
  if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
  return parsed.domain
}

/**
 * The tracked sites as a resource: listed from memory like the status endpoint, added and removed
 * with the operator tool's rules and store operations. `sitesChanged` brings the scheduler and the
 * in-memory state up to date before the answer, so a site added here is in the next list and the
 * scheduler's wheel at once.
 */
export function siteRoutes({
  db,
  states,
  now,
  sitesChanged
}: {
  db: Db
  states: SiteStates
  now: () => Date
  sitesChanged: () => Promise<void>
}): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/sites',
      options: { auth: requireScope('read'), validate: { query: listQuery } },
      handler: (request) => {
        const q = request.query as { limit: number; cursor?: string }
        const page = states.pageAfter(q.cursor === undefined ? undefined : decodeCursor(q.cursor), q.limit, now())
        const last = page.records[page.records.length - 1]
        return { sites: page.records, next_cursor: page.more && last ? encodeCursor(last.domain) : null }
      }
    },
    {
      method: 'POST',
      path: '/api/v1/sites',
      options: {
        auth: requireScope('manage'),
        payload: { allow: 'application/json', maxBytes: 4096 },
        validate: { payload: addBody }
      },
      handler: async (request, h) => {
        const body = request.payload as SettingsBody & { domain: string }
        const domain = domainOf(body.domain)
        const name = nameOf(body.name)
        // A site tracked again keeps its old settings unless the request gives some.
        const given = body.interval_s !== undefined || body.expect !== undefined
        const settings = given ? applySettings(NO_SETTINGS, body) : undefined
        const entry = { domain, name, ...(settings ? { settings } : {}) }
        const add = () => addSite({ db, entry, now: now(), renameTracked: false })
        // Two requests adding one new domain at once: the second insert meets the unique index, and
        // asking again finds the row the first one stored.
        const outcome = await add().catch((err: unknown) => {
          if (isDuplicateKey(err)) return add()
          throw err
        })
        if (outcome === 'already') throw Boom.conflict(`${domain} is already tracked`)
        await sitesChanged()
        const record = states.statusRecord(domain, now())
        // Tracked, but the re-read failed (the database went away) or a removal came in between.
        if (record === null) throw Boom.serverUnavailable(`${domain} was added, but its status could not be read; ask again shortly`)
        return h.response(record).code(201).location(`/api/v1/status/${domain}`)
      }
    },
    {
      method: 'PATCH',
      path: '/api/v1/sites/{domain}',
      options: {
        auth: requireScope('manage'),
        payload: { allow: 'application/json', maxBytes: 4096 },
        validate: { payload: changeBody }
      },
      handler: async (request) => {
        const domain = domainOf(request.params.domain)
        const body = request.payload as SettingsBody
        const name = nameOf(body.name)
        const { interval_s, expect } = body
        const changed = await db.transaction((trx) => changeSite({ db: trx, domain, name, patch: { interval_s, expect }, now: now() }))
        if (!changed) throw Boom.notFound('site is not tracked')
        await sitesChanged()
        const record = states.statusRecord(domain, now())
        if (record === null) throw Boom.serverUnavailable(`${domain} was changed, but its status could not be read; ask again shortly`)
        return record
      }
    },
    {
      method: 'DELETE',
      path: '/api/v1/sites/{domain}',
      options: { auth: requireScope('manage') },
      handler: async (request, h) => {
        const domain = domainOf(request.params.domain)
        if (!(await removeSite({ db, domain, now: now() }))) throw Boom.notFound('site is not tracked')
        await sitesChanged()
        return h.response().code(204)
      }
    }
  ]
}
