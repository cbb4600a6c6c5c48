import { announced, appendToOutbox } from '../events/outbox.js'
import { siteEvent } from '../rules/events.js'
import type { Db } from '../store/db.js'
import { trackSites, type AddOutcome, type SiteEntry } from '../store/sites.js'

/**
 * Tracks a normalised domain. A removed site is tracked again in a new tracking period (its
 * history stays); an already tracked one is left alone except for a new name, if one is given.
 * A site added or tracked again is announced (`site.added`) in the same transaction.
 */
export async function addSite({ db, entry, now }: { db: Db; entry: SiteEntry; now: Date }): Promise<AddOutcome> {
  const [outcome] = await addSites({ db, entries: [entry], now })
  return outcome as AddOutcome
}

/**
 * Adds many sites in one transaction, announcing the added and resumed ones in it (multi-row
 * inserts, so an import's batch costs a few statements more, not one per site). Returns each
 * entry's outcome in order. Entries must be distinct.
 */
export async function addSites({ db, entries, now }: { db: Db; entries: readonly SiteEntry[]; now: Date }): Promise<AddOutcome[]> {
  if (entries.length === 0) return []
  let events = 0
  const outcomes = await db.transaction(async (trx) => {
    const tracked = await trackSites({ db: trx, entries, now })
    const added = tracked.filter((s) => s.outcome !== 'already').map((s) => siteEvent('added', s, now))
    events = (await appendToOutbox({ db: trx, events: added })).length
    return tracked.map((s) => s.outcome)
  })
  if (events > 0) announced()
  return outcomes
}
