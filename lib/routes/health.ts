import type { ServerRoute } from '@hapi/hapi'
import type { RedisPing } from '../net/redis-ping.js'
import { pingDatabase, type Db } from '../store/db.js'
import type { LocationHealth } from '../probing/locations/index.js'
import type { ChannelHealth } from '../alerts/dispatcher.js'

/** How recording keeps up, as /healthz shows it. */
export interface RecordingHealth {
  pending: number
  set_aside: number
  last_set_aside: { site_id: number; checked_at: string; code: string; at: string } | null
}

/** What a client is told to wait before asking again while the database is unreachable. */
const RETRY_AFTER_S = '5'

/** Whether the scheduler keeps up with the tracked sites (see `isBehind` in lib/monitoring/schedule/schedule-load.ts). */
export type ScheduleHealth = 'ok' | 'behind'

/**
 * 200 while the database answers, whatever the schedule: an instance that is behind still serves,
 * and a load balancer must not take it out (that would move its load onto the others). Redis is
 * reported (`null` when REDIS_URL is unset) but never makes it 503: without Redis every instance
 * still serves, with limits in its own memory. `locations` says how each location reaches sites and,
 * for one served by agents, how many answer now: a location with none leaves it at 200 too (the
 * service serves; that location's checks are unconfirmed until an agent is back).
 */
export function healthRoutes({
  db,
  schedule,
  instance,
  redis,
  locations,
  recording,
  alerts
}: {
  db: Db
  schedule?: () => ScheduleHealth
  /** INSTANCE_ID: which instance behind the load balancer answered. */
  instance: string
  redis?: RedisPing | null
  locations?: () => LocationHealth[]
  recording?: () => RecordingHealth
  /** The alert channels' health; without it, /healthz leaves `alerts` out. */
  alerts?: () => ChannelHealth[]
}): ServerRoute[] {
  return [
    {
      method: 'GET',
      path: '/healthz',
      options: { auth: false },
      handler: async (_request, h) => {
        const [up, redisUp] = await Promise.all([pingDatabase(db), redis ? redis.ping() : null])
        const shared = redisUp === null ? null : redisUp ? 'ok' : 'unreachable'
        const where = {
          ...(locations === undefined ? {} : { locations: locations() }),
          ...(recording === undefined ? {} : { recording: recording() }),
          ...(alerts === undefined ? {} : { alerts: alertHealth(alerts()) })
        }
        return up
          ? h.response({ status: 'ok', database: 'ok', schedule: schedule?.() ?? 'ok', instance, redis: shared, ...where })
          : h
              .response({ status: 'degraded', database: 'unreachable', instance, redis: shared, ...where, error: 'database unavailable' })
              .code(503)
              .header('Retry-After', RETRY_AFTER_S)
      }
    }
  ]
}

/** The alert channels as /healthz tells them: how many, and the failing ones (a failing channel never makes it 503). */
function alertHealth(channels: ChannelHealth[]): Record<string, unknown> {
  const failing = channels
    .filter((c) => c.failing)
    .map(({ id, name, kind, failing_since, last_error, pending }) => ({ id, name, kind, failing_since, last_error, pending }))
  return { channels: channels.length, failing }
}
