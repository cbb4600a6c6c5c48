import type { ServerRoute } from '@hapi/hapi'
import { pingDatabase, type Db } from '../store/db.js'

/** What a client is told to wait before asking again while the database is unreachable. */
const RETRY_AFTER_S = '5'

export function healthRoutes({ db }: { db: Db }): ServerRoute[] {
  return [{
    method: 'GET',
    path: '/healthz',
    options: { auth: false },
    handler: async (_request, h) => {
      const up = await pingDatabase(db)
      return up
        ? h.response({ status: 'ok', database: 'ok' })
        : h.response({ status: 'degraded', database: 'unreachable', error: 'database unavailable' }).code(503).header('Retry-After', RETRY_AFTER_S)
    }
  }]
}
