import type { ServerRoute } from '@hapi/hapi'
import { pingDatabase, type Db } from '../store/db.js'

/** What a client is told to wait before asking again while the database is unreachable. */
const RETRY_AFTER_S = '5'

/** Whether the scheduler keeps up with the tracked sites (see `isBehind` in lib/monitoring/schedule-load.ts). */
export type ScheduleHealth = 'ok' | 'behind'

/**
 * 200 while the database answers, whatever the schedule: an instance that is behind still serves,
 * and a load balancer must not take it out (that would move its load onto the others).
 */
export function healthRoutes({ db, schedule }: { db: Db; schedule?: () => ScheduleHealth }): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/healthz',
      options: { auth: false },
      handler: async (_request, h) => {
        const up = await pingDatabase(db)
        return up
          ? h.response({ status: 'ok', database: 'ok', schedule: schedule?.() ?? 'ok' })
          : h
              .response({ status: 'degraded', database: 'unreachable', error: 'database unavailable' })
              .code(503)
              .header('Retry-After', RETRY_AFTER_S)
      }
    }
  ]
}
