import type { GateEntry } from './check-gate.js'

/** A site on a wheel: the gate's view of it plus when it falls due. */
export interface WheelEntry extends GateEntry {
  /** The offset of its due times within each of its intervals. */
  phase: number
  /** The wheel it is on; null when on none. */
  wheel: PhaseWheel | null
  /** Its first check as a new site while that waits; a first no longer named here is dead. */
  first: First | null
  /** The last due time handed out for it; null before the first. */
  lastDueAt: number | null
  /** Nothing falls due before this: half an interval after its last due time on the wheel it came from. */
  notBefore: number
}

/** How a {@link PhaseWheel} spaces its sites. */
export interface PhaseWheelOptions {
  /** Every site on the wheel is due once per interval. */
  intervalMs: number
  now: () => number
}

/** A site that appeared while the wheel turned, waiting for its first check. */
export interface First {
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
 *
 * A site that comes from another wheel (its interval changed) waits for its phase on this one, but
 * falls due no sooner than half an interval after its last due time: within one and a half
 * intervals, never twice in a burst.
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
   * Takes the wheel's sites now: `entries`, each with this wheel's interval (see `PhaseWheels`). Costs
   * O(n); only the entries new to the wheel are sorted, then merged. `firstBy` is when new sites'
   * first checks are due at the latest; null for the first list, when every site waits for its phase.
   */
  update(entries: readonly WheelEntry[], firstBy: number | null): void {
    const { intervalMs } = this.#opts
    const kept: WheelEntry[] = []
    for (const entry of this.#entries) {
      if (entry.wheel !== this) continue
      if (!entry.removed && entry.intervalMs === intervalMs) kept.push(entry)
      else entry.wheel = null
    }
    const added: WheelEntry[] = []
    for (const entry of entries) {
      if (entry.wheel === this) continue
      entry.wheel = this
      entry.phase = phaseOf(entry.site.domain, intervalMs)
      entry.first = null
      entry.notBefore = entry.lastDueAt === null ? -Infinity : entry.lastDueAt + intervalMs / 2
      added.push(entry)
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
      const { entry } = first
      if (entry.first !== first) continue
      entry.first = null
      if (entry.removed) continue
      entry.lastDueAt = first.dueAt
      due(entry, first.dueAt)
    }
    if (this.#firstsHead > 0 && this.#firstsHead === this.#firsts.length) {
      this.#firsts = []
      this.#firstsHead = 0
    }
    for (;;) {
      const entry = this.#entries[this.#cursor]
      if (entry !== undefined && this.#cycleStart + entry.phase <= now) {
        const dueAt = this.#cycleStart + entry.phase
        if (dueAt >= entry.notBefore) {
          entry.lastDueAt = dueAt
          due(entry, dueAt)
        }
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
      // A site checked before (one whose check still runs, or whose interval changed) is not new.
      if (entry.lastDueAt !== null || entry.running || entry.waiting !== null) continue
      let due = this.#cycleStart + entry.phase
      if (due <= this.#processedUntil) due += intervalMs
      if (due > firstBy) {
        const first = { entry, dueAt: now + Math.floor((entry.phase / intervalMs) * left) }
        entry.first = first
        placed.push(first)
      }
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
