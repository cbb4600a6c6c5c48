import { maintenanceEvent, type NewEvent } from '../../rules/events.js'
import { maintenanceAt, type MaintenanceNow } from '../../rules/maintenance.js'
import type { CheckRecord } from '../../store/checks.js'
import type { StoredWindow } from '../../store/maintenance.js'
import type { LockedSite } from '../../store/sites.js'
import { maintenanceOf, type SiteMaintenance } from '../state/site-maintenance.js'

/**
 * Maintenance as one recording batch sees it, from the windows read in its transaction under the
 * sites' row locks: a window added or removed anywhere is seen by the next batch of any instance.
 * The checks are the clock: `maintenance.started` is announced by a site's first recorded check
 * inside a window and `maintenance.ended` by its first one after it, with what was announced kept
 * on the site's row (`maintenance_until`), so each is announced once whoever records. What a set of
 * windows says at a moment is worked out once and shared (`maintenanceOf`): a site's checks come
 * minutes apart, and a weekly window costs time-zone arithmetic.
 */
export class MaintenanceSteps {
  readonly #windows: ReadonlyMap<number, SiteMaintenance>
  readonly #sites: ReadonlyMap<number, LockedSite>
  /** The maintenance at each check's time, worked out once per check. */
  readonly #at = new Map<CheckRecord, MaintenanceNow | null>()
  /** What each site's row says was announced, as the batch's checks change it. */
  readonly #announced = new Map<number, Date | null>()
  /** The sites whose announced end the batch changed, with the value to store. */
  readonly changed = new Map<number, Date | null>()

  constructor(windows: ReadonlyMap<number, readonly StoredWindow[]>, sites: ReadonlyMap<number, LockedSite>) {
    this.#windows = new Map([...windows].map(([id, list]) => [id, maintenanceOf(list)]))
    this.#sites = sites
  }

  /** The maintenance in force at the check's time, or null. */
  at(check: CheckRecord): MaintenanceNow | null {
    const windows = this.#windows.get(check.siteId)
    if (windows === undefined) return null
    let now = this.#at.get(check)
    if (now === undefined) {
      now = windows.at(check.checkedAt.getTime())
      this.#at.set(check, now)
    }
    return now
  }

  /** Whether the check's time is inside one of its site's windows: then no outage opens. */
  inMaintenance(check: CheckRecord): boolean {
    return this.at(check) !== null
  }

  /**
   * The events a current check announces about its site's maintenance: `maintenance.started` when
   * none was announced and one is in force, `maintenance.ended` when one was announced and none is
   * (or the announced one ended before a new one began). A maintenance whose end moved while in
   * force (a window added or removed meanwhile) changes the stored end without an event.
   */
  announce(check: CheckRecord): NewEvent[] {
    const site = this.#sites.get(check.siteId)
    if (!site) return []
    const announced = this.#announced.has(site.id) ? (this.#announced.get(site.id) ?? null) : site.maintenance_until
    const now = this.at(check)
    if (announced === null && now === null) return []
    const at = check.checkedAt.getTime()
    const events: NewEvent[] = []
    let until = announced
    if (announced !== null && (now === null || announced.getTime() <= at)) {
      // Ended at its end, or now when it was cut short (its window removed).
      const end = Math.min(announced.getTime(), at)
      const reason = maintenanceAt(this.#windows.get(site.id)?.windows ?? [], end - 1)?.reason ?? null
      events.push(maintenanceEvent('ended', site, { until: new Date(end), reason }, check.checkedAt))
      until = null
    }
    if (now !== null) {
      if (until === null)
        events.push(maintenanceEvent('started', site, { until: new Date(now.until), reason: now.reason }, check.checkedAt))
      until = new Date(now.until)
    }
    if ((until?.getTime() ?? null) !== (announced?.getTime() ?? null)) {
      this.#announced.set(site.id, until)
      this.changed.set(site.id, until)
    }
    return events
  }
}
