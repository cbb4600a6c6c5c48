import type { ServerRoute } from '@hapi/hapi'
import { describeBudget, type RateLimitCredentials, type Limiter } from '../rate-limit.js'

export function rateLimitRoutes({ limiter, now }: { limiter: Limiter; now: () => Date }): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/rate_limit',
      options: { plugins: { rateLimit: { cost: 0 } } },
      handler: async (request) => describeBudget(limiter, request.auth.credentials as unknown as RateLimitCredentials, now())
    }
  ]
}
