import type { ScheduledSite } from './check-gate.js'
import type { WheelEntry } from './phase-wheel.js'
import { PhaseWheels } from './phase-wheels.js'
import { GatedScheduler, type GatedSchedulerOptions } from './site-scheduler.js'

export type { ScheduledSite } from './check-gate.js'
export { phaseOf } from './phase-wheel.js'

/** How a {@link Scheduler} finds its sites, runs their checks and paces itself. */
export interface SchedulerOptions extends GatedSchedulerOptions<'list'> {
  /** The tracked sites now; when it fails the last known list is kept and retried on the next refresh. */
  listSites: () => Promise<ScheduledSite[]>
  /** How often the site list is re-read; default min(intervalMs / 2, 10 s). */
  refreshMs?: number
}

/**
 * The scheduler of a single instance: checks every site once per interval (its own, or
 * `intervalMs`) at its own phase. The {@link PhaseWheels} say when each site is due (phases, cycles
 * aligned to the epoch, new sites spread out, a wheel per interval); the gate it shares with the
 * lease scheduler says whether a due check starts now, waits for a slot or is shed. This scheduler
 * keeps the site list fresh and turns the wheels every tick.
 */
export class Scheduler extends GatedScheduler<WheelEntry, 'list'> {
  readonly #listSites: () => Promise<ScheduledSite[]>
  readonly #refreshMs: number
  readonly #wheel: PhaseWheels
  /** When the last successful read of the site list began; null before the first one. */
  #listedAt: number | null = null
  #started = false
  /** The list the wheel was last brought in line with. */
  #listed: ScheduledSite[] | null = null
  /** The read of the site list under way, if any. */
  #running: Promise<void> | null = null
  /** A read asked for by {@link refreshNow}, to begin once the one under way ends. */
  #queued: Promise<void> | null = null

  constructor(opts: SchedulerOptions) {
    super(opts)
    this.#listSites = opts.listSites
    this.#refreshMs = opts.refreshMs ?? Math.min(opts.intervalMs / 2, 10_000)
    this.#wheel = new PhaseWheels({ intervalMs: this.intervalMs, now: this.now, busyWith: (siteId) => this.gate.busyWith(siteId) })
  }

  /** Loads the site list once, then checks each site at its phase until {@link stop}. */
  async start(): Promise<void> {
    if (this.#started) return
    this.#started = true
    await this.#refresh()
    if (this.stopped) return
    const now = this.now()
    this.restartLoad(now)
    this.#wheel.start(now)
    this.startTimers([{ everyMs: this.#refreshMs, run: () => void this.#refresh() }])
  }

  protected override windDown(): null {
    this.#wheel.stop()
    return null
  }

  protected override sites(): number {
    return this.#wheel.size
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
    const readAt = this.now()
    let sites: ScheduledSite[]
    try {
      sites = await this.#listSites()
    } catch (err) {
      this.report(err, 'list')
      return
    }
    if (this.stopped) return
    // The same list as last time (SiteStates hands back the array it kept) has nothing to compare.
    if (sites !== this.#listed) {
      // Sites new in this list were added after the previous read began (the first list is no news).
      this.#wheel.update(sites, this.#listedAt)
      this.#listed = sites
    }
    this.#listedAt = readAt
  }

  protected override handDue(now: number): void {
    this.#wheel.turn(now, (entry, dueAt) => {
      this.count(this.now(), 'due')
      this.gate.offer(entry, dueAt)
    })
  }
}
