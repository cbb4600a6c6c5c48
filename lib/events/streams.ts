import { PassThrough, type Readable } from 'node:stream'
import type { Logger } from 'pino'
import type { Db } from '../store/db.js'
import { latestEventId, listEventsAfter, oldestEventId, type EventRow } from '../store/events.js'
import type { EventFeed } from './feed.js'
import { StreamRefusedError, StreamSlots, writeOrCut } from './stream-slots.js'

/** Open streams one key may hold; the next is refused (429). */
export const MAX_STREAMS_PER_KEY = 10
/**
 * Open streams in the whole instance; the next is refused (503). Each holds a connection (a file
 * descriptor) and a few KiB; 10,000 stay well inside the descriptor limit the service needs.
 */
export const MAX_STREAMS = 10_000
/** A comment on every stream this often, so proxies and clients see the connection alive (at least every 15 s). */
export const HEARTBEAT_MS = 10_000
/** Stored events per read while replaying. */
const REPLAY_PAGE = 500
/** A client this far behind (bytes not yet taken by its socket) is cut; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 1 << 20

export { StreamRefusedError, type StreamRefusedCode } from './stream-slots.js'

/** An event as a Server-Sent Events frame: its id, type and JSON payload (JSON text holds no newline). */
export function eventFrame(event: EventRow): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${event.data}\n\n`
}

interface OpenStream {
  key: string
  out: PassThrough
  /** The newest id written; nothing at or below it is written again. */
  cursor: number
  /** Live events that arrived while the stored log was being replayed, in id order. */
  pending: EventRow[] | null
}

/**
 * The open event streams: each takes the events the {@link EventFeed} delivers, after replaying
 * from the stored log what followed the id the client last saw. Bounded per key and in total; a
 * comment is written on every stream every `heartbeatMs`; `close()` ends them all (shutdown).
 */
export class EventStreams {
  readonly #db: Db
  readonly #feed: EventFeed
  readonly #logger: Logger
  readonly #heartbeatMs: number
  readonly #slots: StreamSlots
  readonly #open = new Set<OpenStream>()
  /** Live events the feed delivered in this turn of the event loop, written out together at its end. */
  #batch: EventRow[] = []
  #unsubscribe: (() => void) | undefined
  #heartbeat: NodeJS.Timeout | undefined
  #closed = false

  constructor({
    db,
    feed,
    logger,
    heartbeatMs = HEARTBEAT_MS,
    maxPerKey = MAX_STREAMS_PER_KEY,
    maxTotal = MAX_STREAMS
  }: {
    db: Db
    feed: EventFeed
    logger: Logger
    heartbeatMs?: number
    maxPerKey?: number
    maxTotal?: number
  }) {
    this.#db = db
    this.#feed = feed
    this.#logger = logger
    this.#heartbeatMs = heartbeatMs
    this.#slots = new StreamSlots({
      maxPerOwner: maxPerKey,
      maxTotal,
      perOwnerCode: 'STREAMS_PER_KEY',
      perOwnerMessage: (held) => `too many open event streams: this key has ${held}, the most it may hold; close one first`,
      totalMessage: 'too many open event streams on this server; retry later'
    })
  }

  /** Streams open now, in all or for one key. */
  count(key?: string): number {
    return this.#slots.count(key)
  }

  /**
   * Opens a stream for `key`: the events after `since` (replayed from the stored log, then live),
   * or with no `since`, the events from now on. Throws {@link StreamRefusedError} over a limit, and
   * the database's error when it cannot tell where to start; the stream is then not counted.
   * Destroying the stream (the client went away) frees its slot at once.
   */
  async open({ key, since }: { key: string; since: number | null }): Promise<Readable> {
    if (this.#closed) throw new StreamRefusedError('STREAMS_CLOSED', 'the service is stopping')
    this.#slots.take(key)
    // Counted and subscribed before any wait, so that a limit holds and no live event is missed.
    // A live event the feed delivered but this class has not yet written out is at or below the
    // feed's lastId, so a stream starting now neither gets it nor misses what follows.
    const stream: OpenStream = {
      key,
      out: new PassThrough(),
      cursor: this.#feed.lastId,
      pending: since === null ? null : []
    }
    this.#open.add(stream)
    this.#unsubscribe ??= this.#feed.subscribe((event) => {
      this.#take(event)
    })
    stream.out.once('close', () => {
      this.#release(stream)
    })
    this.#startHeartbeat()
    if (since === null) {
      stream.out.write(`: events after ${stream.cursor}\n\n`)
      return stream.out
    }
    let first: string
    try {
      const [latest, oldest] = await Promise.all([latestEventId({ db: this.#db }), oldestEventId({ db: this.#db })])
      ;({ cursor: stream.cursor, comment: first } = replayStart(since, latest, oldest))
    } catch (err) {
      stream.out.destroy()
      throw err
    }
    stream.out.write(`: ${first}\n\n`)
    void this.#replay(stream)
    return stream.out
  }

  /** Ends every stream cleanly and refuses new ones: the service is stopping. */
  close(): void {
    this.#closed = true
    for (const stream of [...this.#open]) {
      stream.out.end(': the server is stopping; reconnect with Last-Event-ID\n\n')
      this.#release(stream)
    }
  }

  /**
   * The feed hands events over one at a time, a page of them in one go (100 outages opening
   * together are 100 events). Written one by one, each would become a frame and a write per stream:
   * 100,000 strings and writes for 1,000 streams, garbage that grows the heap by tens of MB a burst.
   * So the events of one turn are written together at its end: one text for all streams, and one
   * write of the same bytes to each stream that is up to date.
   */
  #take(event: EventRow): void {
    this.#batch.push(event)
    if (this.#batch.length === 1)
      queueMicrotask(() => {
        this.#flush()
      })
  }

  #flush(): void {
    const batch = this.#batch
    this.#batch = []
    const first = batch[0]?.id
    const last = batch.at(-1)?.id
    if (first === undefined || last === undefined) return
    let frames: Buffer | undefined
    for (const stream of this.#open) {
      if (stream.pending !== null) stream.pending.push(...batch)
      else if (stream.cursor < first) {
        frames ??= Buffer.from(batch.map(eventFrame).join(''))
        this.#send(stream, frames, last)
      } else for (const event of batch) this.#write(stream, event)
    }
  }

  #write(stream: OpenStream, event: EventRow): void {
    if (event.id <= stream.cursor) return
    this.#send(stream, eventFrame(event), event.id)
  }

  /** Writes `frames`, which end with event `lastId`; cuts a client too far behind. */
  #send(stream: OpenStream, frames: string | Buffer, lastId: number): void {
    if (stream.out.writableEnded) return
    stream.cursor = lastId
    if (!writeOrCut(stream.out, frames, MAX_BUFFERED_BYTES)) this.#release(stream)
  }

  /** Writes the stored events after the stream's cursor page by page, then those that came live meanwhile. */
  async #replay(stream: OpenStream): Promise<void> {
    try {
      for (;;) {
        const rows = await listEventsAfter({ db: this.#db, afterId: stream.cursor, limit: REPLAY_PAGE })
        if (stream.out.destroyed || stream.out.writableEnded) return
        for (const event of rows) this.#write(stream, event)
        if (rows.length < REPLAY_PAGE) break
        if (stream.out.writableNeedDrain) await drained(stream.out)
      }
      const pending = stream.pending ?? []
      stream.pending = null
      for (const event of pending) this.#write(stream, event)
    } catch (err) {
      this.#logger.warn({ err }, 'replaying events failed; the stream ends for the client to resume')
      if (!stream.out.writableEnded) stream.out.end(': replay failed; reconnect with Last-Event-ID\n\n')
      this.#release(stream)
    }
  }

  #release(stream: OpenStream): void {
    if (!this.#open.delete(stream)) return
    this.#slots.free(stream.key)
    if (this.#open.size === 0) {
      clearInterval(this.#heartbeat)
      this.#heartbeat = undefined
      this.#unsubscribe?.()
      this.#unsubscribe = undefined
      this.#batch = []
    }
  }

  #startHeartbeat(): void {
    if (this.#heartbeat !== undefined) return
    this.#heartbeat = setInterval(() => {
      for (const stream of this.#open) if (!stream.out.writableEnded) stream.out.write(':\n\n')
    }, this.#heartbeatMs)
    this.#heartbeat.unref()
  }
}

/**
 * Where a replay after `since` starts, and the stream's first comment. Ids have no gaps, so when
 * the oldest stored id is past `since + 1` the events between were pruned: the replay starts at the
 * oldest kept and says so. An id beyond the newest (another database, say) starts from the newest.
 */
export function replayStart(since: number, latest: number, oldest: number | null): { cursor: number; comment: string } {
  if (since > latest) return { cursor: latest, comment: `no event ${since} here (the newest is ${latest}); events after ${latest}` }
  if (since < latest && (oldest === null || oldest > since + 1)) {
    const from = oldest ?? latest + 1
    return { cursor: from - 1, comment: `events ${since + 1} to ${from - 1} were pruned; replaying from ${from}` }
  }
  return { cursor: since, comment: `replaying events after ${since}` }
}

/** Resolves once the stream has passed its buffered bytes on, or has closed. */
function drained(out: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done)
      out.off('close', done)
      resolve()
    }
    out.once('drain', done)
    out.once('close', done)
  })
}
