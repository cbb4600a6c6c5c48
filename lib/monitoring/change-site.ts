import { applySettings, type SettingsPatch } from '../rules/site-settings.js'
import type { Db } from '../store/db.js'
import { lockTrackedSite, writeSiteSettings } from '../store/sites.js'

/**
 * Changes a tracked site's name and settings inside the caller's transaction `db`: the row locked,
 * the patch applied by the settings rule (keys absent are kept), the result written. False when the
 * site is not tracked.
 */
export async function changeSite({
  db,
  domain,
  name,
  patch,
  now
}: {
  db: Db
  domain: string
  name: string | null
  patch: SettingsPatch
  now: Date
}): Promise<boolean> {
  const site = await lockTrackedSite({ db, domain })
  if (site === null) return false
  const settings = applySettings({ interval_s: site.interval_s, expect: site.expect, check: site.check }, patch)
  await writeSiteSettings({ db, id: site.id, settings, name, now })
  return true
}
