import type { NewEvent } from '../rules/events.js'
import type { Db } from '../store/db.js'
import { appendEvents, type EventRow } from '../store/events.js'

/**
 * Writes events to the outbox inside the caller's transaction `db`: call it last in the
 * transaction (it takes the sequence lock, held until commit), and {@link announced} once that
 * transaction has committed.
 */
export function appendToOutbox({ db, events }: { db: Db; events: readonly NewEvent[] }): Promise<EventRow[]> {
  return appendEvents({
    db,
    events: events.map((e) => ({ type: e.type, siteId: e.siteId, data: JSON.stringify(e.data), at: e.at }))
  })
}

const listeners = new Set<() => void>()

/**
 * Says that this process has just committed events, so that the feeds in it read them now rather
 * than at their next poll. Other processes (the operator tool) are seen at the next poll.
 */
export function announced(): void {
  for (const listener of listeners) listener()
}

/** Calls `listener` after every {@link announced}; returns the function that stops it. */
export function onAnnounced(listener: () => void): () => void {
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
  }
}
