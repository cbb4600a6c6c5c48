import Boom from '@hapi/boom'
import type { ServerRoute } from '@hapi/hapi'

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
const CATCH_ALL = '/{path*}'

/**
 * Hapi answers 404 for a known path with the wrong method; API clients expect 405 and an Allow
 * header naming what the path does accept.
 */
export function fallbackRoutes(): ServerRoute[] {
  return [
    {
      method: '*',
      path: CATCH_ALL,
      // An error is never kept by a cache: the path may answer next time (a badge URL, say).
      options: { auth: false, cache: { otherwise: 'no-store' } },
      handler: (request) => {
        const allowed: string[] = METHODS.filter((m) => {
          const route = request.server.match(m, request.path)
          return route !== null && route.path !== CATCH_ALL
        })
        if (allowed.length === 0) throw Boom.notFound('not found: no such route')
        if (allowed.includes('GET')) allowed.push('HEAD')
        throw Boom.methodNotAllowed(
          `method ${request.method.toUpperCase()} is not allowed here; use ${allowed.join(', ')}`,
          undefined,
          allowed
        )
      }
    }
  ]
}
