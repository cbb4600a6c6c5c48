import { LRUCache } from 'lru-cache'

/**
 * A rendered page: its status and HTML, encoded once. Kept as a string, the HTML would be joined to
 * the response's headers and copied again on every answer (Node sends headers and a string body as
 * one string), and `/` and site pages are the largest answers the service sends.
 */
export interface RenderedPage {
  status: number
  html: Buffer
  /** Its Content-Security-Policy, when not the pages' own (a status page allows its logo's origin). */
  csp?: string
}

export interface RenderCacheOptions {
  /** How long a render is served as it is; default 1 s. */
  maxAgeMs?: number
  /**
   * How long a render older than `maxAgeMs` may still be served while the next one is made; default
   * 5 s. Older than this, a request waits for the new render.
   */
  staleMs?: number
  /** Pages kept at most (least recently used go first); default 1,000. */
  max?: number
  /** The clock, in ms; default `performance.now`. */
  now?: () => number
}

interface Kept {
  page: RenderedPage
  /** When its render began: what it shows is at least this old. */
  at: number
}

/**
 * Renders of the public pages, with one render at a time per page. A page shows the tracked sites'
 * state, which at scale changes every second anyway (checks land, uptimes and durations move with
 * the clock), so a page costs at most one render a second, however many people (or scripts) ask for
 * it: `/` at 10,000 sites is 10-30 ms of the main thread per render, and a site page two database
 * queries.
 *
 * A render younger than `maxAgeMs` is served as it is; one younger than `staleMs` is served while the
 * next render is made (stale-while-revalidate): a request never waits for a render of a page that
 * was rendered in the last few seconds, so the pages' p99 is not the render's own time, which grows
 * with the sites and a busy database (docs/decisions.md, Site pages).
 */
export class RenderCache {
  readonly #renders: LRUCache<string, Kept>
  readonly #pending = new Map<string, Promise<RenderedPage>>()
  readonly #now: () => number
  readonly #maxAgeMs: number
  #purgedAt = -Infinity

  constructor(opts: RenderCacheOptions = {}) {
    const now = opts.now ?? (() => performance.now())
    this.#now = now
    this.#maxAgeMs = opts.maxAgeMs ?? 1000
    this.#renders = new LRUCache<string, Kept>({
      max: opts.max ?? 1000,
      ttl: Math.max(this.#maxAgeMs, opts.staleMs ?? 5000),
      ttlAutopurge: false,
      // The clock read at each lookup: lru-cache otherwise keeps a reading for a millisecond, with a
      // timer to forget it, and a clock given in `now` (tests) would not be read at all meanwhile.
      ttlResolution: 0,
      perf: { now }
    })
  }

  /**
   * The page under `key`: a render younger than the maximum age; one younger than the stale limit,
   * while the next is made; otherwise the render under way, or a new one. A render made in the
   * background that fails leaves the one kept as it is (served until the stale limit, after which
   * a request waits for a render, and sees its failure).
   */
  get(key: string, render: () => Promise<RenderedPage>): Promise<RenderedPage> {
    const kept = this.#renders.get(key)
    if (kept !== undefined) {
      if (this.#now() - kept.at >= this.#maxAgeMs && !this.#pending.has(key)) this.#render(key, render).catch(() => {})
      return Promise.resolve(kept.page)
    }
    return this.#pending.get(key) ?? this.#render(key, render)
  }

  /**
   * Drops the render kept under `key`, and the one under way: the next request waits for a render
   * begun after this call. A render under way still answers the requests already waiting for it,
   * but is not kept (it may have read what the caller knows to be out of date).
   */
  forget(key: string): void {
    this.#renders.delete(key)
    this.#pending.delete(key)
  }

  #render(key: string, render: () => Promise<RenderedPage>): Promise<RenderedPage> {
    const at = this.#now()
    const pending: Promise<RenderedPage> = render()
      .then((page) => {
        if (this.#pending.get(key) !== pending) return page
        // lru-cache drops an expired render only when it is read or evicted, so up to 1,000 stale
        // pages (site pages of tens of KB) would stay in memory. Purged at most once a stale limit.
        const done = this.#now()
        if (done - this.#purgedAt >= this.#renders.ttl) {
          this.#purgedAt = done
          this.#renders.purgeStale()
        }
        this.#renders.set(key, { page, at })
        return page
      })
      .finally(() => {
        if (this.#pending.get(key) === pending) this.#pending.delete(key)
      })
    this.#pending.set(key, pending)
    return pending
  }

  /** How many renders are kept. */
  get size(): number {
    return this.#renders.size
  }
}
