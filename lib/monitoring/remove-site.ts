import { announced, appendToOutbox } from '../events/outbox.js'
import { outageEvent, siteEvent, type NewEvent } from '../rules/events.js'
import { outageEndOnRemoval } from '../rules/outages.js'
import type { Db } from '../store/db.js'
import { closeOutage, listOpenOutages } from '../store/outages.js'
import { lockTrackedSite, markSiteRemoved } from '../store/sites.js'
import { removeSiteFromPages } from '../store/status-pages.js'

/**
 * Stops tracking a site; its checks and outages are kept, and it leaves the status pages it was on. An ongoing outage ends as
 * `outageEndOnRemoval` says. Announces, in the same transaction, `outage.closed` for that outage
 * and then `site.removed`. Returns false when the site was not tracked.
 */
export async function removeSite({ db, domain, now }: { db: Db; domain: string; now: Date }): Promise<boolean> {
  const removed = await db.transaction((trx) => removeSiteIn({ db: trx, domain, now }))
  if (removed) announced()
  return removed
}

/**
 * {@link removeSite} inside the caller's transaction `db` (an apply removes many in one); the
 * caller calls `announced()` after its commit.
 */
export async function removeSiteIn({ db, domain, now }: { db: Db; domain: string; now: Date }): Promise<boolean> {
  // The row lock orders this against a check being recorded for the site at the same moment.
  const site = await lockTrackedSite({ db, domain })
  if (!site) return false
  await markSiteRemoved({ db, id: site.id, now })
  await removeSiteFromPages({ db, siteId: site.id, now })
  const open = (await listOpenOutages({ db, siteIds: [site.id] })).get(site.id) ?? null
  const end = outageEndOnRemoval(open, now)
  const named = { id: site.id, domain, name: site.name }
  const events: NewEvent[] = []
  if (open && end) {
    await closeOutage({ db, id: open.id, endedAt: end })
    events.push(outageEvent('close', named, { started_at: open.started_at, ended_at: end }, now))
  }
  events.push(siteEvent('removed', named, now))
  await appendToOutbox({ db, events })
  return true
}
