import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { parseNewPolicy, parsePolicyChange, policyChannels, type AlertPolicy, type PolicyFields } from '../rules/alert-policy.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { parseSlug } from '../rules/status-page-fields.js'
import {
  countAttachments,
  deletePolicy,
  findPolicy,
  insertPolicy,
  listChannels,
  listPolicies,
  updatePolicy
} from '../store/alert-config.js'
import { findPageAlertPolicy, listMonitorAlerting, setPageAlertPolicy, setSiteAlerting, wouldLoop } from '../store/alert-targets.js'
import { isDuplicateKey, type Db } from '../store/db.js'
import { findSite } from '../store/sites.js'
import { idParam, type AlertRouteDeps } from './channels.js'

const BODY = { allow: 'application/json', maxBytes: 16 * 1024 }

/** A policy as the API shows it. */
export function policyRecord(p: AlertPolicy, attached?: { sites: number; pages: number }): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    channels: p.channels,
    events: p.events,
    after_min: p.after_min,
    remind_every_min: p.remind_every_min,
    escalate: p.escalate,
    on_resolved: p.on_resolved,
    group_window_s: p.group_window_s,
    default: p.is_default,
    attached: attached ?? { sites: 0, pages: 0 }
  }
}

/** Every channel a policy names must exist: a 400 names the first that does not. */
async function checkChannels(db: Db, p: PolicyFields): Promise<void> {
  const known = new Set((await listChannels({ db })).map((c) => c.id))
  const missing = policyChannels(p).find((id) => !known.has(id))
  if (missing !== undefined) throw Boom.badRequest(`channel ${missing} does not exist`)
}

async function stored<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (err) {
    if (isDuplicateKey(err)) throw Boom.conflict('a policy with that name exists')
    throw err
  }
}

const alertingBody = Joi.object({
  alert_policy: Joi.number()
    .integer()
    .min(1)
    .max(2 ** 31)
    .allow(null),
  depends_on: Joi.string().max(2048).allow(null)
})
  .required()
  .min(1)
  .unknown(false)
  .label('request body')
  .messages({ 'object.min': 'request body must set "alert_policy" or "depends_on"' })

/** Alert policies, and which policy a site or a status page uses and what a site depends on (manage). */
export function alertPolicyRoutes({ db, now }: AlertRouteDeps): ServerRoute[] {
  const policyExists = async (id: number | null | undefined): Promise<void> => {
    if (id !== null && id !== undefined && (await findPolicy({ db, id })) === null)
      throw Boom.badRequest(`alert policy ${id} does not exist`)
  }
  const siteOf = async (raw: unknown): Promise<{ id: number; domain: string }> => {
    const parsed = tryNormaliseDomain(raw)
    if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
    const site = await findSite({ db, domain: parsed.domain })
    if (site === null || site.removed_at !== null) throw Boom.notFound('site is not tracked')
    return { id: site.id, domain: site.domain }
  }
  const siteAlerting = async (site: { id: number; domain: string }): Promise<Record<string, unknown>> => {
    const s = (await listMonitorAlerting({ db, siteIds: [site.id] })).get(site.id)
    const parent: { domain?: unknown } | undefined =
      s?.depends_on_site_id == null ? undefined : await db('sites').where({ id: s.depends_on_site_id }).first('domain')
    return {
      domain: site.domain,
      alert_policy: s?.alert_policy_id ?? null,
      page_policies: s?.page_policy_ids ?? [],
      depends_on: typeof parent?.domain === 'string' ? parent.domain : null
    }
  }
  return [
    {
      method: 'POST',
      path: '/api/v1/alert-policies',
      options: { auth: requireScope('manage'), payload: BODY },
      handler: async (request, h) => {
        const parsed = parseNewPolicy(request.payload)
        if (!parsed.ok) throw Boom.badRequest(parsed.error)
        await checkChannels(db, parsed.value)
        const policy = await stored(() => db.transaction((trx) => insertPolicy({ db: trx, policy: parsed.value, now: now() })))
        return h.response(policyRecord(policy)).code(201).location(`/api/v1/alert-policies/${policy.id}`)
      }
    },
    {
      method: 'GET',
      path: '/api/v1/alert-policies',
      options: { auth: requireScope('manage') },
      handler: async () => {
        const attached = await countAttachments({ db })
        return { policies: (await listPolicies({ db })).map((p) => policyRecord(p, attached.get(p.id))) }
      }
    },
    {
      method: 'GET',
      path: '/api/v1/alert-policies/{id}',
      options: { auth: requireScope('manage'), validate: { params: idParam('policy') } },
      handler: async (request) => {
        const policy = await findPolicy({ db, id: (request.params as { id: number }).id })
        if (policy === null) throw Boom.notFound('no such alert policy')
        return policyRecord(policy, (await countAttachments({ db })).get(policy.id))
      }
    },
    {
      method: 'PATCH',
      path: '/api/v1/alert-policies/{id}',
      options: { auth: requireScope('manage'), payload: BODY, validate: { params: idParam('policy') } },
      handler: async (request) => {
        const { id } = request.params as { id: number }
        const current = await findPolicy({ db, id })
        if (current === null) throw Boom.notFound('no such alert policy')
        const parsed = parsePolicyChange(current, request.payload)
        if (!parsed.ok) throw Boom.badRequest(parsed.error)
        await checkChannels(db, parsed.value)
        await stored(() => db.transaction((trx) => updatePolicy({ db: trx, id, policy: parsed.value, now: now() })))
        return policyRecord({ ...parsed.value, id }, (await countAttachments({ db })).get(id))
      }
    },
    {
      method: 'DELETE',
      path: '/api/v1/alert-policies/{id}',
      options: { auth: requireScope('manage'), validate: { params: idParam('policy') } },
      handler: async (request, h) => {
        if (!(await deletePolicy({ db, id: (request.params as { id: number }).id }))) throw Boom.notFound('no such alert policy')
        return h.response().code(204)
      }
    },
    {
      method: 'GET',
      path: '/api/v1/sites/{domain}/alerting',
      options: { auth: requireScope('manage') },
      handler: async (request) => siteAlerting(await siteOf(request.params.domain))
    },
    {
      method: 'PUT',
      path: '/api/v1/sites/{domain}/alerting',
      options: { auth: requireScope('manage'), payload: BODY, validate: { payload: alertingBody } },
      handler: async (request) => {
        const site = await siteOf(request.params.domain)
        const body = request.payload as { alert_policy?: number | null; depends_on?: string | null }
        await policyExists(body.alert_policy)
        let dependsOn: number | null | undefined
        if (typeof body.depends_on === 'string') {
          const parent = await siteOf(body.depends_on).catch(() => {
            throw Boom.badRequest('"depends_on" must be a tracked site')
          })
          if (await wouldLoop({ db, siteId: site.id, parentId: parent.id }))
            throw Boom.badRequest('"depends_on" would make a loop of dependencies')
          dependsOn = parent.id
        } else dependsOn = body.depends_on
        await setSiteAlerting({ db, siteId: site.id, policyId: body.alert_policy, dependsOn })
        return siteAlerting(site)
      }
    },
    {
      method: 'PUT',
      path: '/api/v1/pages/{slug}/alerting',
      options: {
        auth: requireScope('manage'),
        payload: BODY,
        validate: {
          payload: Joi.object({
            alert_policy: Joi.number()
              .integer()
              .min(1)
              .max(2 ** 31)
              .allow(null)
              .required()
          })
            .required()
            .unknown(false)
            .label('request body')
        }
      },
      handler: async (request) => {
        const slug = parseSlug(request.params.slug)
        if (!slug.ok) throw Boom.badRequest(slug.error)
        const { alert_policy: policyId } = request.payload as { alert_policy: number | null }
        await policyExists(policyId)
        if (!(await setPageAlertPolicy({ db, slug: slug.value, policyId }))) throw Boom.notFound('no such status page')
        return { slug: slug.value, alert_policy: policyId }
      }
    },
    {
      method: 'GET',
      path: '/api/v1/pages/{slug}/alerting',
      options: { auth: requireScope('manage') },
      handler: async (request) => {
        const slug = parseSlug(request.params.slug)
        if (!slug.ok) throw Boom.badRequest(slug.error)
        const page = await findPageAlertPolicy({ db, slug: slug.value })
        if (page === undefined) throw Boom.notFound('no such status page')
        return { slug: slug.value, alert_policy: page.alert_policy_id }
      }
    }
  ]
}
