import type { NewPage, PageChange, PageSiteInput } from '../rules/status-page-fields.js'
import { isDeadlock, isDuplicateKey, type Db } from '../store/db.js'
import { lockSites, siteIdsByDomain } from '../store/sites.js'
import {
  findStatusPage,
  insertStatusPage,
  listPageSiteIds,
  updateStatusPage,
  type PageSiteEntry,
  type StoredStatusPage
} from '../store/status-pages.js'

/** Why writing a page came to nothing. */
export type PageRefusal = { ok: false; reason: 'slug_taken' | 'no_page' } | { ok: false; reason: 'not_tracked'; domain: string }

/** What writing a page came to: the page as stored, or why nothing was written. */
export type PageWrite = { ok: true; page: StoredStatusPage } | PageRefusal

export const noPage = (slug: string): string => `no status page has the slug "${slug}"`

/** What the API's error and the operator tool's both say (the slug is valid, the domain normalised: safe to show). */
export function refusalMessage(refusal: PageRefusal, slug: string): string {
  if (refusal.reason === 'not_tracked') return `${refusal.domain} is not tracked; track it before listing it on a page`
  if (refusal.reason === 'slug_taken') return `a status page with the slug "${slug}" already exists`
  return noPage(slug)
}

class Untracked extends Error {
  constructor(readonly domain: string) {
    super(`${domain} is not tracked`)
  }
}

/** A write MySQL undid to break a lock cycle is run again, this many times at most. */
const ATTEMPTS = 3

/**
 * Locks the listed sites' rows (with `alsoLock`, the sites the page lists now), in id order, and
 * turns the list into store entries; throws {@link Untracked} naming the first site not tracked.
 * Sites are locked before the page, in the order removing a site takes them (its row, then its
 * pages): a site removed at the same moment is either gone from the list read here or waits for
 * this write and then leaves the page.
 */
async function lockedEntries(trx: Db, sites: readonly PageSiteInput[], alsoLock: readonly number[]): Promise<PageSiteEntry[]> {
  const ids = await siteIdsByDomain({ db: trx, domains: sites.map((s) => s.domain) })
  const locked = await lockSites({ db: trx, ids: [...ids.values(), ...alsoLock] })
  return sites.map((s) => {
    const id = ids.get(s.domain)
    const site = id === undefined ? undefined : locked.get(id)
    if (site === undefined || site.removed_at !== null) throw new Untracked(s.domain)
    return { siteId: site.id, displayName: s.name }
  })
}

async function write(db: Db, work: (trx: Db) => Promise<PageWrite>): Promise<PageWrite> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(work)
    } catch (err) {
      if (err instanceof Untracked) return { ok: false, reason: 'not_tracked', domain: err.domain }
      if (!isDeadlock(err) || attempt >= ATTEMPTS) throw err
    }
  }
}

/** Stores a new page listing tracked sites only; its slug must be free. */
export async function createPage({ db, page, now }: { db: Db; page: NewPage; now: Date }): Promise<PageWrite> {
  const { sites, ...fields } = page
  return write(db, async (trx) => {
    const entries = await lockedEntries(trx, sites, [])
    try {
      await insertStatusPage({ db: trx, page: fields, sites: entries, now })
    } catch (err) {
      if (isDuplicateKey(err)) return { ok: false, reason: 'slug_taken' }
      throw err
    }
    return found(await findStatusPage({ db: trx, slug: page.slug }))
  })
}

/** Changes a page's fields and, when `change.sites` is given, replaces its list with tracked sites in that order. */
export async function changePage({ db, slug, change, now }: { db: Db; slug: string; change: PageChange; now: Date }): Promise<PageWrite> {
  const { sites, ...fields } = change
  return write(db, async (trx) => {
    const listed = await listPageSiteIds({ db: trx, slug })
    if (listed === null) return { ok: false, reason: 'no_page' }
    const entries = sites === undefined ? undefined : await lockedEntries(trx, sites, listed)
    // False too when the page was deleted since it was read above.
    const changed = await updateStatusPage({ db: trx, slug, fields, ...(entries ? { sites: entries } : {}), now })
    if (!changed) return { ok: false, reason: 'no_page' }
    return found(await findStatusPage({ db: trx, slug }))
  })
}

function found(page: StoredStatusPage | null): PageWrite {
  return page === null ? { ok: false, reason: 'no_page' } : { ok: true, page }
}
