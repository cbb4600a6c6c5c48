import type { GateEntry, ScheduledSite } from './check-gate.js'

/** A site on the wheel: the gate's view of it plus the offset of its due times within each interval. */
export interface WheelEntry extends GateEntry {
  phase: number
}

/** How a {@link PhaseWheel} spaces its sites and recognises one it already holds. */
export interface PhaseWheelOptions {
  /** Every site is due once per interval. */
  intervalMs: number
  now: () => number
  /** The entry of a site still running or waiting, reused when the site comes back to the list. */
  busyWith: (siteId: number) => WheelEntry | undefined
}

/** A site that appeared while the wheel turned, waiting for its first check. */
interface First {
  entry: WheelEntry
  dueAt: number
}

/** FNV-1a with a murmur3 finaliser: a stable, evenly spread phase per domain, the same after every restart. */
export function phaseOf(domain: string, intervalMs: number): number {
  const name = domain.toLowerCase()
  let h = 0x811c9dc5
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return Math.floor(((h >>> 0) / 2 ** 32) * intervalMs)
}

const byPhase = (a: WheelEntry, b: WheelEntry): number => a.phase - b.phase || a.site.id - b.site.id

/**
 * The phase wheel: when each site is due. Every site is due once per interval at its own phase, so
 * the load is spread evenly instead of bursting at the top of the interval. Sites are kept sorted by
 * phase and a cursor walks them as time passes, so a turn costs only the sites that fall due.
 *
 * A site that appears in the list while the wheel turns is first due within one interval of being
 * added: it was added after the previous read of the list began, so its first check is due by that
 * read's start plus one interval. If its phase comes before then it simply waits for it; otherwise
 * its first check is placed at its phase scaled into the time left, so that a large import is spread
 * out rather than started at once. After that it keeps its phase.
 */
export class PhaseWheel {
  readonly #opts: PhaseWheelOptions
  #entries: WheelEntry[] = []
  #cycleStart = 0
  #cursor = 0
  /** Every due time up to here has been handled. */
  #processedUntil = 0
  /** First checks of newly seen sites, by due time. */
  #firsts: First[] = []
  #firstsHead = 0

  constructor(opts: PhaseWheelOptions) {
    this.#opts = opts
  }

  /** Sites on the wheel. */
  get size(): number {
    return this.#entries.length
  }

  /** Starts turning at `now`; nothing before it falls due. */
  start(now: number): void {
    const { intervalMs } = this.#opts
    // Cycles are aligned to the epoch, so a restart keeps every site's due times; sites whose
    // phase has passed in the current cycle wait for the next one.
    this.#cycleStart = now - (((now % intervalMs) + intervalMs) % intervalMs)
    this.#processedUntil = now
    this.#seek()
  }

  /** Forgets the first checks not yet due. */
  stop(): void {
    this.#firsts = []
    this.#firstsHead = 0
  }

  /**
   * Takes the site list read now. Costs O(n) for an unchanged list; only added sites are sorted, then
   * merged. `firstBy` is when the added sites' first checks are due at the latest; null for the first
   * list, when every site waits for its phase.
   */
  update(sites: ScheduledSite[], firstBy: number | null): void {
    const incoming = new Map<number, ScheduledSite>()
    for (const site of sites) if (!incoming.has(site.id)) incoming.set(site.id, site)
    const kept: WheelEntry[] = []
    for (const entry of this.#entries) {
      const site = incoming.get(entry.site.id)
      if (site !== undefined && site.domain === entry.site.domain) {
        entry.site = site
        kept.push(entry)
        incoming.delete(site.id)
      } else {
        entry.removed = true
      }
    }
    const added: WheelEntry[] = []
    for (const site of incoming.values()) {
      const busy = this.#opts.busyWith(site.id)
      if (busy !== undefined && busy.site.domain === site.domain) {
        busy.removed = false
        added.push(busy)
      } else {
        added.push({ site, phase: phaseOf(site.domain, this.#opts.intervalMs), running: false, waiting: null, removed: false })
      }
    }
    if (firstBy !== null) this.#placeFirsts(added, firstBy)
    added.sort(byPhase)
    const next: WheelEntry[] = []
    let i = 0
    let j = 0
    while (i < kept.length || j < added.length) {
      const a = kept[i]
      const b = added[j]
      if (b === undefined || (a !== undefined && byPhase(a, b) <= 0)) {
        next.push(a as WheelEntry)
        i++
      } else {
        next.push(b)
        j++
      }
    }
    this.#entries = next
    this.#seek()
  }

  /** Hands `due` every site that fell due up to `now`, first checks of new sites first, each with its due time. */
  turn(now: number, due: (entry: WheelEntry, dueAt: number) => void): void {
    const { intervalMs } = this.#opts
    for (let first = this.#firsts[this.#firstsHead]; first !== undefined && first.dueAt <= now; first = this.#firsts[this.#firstsHead]) {
      this.#firstsHead++
      if (!first.entry.removed) due(first.entry, first.dueAt)
    }
    if (this.#firstsHead > 0 && this.#firstsHead === this.#firsts.length) {
      this.#firsts = []
      this.#firstsHead = 0
    }
    for (;;) {
      const entry = this.#entries[this.#cursor]
      if (entry !== undefined && this.#cycleStart + entry.phase <= now) {
        due(entry, this.#cycleStart + entry.phase)
        this.#cursor++
      } else if (entry === undefined && now >= this.#cycleStart + intervalMs) {
        this.#cycleStart += intervalMs
        this.#cursor = 0
      } else {
        break
      }
    }
    this.#processedUntil = now
  }

  /** Gives each added site whose phase comes after `firstBy` a first check before then, spread by phase. */
  #placeFirsts(added: WheelEntry[], firstBy: number): void {
    const { intervalMs } = this.#opts
    const now = this.#opts.now()
    const left = Math.max(0, firstBy - now)
    const placed: First[] = []
    for (const entry of added) {
      if (entry.running || entry.waiting !== null) continue
      let due = this.#cycleStart + entry.phase
      if (due <= this.#processedUntil) due += intervalMs
      if (due > firstBy) placed.push({ entry, dueAt: now + Math.floor((entry.phase / intervalMs) * left) })
    }
    if (placed.length === 0) return
    this.#firsts = [...this.#firsts.slice(this.#firstsHead), ...placed].sort((a, b) => a.dueAt - b.dueAt)
    this.#firstsHead = 0
  }

  /** Points the cursor past every phase already handled in this cycle, so a new site waits for its phase. */
  #seek(): void {
    const done = this.#processedUntil - this.#cycleStart
    let lo = 0
    let hi = this.#entries.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((this.#entries[mid] as WheelEntry).phase <= done) lo = mid + 1
      else hi = mid
    }
    this.#cursor = lo
  }
}
