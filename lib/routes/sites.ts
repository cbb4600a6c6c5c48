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
import { checkSchema, type CheckSpec } from '../rules/check-spec.js'
import { sealCheck, type Sealer } from '../monitoring/check-secrets.js'

/** A site's body: its settings, and a check's body (16 KiB) and headers with room for JSON's escapes. */
const SITE_BODY_BYTES = 64 * 1024

const listQuery = Joi.object({
  limit: pageLimit,
  cursor: Joi.string().max(400)
}).unknown(false)

// Empty strings are let through to the shared rules, so the API says what the operator tool says.
const settingsKeys = { ...siteFieldKeys, check: checkSchema.allow(null) }

const addBody = Joi.object({ domain: Joi.string().allow('').required(), ...settingsKeys })
  .required()
  .unknown(false)
  .label('request body')
  .messages({
    'object.base': 'request body must be a JSON object with a "domain" field and optional "name", "interval_s", "expect" and "check"'
  })

const changeBody = Joi.object(settingsKeys).required().min(1).unknown(false).label('request body').messages({
  'object.base': 'request body must be a JSON object with any of "name", "interval_s", "expect" and "check"',
  'object.min': 'request body must change at least one of "name", "interval_s", "expect" and "check"'
})

interface SettingsBody extends Omit<SettingsPatch, 'check'> {
  name?: string
  check?: CheckSpec | null
}

/**
 * The settings change a body asks, its check sealed for storing. A tracked site's check is an http
 * request: its routes by domain answer for the site's web check, which a tcp, tls or dns check is not.
 */
function patchOf({ interval_s, expect, check }: SettingsBody, box: Sealer): SettingsPatch {
  if (check != null && check.type !== 'http')
    throw Boom.badRequest(
      `"check.type": a tracked site's check is an http request; a ${check.type} check runs on demand (POST /api/v1/check)`
    )
  return {
    ...(interval_s === undefined ? {} : { interval_s }),
    ...(expect === undefined ? {} : { expect }),
    ...(check === undefined ? {} : { check: check === null ? null : sealCheck(check, box) })
  }
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
  sitesChanged,
  box
}: {
  db: Db
  states: SiteStates
  now: () => Date
  sitesChanged: () => Promise<void>
  /** Seals a check's secret header values for the database (the webhooks' SecretBox). */
  box: Sealer
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
        payload: { allow: 'application/json', maxBytes: SITE_BODY_BYTES },
        validate: { payload: addBody }
      },
      handler: async (request, h) => {
        const body = request.payload as SettingsBody & { domain: string }
        const domain = domainOf(body.domain)
        const name = nameOf(body.name)
        // A site tracked again keeps its old settings unless the request gives some.
        const patch = patchOf(body, box)
        const settings = Object.keys(patch).length > 0 ? applySettings(NO_SETTINGS, patch) : undefined
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
        payload: { allow: 'application/json', maxBytes: SITE_BODY_BYTES },
        validate: { payload: changeBody }
      },
      handler: async (request) => {
        const domain = domainOf(request.params.domain)
        const body = request.payload as SettingsBody
        const name = nameOf(body.name)
        const patch = patchOf(body, box)
        const changed = await db.transaction((trx) => changeSite({ db: trx, domain, name, patch, now: now() }))
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
