import { outageEndOnRemoval } from '../rules/outages.js'
import type { Db } from '../store/db.js'
import { closeOutage, listOpenOutages } from '../store/outages.js'
import { lockTrackedSite, markSiteRemoved } from '../store/sites.js'

/**
 * Stops tracking a site; its checks and outages are kept. An ongoing outage ends as
 * `outageEndOnRemoval` says. Returns false when the site was not tracked.
 */
export async function removeSite({ db, domain, now }: { db: Db; domain: string; now: Date }): Promise<boolean> {
  return db.transaction(async (trx) => {
    // The row lock orders this against a check being recorded for the site at the same moment.
    const site = await lockTrackedSite({ db: trx, domain })
    if (!site) return false
    await markSiteRemoved({ db: trx, id: site.id, now })
    const open = (await listOpenOutages({ db: trx, siteIds: [site.id] })).get(site.id) ?? null
    const end = outageEndOnRemoval(open, now)
    if (open && end) await closeOutage({ db: trx, id: open.id, endedAt: end })
    return true
  })
}
