import type { ServerRoute } from '@hapi/hapi'
import type { RateLimiter } from '../rate-limit.js'
import type { Db } from '../store/db.js'
import { fallbackRoutes } from './fallback.js'
import { healthRoutes } from './health.js'
import { rateLimitRoutes } from './rate-limit.js'

export interface RouteDeps {
  db: Db
  limiter: RateLimiter
  now: () => Date
}

/** The route table: every path the service answers, one module per resource. */
export function routes(deps: RouteDeps): ServerRoute[] {
  return [
    ...healthRoutes(deps),
    ...rateLimitRoutes(deps),
    ...fallbackRoutes()
  ]
}
