import { PassThrough, type Readable } from 'node:stream'
import type { Logger } from 'pino'
import { PAGE_EVENT_TYPES as PAGE_TYPES } from '../rules/events.js'
import type { Db } from '../store/db.js'
import type { EventRow } from '../store/events.js'
import { listPagesOfSites } from '../store/status-pages.js'
import type { EventFeed } from './feed.js'
import { StreamRefusedError, StreamSlots, writeOrCut } from './stream-slots.js'
import { HEARTBEAT_MS } from './streams.js'

/**
 * Open page streams one client address may hold; the next is refused (429). Generous: an office
 * behind one address may keep its status page open in every browser.
 */
export const MAX_PAGE_STREAMS_PER_CLIENT = 50
/** Open page streams in the whole instance; the next is refused (503). */
export const MAX_PAGE_STREAMS = 5000
const MAX_BUFFERED_BYTES = 64 << 10

/** The event types a page stream carries (lib/rules/events.ts). */
export const PAGE_EVENT_TYPES: ReadonlySet<string> = new Set(PAGE_TYPES)

/**
 * An event as a page stream frames it: its type, the site as the page names it, and the time. A
 * site the page shows under a display name goes without its domain (`null`), as on the page, its
 * JSON and its feed. The stored payload may hold what a page never shows (a slow event's
 * threshold); a page's script only needs to know that something changed, and fetches the page again.
 */
export function pageEventFrame(event: EventRow, site: { name: string; domain: string | null }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify({ name: site.name, domain: site.domain, at: event.created_at.toISOString() })}\n\n`
}

interface PageStream {
  slug: string
  client: string
  out: PassThrough
}

/**
 * The status pages' public event streams, and what keeps their renders current. Every event of
 * {@link PAGE_EVENT_TYPES} the feed delivers is matched to the pages that list its site now (one
 * indexed read per delivery, so a page's list changed a moment ago is honoured); those pages'
 * renders are forgotten (`forget`), and only then is the event written to their streams, so that
 * a page fetched on it is rendered anew. Streams are live only (a reconnecting page fetches itself
 * again), bounded per client address and in total, with a comment every `heartbeatMs`.
 */
export class PageStreams {
  readonly #db: Db
  readonly #feed: EventFeed
  readonly #logger: Logger
  readonly #forget: (slug: string) => void
  readonly #heartbeatMs: number
  readonly #slots: StreamSlots
  readonly #bySlug = new Map<string, Set<PageStream>>()
  #batch: EventRow[] = []
  /** Deliveries run one after another, so that events reach a stream in id order. */
  #delivering: Promise<void> = Promise.resolve()
  #unsubscribe: (() => void) | undefined
  #heartbeat: NodeJS.Timeout | undefined
  #closed = false

  constructor({
    db,
    feed,
    logger,
    forget,
    heartbeatMs = HEARTBEAT_MS,
    maxPerClient = MAX_PAGE_STREAMS_PER_CLIENT,
    maxTotal = MAX_PAGE_STREAMS
  }: {
    db: Db
    feed: EventFeed
    logger: Logger
    /** Drops the kept renders of the page `slug`. */
    forget: (slug: string) => void
    heartbeatMs?: number
    maxPerClient?: number
    maxTotal?: number
  }) {
    this.#db = db
    this.#feed = feed
    this.#logger = logger
    this.#forget = forget
    this.#heartbeatMs = heartbeatMs
    this.#slots = new StreamSlots({
      maxPerOwner: maxPerClient,
      maxTotal,
      perOwnerCode: 'STREAMS_PER_CLIENT',
      perOwnerMessage: (held) => `too many open status page streams from this address (${held}); close one first`,
      totalMessage: 'too many open status page streams on this server; retry later'
    })
  }

  /** Takes the feed's events from now on: renders are forgotten whether or not a stream is open. */
  start(): void {
    this.#unsubscribe ??= this.#feed.subscribe((event) => {
      this.#take(event)
    })
  }

  /** Streams open now, in all or from one client address. */
  count(client?: string): number {
    return this.#slots.count(client)
  }

  /**
   * Opens a stream of the page `slug`'s events for `client` (its address). Throws
   * {@link StreamRefusedError} over a limit. Destroying the stream frees its slot.
   */
  open({ slug, client }: { slug: string; client: string }): Readable {
    if (this.#closed) throw new StreamRefusedError('STREAMS_CLOSED', 'the service is stopping')
    this.#slots.take(client)
    const stream: PageStream = { slug, client, out: new PassThrough() }
    const streams = this.#bySlug.get(slug) ?? new Set()
    streams.add(stream)
    this.#bySlug.set(slug, streams)
    stream.out.once('close', () => {
      this.#release(stream)
    })
    this.#startHeartbeat()
    stream.out.write(': events of this page from now on\n\n')
    return stream.out
  }

  /** Ends every stream and stops taking events: the service is stopping. Resolves once a delivery under way is done. */
  async close(): Promise<void> {
    this.#closed = true
    this.#unsubscribe?.()
    this.#unsubscribe = undefined
    for (const streams of [...this.#bySlug.values()]) {
      for (const stream of [...streams]) {
        stream.out.end(': the server is stopping\n\n')
        this.#release(stream)
      }
    }
    await this.#delivering
  }

  /** The feed hands events over one at a time; those of one turn are matched to pages with one read. */
  #take(event: EventRow): void {
    if (event.site_id === null || !PAGE_EVENT_TYPES.has(event.type)) return
    this.#batch.push(event)
    if (this.#batch.length > 1) return
    queueMicrotask(() => {
      const batch = this.#batch
      this.#batch = []
      this.#delivering = this.#delivering.then(() => this.#deliver(batch))
    })
  }

  async #deliver(batch: readonly EventRow[]): Promise<void> {
    let pages: Awaited<ReturnType<typeof listPagesOfSites>>
    try {
      pages = await listPagesOfSites({ db: this.#db, siteIds: batch.map((e) => e.site_id ?? 0) })
    } catch (err) {
      // The pages' renders age out within seconds, and their scripts fetch them every minute.
      this.#logger.warn({ err, events: batch.length }, 'matching events to status pages failed; their streams miss them')
      return
    }
    const listingsOf = new Map<number, typeof pages>()
    for (const p of pages) listingsOf.set(p.site_id, [...(listingsOf.get(p.site_id) ?? []), p])
    const touched = new Set(pages.map((p) => p.slug))
    for (const slug of touched) this.#forget(slug)
    for (const event of batch) {
      for (const listing of listingsOf.get(event.site_id ?? 0) ?? []) {
        const frame = pageEventFrame(event, listing)
        for (const stream of this.#bySlug.get(listing.slug) ?? []) this.#write(stream, frame)
      }
    }
  }

  /** Writes a frame; a client that takes nothing (its buffer past 64 KiB) is cut, and its page fetches itself when it reconnects. */
  #write(stream: PageStream, frame: string): void {
    if (!writeOrCut(stream.out, frame, MAX_BUFFERED_BYTES)) this.#release(stream)
  }

  #release(stream: PageStream): void {
    const streams = this.#bySlug.get(stream.slug)
    if (streams?.delete(stream) !== true) return
    if (streams.size === 0) this.#bySlug.delete(stream.slug)
    this.#slots.free(stream.client)
    if (this.#slots.count() === 0) {
      clearInterval(this.#heartbeat)
      this.#heartbeat = undefined
    }
  }

  #startHeartbeat(): void {
    if (this.#heartbeat !== undefined) return
    this.#heartbeat = setInterval(() => {
      for (const streams of this.#bySlug.values()) for (const stream of streams) this.#write(stream, ':\n\n')
    }, this.#heartbeatMs)
    this.#heartbeat.unref()
  }
}
