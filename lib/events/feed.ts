import type { Logger } from 'pino'
import type { Db } from '../store/db.js'
import { latestEventId, listEventsAfter, type EventRow } from '../store/events.js'
import { onAnnounced } from './outbox.js'

/** How often the feed reads the outbox when nothing wakes it. */
export const FEED_POLL_MS = 250
/** Events per read; a longer backlog is read page after page at once. */
const PAGE = 500

/** Receives each new event, in id order, once. */
export type FeedListener = (event: EventRow) => void

/** Something that says events were committed: calls `wake` each time; returns the function that stops it. */
export type WakeSource = (wake: () => void) => () => void

/**
 * The one reader of the outbox on the main thread: every `pollMs` (250 ms) it reads the events
 * after the last one it saw (one indexed query, however many streams and subscribers there are)
 * and hands each to every subscriber in id order. It starts after the newest event committed when
 * it starts, and reads at once when this process has just committed events ({@link onAnnounced}),
 * or when another source of `wakeups` says so (with REDIS_URL, another instance's commits, see
 * lib/sharing/events.ts); other events (the operator tool's) are seen at the next poll. A wake-up
 * only makes it read what follows the last id it saw, so the order and the absence of gaps never
 * depend on who woke it or on a lost message. While the database is unreachable it logs once and
 * keeps polling.
 *
 * Use: `const unsubscribe = feed.subscribe((event) => ...)`; call `unsubscribe()` when done. A
 * listener runs synchronously during delivery: it must not throw (a throw is logged and the
 * others still get the event) and should only note the event or wake its own loop (the webhook
 * dispatcher wakes on it; streams write it out). Events are delivered only after they committed,
 * and since ids commit in order, a subscriber that has seen id N has seen every id below N that
 * was delivered after it subscribed. `lastId` is the newest id delivered so far: an event stream
 * replays the stored log up to it and takes the rest live (see streams.ts).
 */
export class EventFeed {
  readonly #db: Db
  readonly #logger: Logger
  readonly #pollMs: number
  readonly #listeners = new Set<FeedListener>()
  #lastId = 0
  #timer: NodeJS.Timeout | undefined
  #reading: Promise<void> | undefined
  #again = false
  #failing = false
  #failedReads = 0
  #stopped = false
  readonly #wakeups: readonly WakeSource[]
  #stopWakeups: Array<() => void> = []

  constructor({
    db,
    logger,
    pollMs = FEED_POLL_MS,
    wakeups = [onAnnounced]
  }: {
    db: Db
    logger: Logger
    pollMs?: number
    /** What wakes the feed before its next poll; default: this process's commits. */
    wakeups?: readonly WakeSource[]
  }) {
    this.#db = db
    this.#logger = logger
    this.#pollMs = pollMs
    this.#wakeups = wakeups
  }

  /** Starts after the newest event committed now, then polls. */
  async start(): Promise<void> {
    this.#lastId = await latestEventId({ db: this.#db })
    this.#stopWakeups = this.#wakeups.map((source) =>
      source(() => {
        this.wake()
      })
    )
    this.#schedule()
  }

  /** The newest event id delivered so far (at start, the newest committed). */
  get lastId(): number {
    return this.#lastId
  }

  /** Calls `listener` with every event delivered from now on; returns the function that stops it. */
  subscribe(listener: FeedListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** How many subscribers there are. */
  get subscribers(): number {
    return this.#listeners.size
  }

  /** Reads that failed since start (the database unreachable): the log says so once per spell. */
  get failedReads(): number {
    return this.#failedReads
  }

  /** Reads now rather than at the next poll (once the read under way, if any, has finished). */
  wake(): void {
    if (this.#stopped) return
    if (this.#reading) {
      this.#again = true
      return
    }
    clearTimeout(this.#timer)
    this.#reading = this.#read().finally(() => {
      this.#reading = undefined
      if (this.#again) {
        this.#again = false
        this.wake()
      } else this.#schedule()
    })
  }

  /** Stops polling; resolves once a read under way has finished. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    for (const stop of this.#stopWakeups) stop()
    await this.#reading
  }

  #schedule(): void {
    if (this.#stopped) return
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.wake()
    }, this.#pollMs)
    this.#timer.unref()
  }

  async #read(): Promise<void> {
    try {
      for (;;) {
        const rows = await listEventsAfter({ db: this.#db, afterId: this.#lastId, limit: PAGE })
        for (const event of rows) {
          this.#lastId = event.id
          this.#deliver(event)
        }
        if (rows.length < PAGE || this.#stopped) break
      }
      if (this.#failing) {
        this.#failing = false
        this.#logger.info('reading events again')
      }
    } catch (err) {
      this.#failedReads++
      if (!this.#failing) this.#logger.warn({ err }, 'reading events failed; retrying')
      this.#failing = true
    }
  }

  #deliver(event: EventRow): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event)
      } catch (err) {
        this.#logger.error({ err }, 'an event subscriber failed')
      }
    }
  }
}
