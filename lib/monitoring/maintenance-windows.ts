import { MAX_WINDOWS_PER_SITE, type MaintenanceWindow } from '../rules/maintenance.js'
import type { Db } from '../store/db.js'
import {
  countMaintenanceWindows,
  deleteMaintenanceWindow,
  insertMaintenanceWindow,
  listMaintenanceWindows,
  type StoredWindow
} from '../store/maintenance.js'
import { findSite, lockTrackedSite } from '../store/sites.js'

export type AddWindowOutcome = { ok: true; window: StoredWindow } | { ok: false; reason: 'not_tracked' | 'too_many' }

/**
 * Adds a maintenance window (in its normal form) to a tracked site. The site's row is locked
 * first, so that concurrent additions cannot pass the limit together and a check recorded
 * meanwhile reads the windows before or after the change, never half of it.
 */
export async function addMaintenanceWindow({
  db,
  domain,
  window,
  now
}: {
  db: Db
  domain: string
  window: MaintenanceWindow
  now: Date
}): Promise<AddWindowOutcome> {
  return db.transaction(async (trx) => {
    const site = await lockTrackedSite({ db: trx, domain })
    if (!site) return { ok: false, reason: 'not_tracked' }
    if ((await countMaintenanceWindows({ db: trx, siteId: site.id })) >= MAX_WINDOWS_PER_SITE) return { ok: false, reason: 'too_many' }
    const id = await insertMaintenanceWindow({ db: trx, siteId: site.id, window, now })
    return { ok: true, window: { ...window, id } }
  })
}

/** Removes a window of a tracked site, by id. */
export async function removeMaintenanceWindow({
  db,
  domain,
  id,
  now
}: {
  db: Db
  domain: string
  id: number
  now: Date
}): Promise<'removed' | 'not_tracked' | 'no_window'> {
  return db.transaction(async (trx) => {
    const site = await lockTrackedSite({ db: trx, domain })
    if (!site) return 'not_tracked'
    return (await deleteMaintenanceWindow({ db: trx, siteId: site.id, id, now })) ? 'removed' : 'no_window'
  })
}

/** A tracked site's windows in the order they were added; null when the site is not tracked. */
export async function listSiteMaintenanceWindows({ db, domain }: { db: Db; domain: string }): Promise<StoredWindow[] | null> {
  const site = await findSite({ db, domain })
  if (site === null || site.removed_at !== null) return null
  return (await listMaintenanceWindows({ db, siteIds: [site.id] })).get(site.id) ?? []
}
