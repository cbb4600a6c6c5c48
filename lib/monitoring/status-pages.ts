import { monitorDomain } from '../rules/monitor.js'
import type { NewPage, PageChange, PageHeartbeatInput, PageMonitorInput, PageSiteInput } from '../rules/status-page-fields.js'
import { isDeadlock, isDuplicateKey, type Db } from '../store/db.js'
import { heartbeatDomain } from '../store/heartbeats.js'
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
export type PageRefusal =
  | { ok: false; reason: 'slug_taken' | 'no_page' }
  | { ok: false; reason: 'not_tracked'; domain: string }
  | { ok: false; reason: 'no_heartbeat'; heartbeat: string }
  | { ok: false; reason: 'no_monitor'; monitor: string }

/** What writing a page came to: the page as stored, or why nothing was written. */
export type PageWrite = { ok: true; page: StoredStatusPage } | PageRefusal

export const noPage = (slug: string): string => `no status page has the slug "${slug}"`

/** What the API's error and the operator tool's both say (the slug is valid, the domain normalised: safe to show). */
export function refusalMessage(refusal: PageRefusal, slug: string): string {
  if (refusal.reason === 'not_tracked') return `${refusal.domain} is not tracked; track it before listing it on a page`
  if (refusal.reason === 'no_heartbeat') return `no heartbeat has the slug "${refusal.heartbeat}"; add it before listing it on a page`
  if (refusal.reason === 'no_monitor') return `no monitor has the slug "${refusal.monitor}"; add it before listing it on a page`
  if (refusal.reason === 'slug_taken') return `a status page with the slug "${slug}" already exists`
  return noPage(slug)
}

class Untracked extends Error {
  constructor(readonly domain: string) {
    super(`${domain} is not tracked`)
  }
}

class NoHeartbeat extends Error {
  constructor(readonly slug: string) {
    super(`no heartbeat ${slug}`)
  }
}

class NoMonitor extends Error {
  constructor(readonly slug: string) {
    super(`no monitor ${slug}`)
  }
}

/** A write MySQL undid to break a lock cycle is run again, this many times at most. */
const ATTEMPTS = 3

/** The store entries of a page's three lists; a list not given stays undefined (kept as stored). */
interface Entries {
  sites?: PageSiteEntry[]
  heartbeats?: PageSiteEntry[]
  monitors?: PageSiteEntry[]
}

/** A page's lists as a body gives them; a list not given is kept. */
interface Lists {
  sites?: readonly PageSiteInput[]
  heartbeats?: readonly PageHeartbeatInput[]
  monitors?: readonly PageMonitorInput[]
}

/**
 * Locks the listed sites', heartbeats' and monitors' `sites` rows (with `alsoLock`, the rows the
 * page lists now), in id order, and turns the lists into store entries; throws {@link Untracked}
 * naming the first site not tracked, {@link NoHeartbeat} the first heartbeat or {@link NoMonitor}
 * the first monitor not found. Rows are locked before the page, in the order removing a site takes
 * them (its row, then its pages): a site removed at the same moment is either gone from the list
 * read here or waits for this write and then leaves the page. A heartbeat is found by its `sites`
 * row's domain, `heartbeat:<slug>`, a monitor by its, `monitor:<slug>`.
 */
async function lockedEntries(trx: Db, lists: Lists, alsoLock: readonly number[]): Promise<Entries> {
  const domains = [
    ...(lists.sites ?? []).map((s) => s.domain),
    ...(lists.heartbeats ?? []).map((h) => heartbeatDomain(h.slug)),
    ...(lists.monitors ?? []).map((m) => monitorDomain(m.slug))
  ]
  const ids = await siteIdsByDomain({ db: trx, domains })
  const locked = await lockSites({ db: trx, ids: [...ids.values(), ...alsoLock] })
  const entry = (domain: string, name: string | null, missing: () => Error): PageSiteEntry => {
    const id = ids.get(domain)
    const site = id === undefined ? undefined : locked.get(id)
    if (site === undefined || site.removed_at !== null) throw missing()
    return { siteId: site.id, displayName: name }
  }
  return {
    ...(lists.sites === undefined ? {} : { sites: lists.sites.map((s) => entry(s.domain, s.name, () => new Untracked(s.domain))) }),
    ...(lists.heartbeats === undefined
      ? {}
      : { heartbeats: lists.heartbeats.map((h) => entry(heartbeatDomain(h.slug), h.name, () => new NoHeartbeat(h.slug))) }),
    ...(lists.monitors === undefined
      ? {}
      : { monitors: lists.monitors.map((m) => entry(monitorDomain(m.slug), m.name, () => new NoMonitor(m.slug))) })
  }
}

async function write(db: Db, work: (trx: Db) => Promise<PageWrite>): Promise<PageWrite> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(work)
    } catch (err) {
      if (err instanceof Untracked) return { ok: false, reason: 'not_tracked', domain: err.domain }
      if (err instanceof NoHeartbeat) return { ok: false, reason: 'no_heartbeat', heartbeat: err.slug }
      if (err instanceof NoMonitor) return { ok: false, reason: 'no_monitor', monitor: err.slug }
      if (!isDeadlock(err) || attempt >= ATTEMPTS) throw err
    }
  }
}

/** Stores a new page listing tracked sites and existing heartbeats and monitors only; its slug must be free. */
export async function createPage({ db, page, now }: { db: Db; page: NewPage; now: Date }): Promise<PageWrite> {
  const { sites, heartbeats, monitors, ...fields } = page
  return write(db, async (trx) => {
    const entries = await lockedEntries(trx, { sites, heartbeats, monitors }, [])
    try {
      await insertStatusPage({
        db: trx,
        page: fields,
        sites: entries.sites ?? [],
        heartbeats: entries.heartbeats ?? [],
        monitors: entries.monitors ?? [],
        now
      })
    } catch (err) {
      if (isDuplicateKey(err)) return { ok: false, reason: 'slug_taken' }
      throw err
    }
    return found(await findStatusPage({ db: trx, slug: page.slug }))
  })
}

/**
 * Changes a page's fields and, for each of `change.sites`, `change.heartbeats` and
 * `change.monitors` given, replaces that list (tracked sites, existing heartbeats and monitors) in
 * the order given; the others are kept.
 */
export async function changePage({ db, slug, change, now }: { db: Db; slug: string; change: PageChange; now: Date }): Promise<PageWrite> {
  const { sites, heartbeats, monitors, ...fields } = change
  return write(db, async (trx) => {
    const listed = await listPageSiteIds({ db: trx, slug })
    if (listed === null) return { ok: false, reason: 'no_page' }
    const lists: Lists = {
      ...(sites === undefined ? {} : { sites }),
      ...(heartbeats === undefined ? {} : { heartbeats }),
      ...(monitors === undefined ? {} : { monitors })
    }
    const entries = Object.keys(lists).length === 0 ? {} : await lockedEntries(trx, lists, listed)
    // False too when the page was deleted since it was read above.
    const changed = await updateStatusPage({ db: trx, slug, fields, ...entries, now })
    if (!changed) return { ok: false, reason: 'no_page' }
    return found(await findStatusPage({ db: trx, slug }))
  })
}

function found(page: StoredStatusPage | null): PageWrite {
  return page === null ? { ok: false, reason: 'no_page' } : { ok: true, page }
}
