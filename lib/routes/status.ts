import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import { tryNormaliseDomain } from '../checks/domain.js'
import type { SiteStates } from '../checks/site-state.js'

/** Answered from the state kept in memory: no probe and no database query per request. */
export function statusRoutes({ states, now }: { states: SiteStates; now: () => Date }): ServerRoute[] {
  return [{
    method: 'GET',
    path: '/api/v1/status/{domain}',
    handler: (request) => {
      const parsed = tryNormaliseDomain(request.params.domain)
      if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
      const record = states.statusRecord(parsed.domain, now())
      if (record === null) throw Boom.notFound('site is not tracked')
      return record
    }
  }]
}
