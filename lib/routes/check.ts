import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'
import Joi from 'joi'
import { requireScope } from '../auth.js'
import { tryNormaliseDomain } from '../rules/domain.js'
import { checkExpectations, expectSchema, type ExpectationsPatch } from '../rules/expectations.js'
import { checkSchema, type CheckSpec } from '../rules/check-spec.js'
import { CapacityError, TargetPolicyError, type CheckSupervisor } from '../probing/supervisor.js'
import { refundRequest, type RateLimitCredentials, type Limiter } from '../rate-limit.js'

/** What a check costs against the key's per-minute budget, cached or not. */
export const CHECK_COST = 5

const body = Joi.object({ domain: Joi.string().required(), expect: expectSchema, check: checkSchema })
  .required()
  .unknown(false)
  .label('request body')
  .messages({ 'object.base': 'request body must be a JSON object with a "domain" field' })

interface CheckBody {
  domain: string
  /** In its normal form once validated. */
  expect?: ExpectationsPatch
  /** What each location does (normal form); absent: the plain web check. */
  check?: CheckSpec
}

export function checkRoutes({ checks, limiter }: { checks: CheckSupervisor; limiter: Limiter }): ServerRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/v1/check',
      options: {
        auth: requireScope('check'),
        plugins: { rateLimit: { cost: CHECK_COST } },
        payload: { allow: 'application/json', maxBytes: 4096 },
        validate: { payload: body }
      },
      handler: async (request) => {
        const payload = request.payload as CheckBody
        const parsed = tryNormaliseDomain(payload.domain)
        if (!parsed.ok) throw Boom.badRequest(parsed.error.message)
        const { keyId } = request.auth.credentials as unknown as RateLimitCredentials
        try {
          return await checks.check(parsed.domain, {
            key: String(keyId),
            expect: checkExpectations(payload.expect),
            check: payload.check ?? null
          })
        } catch (err) {
          if (err instanceof TargetPolicyError) throw Boom.badRequest(err.message)
          if (err instanceof CapacityError) {
            // Nothing was checked: the key keeps its units, as for any request refused whole.
            await refundRequest(request, limiter)
            const boom = Boom.serverUnavailable(err.message)
            boom.output.headers['Retry-After'] = String(err.retryAfterS)
            throw boom
          }
          throw err
        }
      }
    }
  ]
}
