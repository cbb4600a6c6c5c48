import type { ServerRoute } from '@hapi/hapi'
import type { Db } from '../store/db.js'

/** A health probe must answer quickly even while the database hangs. */
const PING_TIMEOUT_MS = 1000

export async function pingDatabase(db: Db, timeoutMs = PING_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs) })
  const ping = db.raw('select 1').then(() => true, () => false)
  try {
    return await Promise.race([ping, timeout])
  } finally {
    clearTimeout(timer)
  }
}

export function healthRoutes({ db }: { db: Db }): ServerRoute[] {
  return [{
    method: 'GET',
    path: '/healthz',
    options: { auth: false },
    handler: async (_request, h) => {
      const up = await pingDatabase(db)
      return up
        ? h.response({ status: 'ok', database: 'ok' })
        : h.response({ status: 'degraded', database: 'unreachable', error: 'database unavailable' }).code(503)
    }
  }]
}
