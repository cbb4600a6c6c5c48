import { LRUCache } from 'lru-cache'

/**
 * A rendered page: its status and HTML, encoded once. Kept as a string, the HTML was joined to the
 * response's headers and copied again on every answer (Node sends headers and a string body as one
 * string): 11% of the main thread's allocations at 30,000 sites, where `/` and site pages are the
 * largest answers (bench/monitor, V8's sampling heap profiler).
 */
export interface RenderedPage {
  status: number
  html: Buffer
}

export interface RenderCacheOptions {
  /** How long a render is served before the next request renders anew; default 1 s. */
  maxAgeMs?: number
  /** Pages kept at most (least recently used go first); default 1,000. */
  max?: number
  /** The clock, in ms; default `performance.now`. */
  now?: () => number
}

/**
 * Renders of the public pages, each reused for up to a second, with one render at a time per page
 * (requests arriving meanwhile wait for it). A page shows the tracked sites' state, which at scale
 * changes every second anyway (checks land, uptimes and durations move with the clock), so a page
 * costs at most one render a second, however many people (or scripts) ask for it: `/` at 10,000
 * sites is 10-30 ms of the main thread per render, and a site page two database queries.
 */
export class RenderCache {
  readonly #renders: LRUCache<string, RenderedPage>
  readonly #pending = new Map<string, Promise<RenderedPage>>()
  readonly #now: () => number
  #purgedAt = -Infinity

  constructor(opts: RenderCacheOptions = {}) {
    const now = opts.now ?? (() => performance.now())
    this.#now = now
    this.#renders = new LRUCache<string, RenderedPage>({
      max: opts.max ?? 1000,
      ttl: opts.maxAgeMs ?? 1000,
      ttlAutopurge: false,
      // The clock read at each lookup: lru-cache otherwise keeps a reading for a millisecond, with a
      // timer to forget it, and a clock given in `now` (tests) would not be read at all meanwhile.
      ttlResolution: 0,
      perf: { now }
    })
  }

  /** The page under `key`: a render younger than the maximum age, the one under way, or a new one. */
  get(key: string, render: () => Promise<RenderedPage>): Promise<RenderedPage> {
    const kept = this.#renders.get(key)
    if (kept !== undefined) return Promise.resolve(kept)
    let pending = this.#pending.get(key)
    if (pending === undefined) {
      pending = render()
        .then((page) => {
          // lru-cache drops an expired render only when it is read or evicted: up to 1,000 stale
          // pages (site pages of tens of KB) stayed in memory. Purged at most once a maximum age.
          const at = this.#now()
          if (at - this.#purgedAt >= this.#renders.ttl) {
            this.#purgedAt = at
            this.#renders.purgeStale()
          }
          this.#renders.set(key, page)
          return page
        })
        .finally(() => this.#pending.delete(key))
      this.#pending.set(key, pending)
    }
    return pending
  }

  /** How many renders are kept. */
  get size(): number {
    return this.#renders.size
  }
}
