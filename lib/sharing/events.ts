import { onAnnounced } from '../events/outbox.js'
import type { WakeSource } from '../events/feed.js'
import type { SharedRedis } from './redis.js'

/**
 * Tells every instance on the Redis that this one committed events, after each commit here
 * ({@link onAnnounced}); returns the function that stops it. The message says nothing but "read":
 * the events themselves are read from the database, the one source of their order.
 */
export function announceToOthers(redis: SharedRedis): () => void {
  const channel = redis.key('events')
  return onAnnounced(() => {
    redis.publish(channel, '')
  })
}

/** A feed wake-up ({@link WakeSource}) on every instance's commits, this one's included. */
export function othersAnnounce(redis: SharedRedis): WakeSource {
  return (wake) => redis.subscribe(redis.key('events'), wake)
}
