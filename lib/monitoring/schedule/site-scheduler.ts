import { CheckGate, type GateEntry, type ScheduledSite } from './check-gate.js'
import { BehindWarning, LoadWindow, type LoadEvent, type ScheduleLoad } from './schedule-load.js'

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
  /** Could not start within one interval (the site's) of their due time, or found the queue full: never started. */
  shed: number
  /** Checks running now. */
  running: number
  /** Due checks waiting for a slot. */
  queued: number
  /** Sites in the current list. */
  sites: number
  /** The same over the last minute, with rates and whether the scheduler is behind. */
  lastMinute: ScheduleLoad
}

/**
 * What the service asks of its scheduler, whichever it runs: the single-process `Scheduler` (one
 * instance, SQLite) or the `LeaseScheduler` (instances sharing one MySQL database).
 */
export interface SiteScheduler {
  /** Reads the schedule once, then checks each site at its phase until {@link stop}. */
  start(): Promise<void>
  /** Starts no further check and resolves once the running ones have finished. */
  stop(): Promise<void>
  stats(): SchedulerStats
  /** The last minute's figures: due and started per second, late, skipped, shed, and whether it is behind. */
  load(): ScheduleLoad
  /** Takes in the sites added or removed now rather than at the next periodic read; resolves once the schedule holds them. */
  refreshNow(): Promise<void>
  /** After `stop`, once the checks are recorded: says this instance is gone, so that others take over what it held. */
  retire(): Promise<void>
}

/** How a scheduler runs its checks and paces itself; `Failure` names what else can fail besides a check. */
export interface GatedSchedulerOptions<Failure extends string> {
  /** Every site is due once per interval: its own (`interval_s`), or this one (CHECK_INTERVAL_S). */
  intervalMs: number
  /** One check of one site; a rejection is counted and reported, never thrown. */
  runCheck: (site: ScheduledSite, dueAt: number) => Promise<void>
  /** Checks running at once at most. */
  concurrency: number
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
  onError?: (err: unknown, what: Failure | 'check') => void
}

/**
 * What both schedulers share: the {@link CheckGate} that starts, queues or sheds each due check,
 * the last minute's load and its behind warning, the tick that drives them, the counters and the
 * stop. A scheduler adds where its due checks come from ({@link handDue}, called every tick) and
 * how it learns of its sites.
 */
export abstract class GatedScheduler<E extends GateEntry, Failure extends string> implements SiteScheduler {
  protected readonly gate: CheckGate<E>
  protected readonly intervalMs: number
  protected readonly concurrency: number
  protected readonly onTimeMs: number
  protected readonly now: () => number
  /** Set by {@link stop}: from then on nothing falls due and nothing is read or claimed. */
  protected stopped = false
  readonly #tickMs: number
  readonly #onError: ((err: unknown, what: Failure | 'check') => void) | undefined
  readonly #behind: BehindWarning
  #window: LoadWindow
  #timers: NodeJS.Timeout[] = []
  /** Due checks shed before they reached the gate (see {@link shedBeforeGate}). */
  #shedBeforeGate = 0

  constructor(opts: GatedSchedulerOptions<Failure>) {
    if (!(opts.intervalMs > 0) || !(opts.concurrency >= 1)) throw new RangeError('intervalMs and concurrency must be positive')
    const maxQueued = opts.maxQueued ?? 10_000
    if (!(maxQueued >= 0)) throw new RangeError('maxQueued must not be negative')
    const { intervalMs, concurrency, runCheck } = opts
    const onTimeMs = opts.onTimeMs ?? 5000
    const now = opts.now ?? Date.now
    this.intervalMs = intervalMs
    this.concurrency = concurrency
    this.onTimeMs = onTimeMs
    this.now = now
    this.#tickMs = opts.tickMs ?? 250
    this.#onError = opts.onError
    this.#window = new LoadWindow({ since: now() })
    this.#behind = new BehindWarning(opts.onBehind)
    this.gate = new CheckGate<E>({
      concurrency,
      maxQueued,
      onTimeMs,
      runCheck,
      now,
      count: (at, what) => {
        this.#window.add(at, what)
      },
      onError: (err) => {
        this.report(err, 'check')
      }
    })
  }

  abstract start(): Promise<void>

  abstract refreshNow(): Promise<void>

  /** Hands the gate the checks that fell due up to `now` (expired waiting ones are shed first). */
  protected abstract handDue(now: number): void

  /** How many sites are scheduled, for the stats. */
  protected abstract sites(): number

  /** Nothing to hand over by default. */
  retire(): Promise<void> {
    return Promise.resolve()
  }

  /** The schedule's known load in checks due a second, when it counts that instead of what fell due here. */
  protected duePerS(): number | undefined {
    return undefined
  }

  /**
   * Stops what the scheduler runs besides its timers, once it is stopped; the gate closes after the
   * promise returned, if any.
   */
  protected windDown(): Promise<void> | null {
    return null
  }

  async stop(): Promise<void> {
    this.stopped = true
    for (const timer of this.#timers) clearInterval(timer)
    this.#timers = []
    const winding = this.windDown()
    if (winding !== null) await winding
    await this.gate.close()
  }

  stats(): SchedulerStats {
    const gate = this.gate
    const counters = gate.counters()
    return {
      ...counters,
      shed: counters.shed + this.#shedBeforeGate,
      running: gate.running,
      queued: gate.queued,
      sites: this.sites(),
      lastMinute: this.load()
    }
  }

  load(): ScheduleLoad {
    return this.#window.read(this.now(), this.duePerS())
  }

  /** Counts the last minute's figures afresh from `since`. */
  protected restartLoad(since: number): void {
    this.#window = new LoadWindow({ since })
  }

  protected count(at: number, what: LoadEvent): void {
    this.#window.add(at, what)
  }

  /** Counts a due check shed by the scheduler itself, before it was offered to the gate. */
  protected shedBeforeGate(now: number): void {
    this.#shedBeforeGate++
    this.#window.add(now, 'shed')
  }

  /** Starts the tick and the scheduler's other periodic work, on timers that keep no process alive. */
  protected startTimers(others: ReadonlyArray<{ everyMs: number; run: () => void }>): void {
    this.#timers.push(
      setInterval(() => {
        this.#tick()
      }, this.#tickMs),
      ...others.map(({ everyMs, run }) => setInterval(run, everyMs))
    )
    for (const timer of this.#timers) timer.unref()
  }

  protected report(err: unknown, what: Failure | 'check'): void {
    try {
      this.#onError?.(err, what)
    } catch {
      // A failing error handler must not stop the scheduler.
    }
  }

  #tick(): void {
    if (this.stopped) return
    const now = this.now()
    this.gate.shedExpired(now)
    this.handDue(now)
    this.#behind.check(now, () => this.load())
  }
}
