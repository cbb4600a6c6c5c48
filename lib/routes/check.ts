import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { tryNormaliseDomain } from '../checks/domain.js'
import { TargetPolicyError, type CheckSupervisor } from '../checks/supervisor.js'

/** What a check costs against the key's per-minute budget, cached or not. */
export const CHECK_COST = 5

const body = Joi.object({ domain: Joi.string().required() })
  .required()
  .unknown(false)
  .label('request body')
  .messages({ 'object.base': 'request body must be a JSON object with a "domain" field' })

export function checkRoutes({ checks }: { checks: CheckSupervisor }): ServerRoute[] {
  return [{
    method: 'POST',
    path: '/api/v1/check',
    options: {
      plugins: { rateLimit: { cost: CHECK_COST } },
      payload: { allow: 'application/json', maxBytes: 4096 },
      validate: { payload: body }
    },
    handler: async (request) => {
      const parsed = tryNormaliseDomain((request.payload as { domain: string }).domain)
      if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
      try {
        return await checks.check(parsed.domain)
      } catch (err) {
        if (err instanceof TargetPolicyError) throw Boom.badRequest(err.message)
        throw err
      }
    }
  }]
}
