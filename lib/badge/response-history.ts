import { LRUCache } from 'lru-cache'
import type { Db } from '../store/db.js'
import { listResponseTimes, type ResponseTimeBucket } from '../store/response-times.js'
import { NO_DATA, type WindowFigure } from './figures.js'

export const HOUR_MS = 3_600_000
/** The longest window, 90 days, and the hour its start falls in. */
const MAX_HOURS = 90 * 24 + 1
/** A series is read again (its open hours only) when a hit finds it older than this. */
export const REFRESH_MS = 30_000
/** An hour's checks may still be written this long after it ends (queued, or from another instance): read again until then. */
const SETTLE_MS = 5 * 60_000
/** Memory the series may take together: about 4,000 sites with 35 days of checks. */
const MAX_BYTES = 32 * 1024 * 1024

/** The hourly buckets of a site's checks in [from, to); `from` on an hour. */
export type ListHours = (args: { siteId: number; from: Date; to: Date }) => Promise<ResponseTimeBucket[]>

const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS)

/**
 * A site's consensus response times summed per UTC hour, from its first check (at most 90 days
 * back) to now: what response-time badges and the chart are made of, without reading the checks
 * per hit.
 */
export class HourlySeries {
  /** The hour (hours since the epoch) of `sums[0]`. */
  base: number
  /** Per hour: the sum and the number of the response times of its answered checks. */
  readonly sums: number[] = []
  readonly counts: number[] = []
  /** The tracking period's first check (ms): checks before it are another period's. */
  readonly since: number
  /** From this hour on, hours are read again at each refresh. */
  openHour: number
  refreshedAt: number
  /** Moves with each refresh: what is worked out from the series is kept until it moves. */
  version = 0
  refreshing = false
  /** Figures worked out at `version`, by window index. */
  memo: Array<WindowFigure | undefined> = []

  constructor(since: number, at: number) {
    this.since = since
    this.base = Math.max(hourOf(since), hourOf(at) - MAX_HOURS + 1)
    this.openHour = this.base
    this.refreshedAt = at
  }

  /** Takes the buckets read for hours [from, hourOf(at)]: those hours hold exactly what was read. */
  apply(buckets: readonly ResponseTimeBucket[], from: number, at: number): void {
    const last = hourOf(at)
    while (this.base + this.sums.length <= last) {
      this.sums.push(0)
      this.counts.push(0)
    }
    for (let h = Math.max(from, this.base); h <= last; h++) {
      this.sums[h - this.base] = 0
      this.counts[h - this.base] = 0
    }
    for (const b of buckets) {
      const i = hourOf(b.start.getTime()) - this.base
      if (i < 0 || i >= this.sums.length || b.avg_ms === null) continue
      this.sums[i] = b.avg_ms * b.answered
      this.counts[i] = b.answered
    }
    // Hours past the longest window are dropped.
    const drop = this.sums.length - MAX_HOURS
    if (drop > 0) {
      this.sums.splice(0, drop)
      this.counts.splice(0, drop)
      this.base += drop
    }
    this.openHour = Math.max(this.base, Math.min(last, hourOf(at - SETTLE_MS)))
    this.refreshedAt = at
    this.version++
    this.memo = []
  }

  /** The first hour with an answered check, or null. */
  firstHour(): number | null {
    const i = this.counts.findIndex((n) => n > 0)
    return i === -1 ? null : this.base + i
  }

  /**
   * The mean response time over the hours that overlap the window ending at `at` (it may start up
   * to an hour early); a series whose first answered hour comes after the window's first says how
   * much it covers.
   */
  mean(windowMs: number, at: number): WindowFigure {
    const start = hourOf(at - windowMs)
    let sum = 0
    let count = 0
    for (let i = Math.max(0, start - this.base); i < this.sums.length; i++) {
      sum += this.sums[i] as number
      count += this.counts[i] as number
    }
    if (count === 0) return NO_DATA
    const first = this.firstHour() as number
    const covered = first > start ? at - Math.max(first * HOUR_MS, this.since) : null
    return { value: sum / count, coveredMs: covered }
  }

  bytes(): number {
    return this.sums.length * 16 + 256
  }
}

/**
 * The response-time series of the sites whose badges are asked for, kept in memory: a series is
 * read once (one grouped query over up to 90 days), then only its open hours, in the background
 * of the hit that finds it older than {@link REFRESH_MS}: that hit and those meanwhile answer from
 * what is held. Only the very first look waits for a read. Bounded by bytes; a series dropped is
 * read again when next asked for.
 */
export class ResponseHistory {
  readonly #list: ListHours
  /** By site id; a series of an earlier tracking period is read anew. */
  readonly #series: LRUCache<number, HourlySeries>
  readonly #loading = new Map<string, Promise<HourlySeries>>()
  /** Refreshes under way, for {@link idle}. */
  readonly #refreshing = new Set<Promise<void>>()

  constructor({ db, list, maxBytes = MAX_BYTES }: { db?: Db; list?: ListHours; maxBytes?: number }) {
    if (list === undefined && db === undefined) throw new Error('ResponseHistory needs a database or a reader')
    this.#list = list ?? (({ siteId, from, to }) => listResponseTimes({ db: db as Db, siteId, from, to, bucketMs: HOUR_MS }))
    this.#series = new LRUCache({ maxSize: maxBytes, sizeCalculation: (s) => s.bytes() })
  }

  /** The site's series for its tracking period begun at `since`: held, or a promise on the first look. */
  series(siteId: number, since: Date, at: number): HourlySeries | Promise<HourlySeries> {
    const held = this.#series.get(siteId)
    if (held !== undefined && held.since === since.getTime()) {
      if (at - held.refreshedAt >= REFRESH_MS && !held.refreshing) this.#refresh(held, siteId, at)
      return held
    }
    const key = `${siteId}@${since.getTime()}`
    let loading = this.#loading.get(key)
    if (loading === undefined) {
      const series = new HourlySeries(since.getTime(), at)
      loading = this.#list({ siteId, from: new Date(series.base * HOUR_MS), to: new Date(at) })
        .then((buckets) => {
          series.apply(buckets, series.base, at)
          this.#series.set(siteId, series)
          return series
        })
        .finally(() => this.#loading.delete(key))
      this.#loading.set(key, loading)
    }
    return loading
  }

  #refresh(series: HourlySeries, siteId: number, at: number): void {
    series.refreshing = true
    const from = series.openHour
    const refresh = this.#list({ siteId, from: new Date(from * HOUR_MS), to: new Date(at) })
      .then((buckets) => {
        series.apply(buckets, from, at)
      })
      // The series held answers on; the next look after the interval tries again.
      .catch(() => {
        series.refreshedAt = at
      })
      .finally(() => {
        series.refreshing = false
        this.#refreshing.delete(refresh)
      })
    this.#refreshing.add(refresh)
  }

  /** Resolves once the refreshes under way now have ended (tests, and a clean stop). */
  async idle(): Promise<void> {
    await Promise.all([...this.#refreshing, ...this.#loading.values()].map((p) => p.catch(() => {})))
  }

  /** Series held now. */
  get size(): number {
    return this.#series.size
  }
}
