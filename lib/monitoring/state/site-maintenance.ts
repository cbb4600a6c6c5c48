import { LRUCache } from 'lru-cache'
import type { Interval } from '../../rules/intervals.js'
import {
  maintenanceAt,
  maintenanceIntervals,
  windowOccurrences,
  type MaintenanceNow,
  type MaintenanceWindow
} from '../../rules/maintenance.js'
import { UPTIME_HORIZON_MS } from '../../rules/uptime.js'
import type { Db } from '../../store/db.js'
import { listTrackedMaintenanceWindows, type StoredWindow } from '../../store/maintenance.js'

const DAY_MS = 86_400_000

/**
 * A site's maintenance windows as the in-memory state holds them, answering what they say at any
 * moment without working it out per request: a weekly window costs time-zone arithmetic, and the
 * status endpoint, badges and `/metrics` ask far more often than the answer changes. The maintenance
 * in force is worked out again only when the moment asked leaves the span it was known to hold for,
 * and the maintenance time uptime needs once a day.
 */
export class SiteMaintenance {
  readonly windows: readonly MaintenanceWindow[]
  /** Tells whether a new read of the windows brought different ones (windows never change in place). */
  readonly key: string
  #from = Infinity
  #to = -Infinity
  #now: MaintenanceNow | null = null
  #recentFrom = Infinity
  #recentTo = -Infinity
  #recent: Interval[] = []
  #spanFrom = NaN
  #spanDays = 0
  #span: Interval[] = []

  /** Use {@link maintenanceOf}, which shares one per set of windows. */
  constructor(windows: readonly MaintenanceWindow[], key: string) {
    this.windows = windows
    this.key = key
  }

  /** The maintenance in force at `at`, or null. */
  at(at: number): MaintenanceNow | null {
    if (at >= this.#from && at < this.#to) return this.#now
    const now = maintenanceAt(this.windows, at)
    let to: number
    if (now === null) {
      // Nothing in force: the answer holds until the next occurrence starts (looked for a day ahead).
      to = at + DAY_MS
      for (const w of this.windows) for (const o of windowOccurrences(w, at, to)) if (o.from > at) to = Math.min(to, o.from)
    } else {
      // The reason is that of the earliest-started window in force: it holds until that one ends.
      let first: Interval | null = null
      for (const w of this.windows) for (const o of windowOccurrences(w, at, at + 1)) if (first === null || o.from < first.from) first = o
      to = Math.min(now.until, first?.to ?? now.until)
    }
    this.#from = at
    this.#to = Math.max(to, at + 1)
    this.#now = now
    return now
  }

  /** Maintenance time (sorted, disjoint) covering at least the uptime horizon (90 days) before `at`. */
  recent(at: number): Interval[] {
    if (at < this.#recentFrom || at >= this.#recentTo) {
      this.#recent = maintenanceIntervals(this.windows, at - UPTIME_HORIZON_MS - DAY_MS, at + DAY_MS)
      this.#recentFrom = at
      this.#recentTo = at + DAY_MS
    }
    return this.#recent
  }

  /**
   * Maintenance time (sorted, disjoint) in the `days` days from `from` (a status page's 90 days),
   * worked out again only when they move: once a day, not at every render of every page.
   */
  days(from: number, days: number): Interval[] {
    if (from !== this.#spanFrom || days !== this.#spanDays) {
      this.#span = maintenanceIntervals(this.windows, from, from + days * DAY_MS)
      this.#spanFrom = from
      this.#spanDays = days
    }
    return this.#span
  }
}

/**
 * One {@link SiteMaintenance} per set of windows, shared by the in-memory state and the recording
 * of checks: windows never change in place (they are added and removed), so a set with the same ids
 * and content says the same everywhere, and each recorded batch of checks, reading its windows
 * afresh, finds the answer already worked out. Keyed by content, so two databases in one process
 * (tests) never share one by accident. Bounded: a site whose set was dropped works it out again.
 */
const shared = new LRUCache<string, SiteMaintenance>({ max: 20_000 })

/** The shared {@link SiteMaintenance} of a site's stored windows. */
export function maintenanceOf(windows: readonly StoredWindow[]): SiteMaintenance {
  const key = JSON.stringify(windows)
  let kept = shared.get(key)
  if (kept === undefined) {
    kept = new SiteMaintenance(windows, key)
    shared.set(key, kept)
  }
  return kept
}

/** The tracked sites' maintenance windows, for the sites that have any. */
export class MaintenanceWindows {
  readonly #sites = new Map<number, SiteMaintenance>()

  /** Takes the tracked sites' windows, read anew; returns the sites whose windows changed. */
  async read(db: Db): Promise<number[]> {
    const read = await listTrackedMaintenanceWindows({ db })
    const changed: number[] = []
    for (const id of this.#sites.keys()) {
      if (read.has(id)) continue
      this.#sites.delete(id)
      changed.push(id)
    }
    for (const [id, windows] of read) {
      const kept = maintenanceOf(windows)
      const known = this.#sites.get(id)
      this.#sites.set(id, kept)
      if (known?.key !== kept.key) changed.push(id)
    }
    return changed
  }

  /** The site's windows; undefined when it has none. */
  of(siteId: number): SiteMaintenance | undefined {
    return this.#sites.get(siteId)
  }

  /** Whether the site is in a maintenance window at `now`; a site without windows costs a lookup. */
  inForce(siteId: number, now: Date): boolean {
    return (this.#sites.get(siteId)?.at(now.getTime()) ?? null) !== null
  }
}
