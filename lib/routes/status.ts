import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import { requireScope } from '../auth.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import type { SiteStates } from '../monitoring/state/site-state.js'

/**
 * Answered from the state kept in memory: no probe and no database query per request, and the
 * record serialised once per state and second (see SiteStates.statusJson).
 */
export function statusRoutes({ states, now }: { states: SiteStates; now: () => Date }): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/status/{domain}',
      options: { auth: requireScope('read') },
      handler: (request, h) => {
        // Clients almost always ask with the normalised name a response gave them: no parsing needed.
        const raw = request.params.domain as string
        const parsed = states.has(raw) ? { ok: true as const, domain: raw } : tryNormaliseDomain(raw)
        if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
        const json = states.statusJson(parsed.domain, now())
        if (json === null) throw Boom.notFound('site is not tracked')
        return h.response(json).type('application/json; charset=utf-8')
      }
    }
  ]
}
