import { siteIntervalMs } from '../../rules/site-interval.js'
import type { ScheduledSite } from './check-gate.js'
import { PhaseWheel, type WheelEntry } from './phase-wheel.js'

/** How {@link PhaseWheels} spaces its sites and recognises one whose check still runs. */
export interface PhaseWheelsOptions {
  /** The interval of sites without one of their own (CHECK_INTERVAL_S). */
  intervalMs: number
  now: () => number
  /** The entry of a site still running or waiting, reused when the site comes back to the list. */
  busyWith: (siteId: number) => WheelEntry | undefined
}

/**
 * One {@link PhaseWheel} per interval in use, each site on the wheel of its own interval: a wheel's
 * cycles and cursor serve one interval, so a turn costs one look per wheel plus the sites that fall
 * due. A site whose interval changes keeps its entry (and so its running or waiting check) and moves
 * to the other wheel; a wheel left without sites is dropped.
 */
export class PhaseWheels {
  readonly #opts: PhaseWheelsOptions
  readonly #wheels = new Map<number, PhaseWheel>()
  /** Every site on a wheel, by id. */
  #entries = new Map<number, WheelEntry>()
  #started = false

  constructor(opts: PhaseWheelsOptions) {
    this.#opts = opts
  }

  /** Sites on the wheels. */
  get size(): number {
    return this.#entries.size
  }

  /** Starts turning at `now`; nothing before it falls due. A wheel added later starts when it is added. */
  start(now: number): void {
    this.#started = true
    for (const wheel of this.#wheels.values()) wheel.start(now)
  }

  /** Forgets the first checks not yet due. */
  stop(): void {
    for (const wheel of this.#wheels.values()) wheel.stop()
  }

  /**
   * Takes the site list read now: O(n) for an unchanged list. `listedAt` is when the previous read of
   * the list began (sites new in this one were added since, so their first checks are due within an
   * interval of it); null for the first list, when every site waits for its phase.
   */
  update(sites: readonly ScheduledSite[], listedAt: number | null): void {
    const groups = new Map<number, WheelEntry[]>()
    const next = new Map<number, WheelEntry>()
    for (const site of sites) {
      if (next.has(site.id)) continue
      let entry = this.#entries.get(site.id)
      if (entry === undefined || entry.site.domain !== site.domain) {
        const busy = this.#opts.busyWith(site.id)
        entry = busy !== undefined && busy.site.domain === site.domain ? busy : newEntry(site)
      }
      const intervalMs = siteIntervalMs(site.interval_s, this.#opts.intervalMs)
      entry.site = site
      entry.removed = false
      entry.intervalMs = intervalMs
      next.set(site.id, entry)
      const group = groups.get(intervalMs)
      if (group === undefined) groups.set(intervalMs, [entry])
      else group.push(entry)
    }
    for (const [id, entry] of this.#entries) if (next.get(id) !== entry) entry.removed = true
    this.#entries = next
    for (const [intervalMs, wheel] of this.#wheels) {
      if (groups.has(intervalMs)) continue
      wheel.update([], null)
      this.#wheels.delete(intervalMs)
    }
    for (const [intervalMs, group] of groups) {
      let wheel = this.#wheels.get(intervalMs)
      if (wheel === undefined) {
        wheel = new PhaseWheel({ intervalMs, now: this.#opts.now })
        this.#wheels.set(intervalMs, wheel)
        if (this.#started) wheel.start(this.#opts.now())
      }
      wheel.update(group, listedAt === null ? null : listedAt + intervalMs)
    }
  }

  /** Hands `due` every site that fell due up to `now`, wheel by wheel, each with its due time. */
  turn(now: number, due: (entry: WheelEntry, dueAt: number) => void): void {
    for (const wheel of this.#wheels.values()) wheel.turn(now, due)
  }
}

function newEntry(site: ScheduledSite): WheelEntry {
  return {
    site,
    intervalMs: 0,
    phase: 0,
    running: false,
    waiting: null,
    removed: false,
    wheel: null,
    first: null,
    lastDueAt: null,
    notBefore: -Infinity
  }
}
