import { CheckGate, type ScheduledSite } from './check-gate.js'
import { PhaseWheel, type WheelEntry } from './phase-wheel.js'
import { BehindWarning, LoadWindow, type ScheduleLoad } from './schedule-load.js'

export type { ScheduledSite } from './check-gate.js'
export { phaseOf } from './phase-wheel.js'

/** Counters since start, plus the current load. */
export interface SchedulerStats {
  /** Checks started. */
  started: number
  /** Started within `onTimeMs` of their due time. */
  onTime: number
  /** Started more than `onTimeMs` after their due time (they waited for a free slot). */
  late: number
  /** Due again while the previous check still ran or waited for a slot: not started twice. */
  skipped: number
  /** Could not start within one interval of their due time, or found the queue full: never started. */
  shed: number
  /** Checks running now. */
  running: number
  /** Due checks waiting for a free slot. */
  queued: number
  /** Sites in the current list. */
  sites: number
  /** The same over the last minute, with rates and whether the scheduler is behind. */
  lastMinute: ScheduleLoad
}

/** How a {@link Scheduler} finds its sites, runs their checks and paces itself. */
export interface SchedulerOptions {
  /** Every site is due once per interval. */
  intervalMs: number
  /** The tracked sites now; when it fails the last known list is kept and retried on the next refresh. */
  listSites: () => Promise<ScheduledSite[]>
  /** One check of one site; a rejection is counted and reported, never thrown. */
  runCheck: (site: ScheduledSite, dueAt: number) => Promise<void>
  /** Checks running at once at most. */
  concurrency: number
  /** How often the site list is re-read; default min(intervalMs / 2, 10 s). */
  refreshMs?: number
  /** Scheduling granularity; default 250 ms. */
  tickMs?: number
  /** A check started within this long of its due time is on time; default 5 s. */
  onTimeMs?: number
  /** Due checks waiting for a slot at most; beyond it a due check is shed. Default 10,000. */
  maxQueued?: number
  /** Told at most once a minute, while the scheduler is behind (see `isBehind`), what the last minute looked like. */
  onBehind?: (load: ScheduleLoad) => void
  /** The clock, in ms; default `Date.now`. */
  now?: () => number
  onError?: (err: unknown, what: 'list' | 'check') => void
}

/**
 * Checks every site once per interval at its own phase. Two parts, composed here: the
 * {@link PhaseWheel} says when each site is due (phases, cycles aligned to the epoch, new sites
 * spread out), the {@link CheckGate} says whether a due check starts now, waits for a slot or is
 * shed. The scheduler keeps the site list fresh, turns the wheel every tick and counts the load.
 */
export class Scheduler {
  readonly #opts: Required<Omit<SchedulerOptions, 'onError' | 'onBehind'>> & Pick<SchedulerOptions, 'onError' | 'onBehind'>
  readonly #gate: CheckGate<WheelEntry>
  readonly #wheel: PhaseWheel
  /** When the last successful read of the site list began; null before the first one. */
  #listedAt: number | null = null
  #window: LoadWindow
  readonly #behind: BehindWarning
  #timers: NodeJS.Timeout[] = []
  #started = false
  #stopped = false
  /** The list the wheel was last brought in line with. */
  #listed: ScheduledSite[] | null = null
  /** The read of the site list under way, if any. */
  #running: Promise<void> | null = null
  /** A read asked for by {@link refreshNow}, to begin once the one under way ends. */
  #queued: Promise<void> | null = null

  constructor(opts: SchedulerOptions) {
    if (!(opts.intervalMs > 0) || !(opts.concurrency >= 1)) throw new RangeError('intervalMs and concurrency must be positive')
    this.#opts = {
      ...opts,
      refreshMs: opts.refreshMs ?? Math.min(opts.intervalMs / 2, 10_000),
      tickMs: opts.tickMs ?? 250,
      onTimeMs: opts.onTimeMs ?? 5000,
      maxQueued: opts.maxQueued ?? 10_000,
      now: opts.now ?? Date.now
    }
    if (!(this.#opts.maxQueued >= 0)) throw new RangeError('maxQueued must not be negative')
    const { intervalMs, concurrency, maxQueued, onTimeMs, runCheck, now } = this.#opts
    this.#window = new LoadWindow({ since: now() })
    this.#behind = new BehindWarning(opts.onBehind)
    this.#gate = new CheckGate<WheelEntry>({
      intervalMs,
      concurrency,
      maxQueued,
      onTimeMs,
      runCheck,
      now,
      count: (at, what) => {
        this.#window.add(at, what)
      },
      onError: (err) => {
        this.#report(err, 'check')
      }
    })
    this.#wheel = new PhaseWheel({ intervalMs, now, busyWith: (siteId) => this.#gate.busyWith(siteId) })
  }

  /** Loads the site list once, then checks each site at its phase until {@link stop}. */
  async start(): Promise<void> {
    if (this.#started) return
    this.#started = true
    await this.#refresh()
    if (this.#stopped) return
    const { tickMs, refreshMs } = this.#opts
    const now = this.#opts.now()
    this.#window = new LoadWindow({ since: now })
    this.#wheel.start(now)
    this.#timers.push(
      setInterval(() => {
        this.#tick()
      }, tickMs),
      setInterval(() => void this.#refresh(), refreshMs)
    )
    for (const timer of this.#timers) timer.unref()
  }

  /** Starts no further check and resolves once the running ones have finished. */
  async stop(): Promise<void> {
    this.#stopped = true
    for (const timer of this.#timers) clearInterval(timer)
    this.#timers = []
    this.#wheel.stop()
    await this.#gate.close()
  }

  stats(): SchedulerStats {
    const gate = this.#gate
    return { ...gate.counters(), running: gate.running, queued: gate.queued, sites: this.#wheel.size, lastMinute: this.load() }
  }

  /** The last minute's figures: due and started per second, late, skipped, shed, and whether it is behind. */
  load(): ScheduleLoad {
    return this.#window.read(this.#opts.now())
  }

  /**
   * Reads the site list now rather than at the next periodic refresh (the sites API added or removed
   * one) and resolves once the wheel holds it. The read begins after this call, so it sees every
   * change made before; callers arriving while one waits share it.
   */
  refreshNow(): Promise<void> {
    if (this.#queued !== null) return this.#queued
    const queued = (this.#running ?? Promise.resolve()).then(() => {
      if (this.#queued === queued) this.#queued = null
      return this.#refresh()
    })
    this.#queued = queued
    return queued
  }

  #refresh(): Promise<void> {
    // A slow database must not pile up overlapping reads, nor let an older list win over a newer one.
    if (this.#running !== null) return this.#running
    const running = this.#read().finally(() => {
      this.#running = null
    })
    this.#running = running
    return running
  }

  async #read(): Promise<void> {
    const readAt = this.#opts.now()
    let sites: ScheduledSite[]
    try {
      sites = await this.#opts.listSites()
    } catch (err) {
      this.#report(err, 'list')
      return
    }
    if (this.#stopped) return
    // The same list as last time (SiteStates hands back the array it kept) has nothing to compare.
    if (sites !== this.#listed) {
      // Sites new in this list were added after the previous read began (the first list is no news).
      this.#wheel.update(sites, this.#listedAt === null ? null : this.#listedAt + this.#opts.intervalMs)
      this.#listed = sites
    }
    this.#listedAt = readAt
  }

  #tick(): void {
    if (this.#stopped) return
    const now = this.#opts.now()
    this.#gate.shedExpired(now)
    this.#wheel.turn(now, (entry, dueAt) => {
      this.#window.add(this.#opts.now(), 'due')
      this.#gate.offer(entry, dueAt)
    })
    this.#behind.check(now, () => this.load())
  }

  #report(err: unknown, what: 'list' | 'check'): void {
    try {
      this.#opts.onError?.(err, what)
    } catch {
      // A failing error handler must not stop the scheduler.
    }
  }
}
