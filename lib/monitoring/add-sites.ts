import { announced, appendToOutbox } from '../events/outbox.js'
import { siteEvent } from '../rules/events.js'
import type { Db } from '../store/db.js'
import { trackSites, type AddOutcome, type SiteEntry } from '../store/sites.js'

/**
 * Tracks a normalised domain. A removed site is tracked again in a new tracking period (its
 * history stays); an already tracked one is left alone except for a new name, if one is given and
 * `renameTracked` (the default) allows it. A site added or tracked again is announced
 * (`site.added`) in the same transaction.
 */
export async function addSite({
  db,
  entry,
  now,
  renameTracked = true
}: {
  db: Db
  entry: SiteEntry
  now: Date
  renameTracked?: boolean
}): Promise<AddOutcome> {
  const [outcome] = await addSites({ db, entries: [entry], now, renameTracked })
  return outcome as AddOutcome
}

/**
 * Adds many sites in one transaction, announcing the added and resumed ones in it (multi-row
 * inserts, so an import's batch costs a few statements more, not one per site). Returns each
 * entry's outcome in order. Entries must be distinct.
 */
export async function addSites({
  db,
  entries,
  now,
  renameTracked = true
}: {
  db: Db
  entries: readonly SiteEntry[]
  now: Date
  /** False: an entry already tracked is left exactly as it is (the sites API answers 409 for it). */
  renameTracked?: boolean
}): Promise<AddOutcome[]> {
  if (entries.length === 0) return []
  let events = 0
  const outcomes = await db.transaction(async (trx) => {
    const tracked = await trackSites({ db: trx, entries, now, renameTracked })
    const added = tracked.filter((s) => s.outcome !== 'already').map((s) => siteEvent('added', s, now))
    events = (await appendToOutbox({ db: trx, events: added })).length
    return tracked.map((s) => s.outcome)
  })
  if (events > 0) announced()
  return outcomes
}
