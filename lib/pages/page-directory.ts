import type { Db } from '../store/db.js'
import { findStatusPage, listStatusPageVersions } from '../store/status-pages.js'

/** What a page badge and a page's existence need of a stored page. */
export interface PageSites {
  slug: string
  title: string
  /** The page's sites, in its order. */
  domains: readonly string[]
  /** The identities (`monitor:<slug>`) of the page's tcp, tls and dns monitors, whose states are in memory as the sites'. */
  monitorDomains: readonly string[]
  /** The `sites` rows of the page's heartbeats, whose states are read from the database. */
  heartbeatSiteIds: readonly number[]
  /** The stored page's `changed_at` this copy was read for (epoch ms). */
  version: number
}

/** How often the pages' versions are read again, at most; default 1 s. */
const REFRESH_MS = 1000

/**
 * The stored pages as far as their badges need them, held in memory so that a hit costs no query:
 * every page's slug and `changed_at` are read at most once a second, in the background of the hit
 * that finds them older (that hit and those meanwhile answer from the copy held), and a page is
 * read again only when its `changed_at` moved. A slug that is no page is answered from the same
 * list, so made-up slugs cost nothing either. Only the very first look waits for a read.
 */
export class PageDirectory {
  readonly #db: Db
  readonly #refreshMs: number
  #versions: Map<string, number> | null = null
  readonly #pages = new Map<string, PageSites>()
  readonly #loading = new Map<string, Promise<PageSites | null>>()
  #readAt = -Infinity
  #reading: Promise<void> | null = null
  #stale = false

  constructor({ db, refreshMs = REFRESH_MS }: { db: Db; refreshMs?: number }) {
    this.#db = db
    this.#refreshMs = refreshMs
  }

  /**
   * The page `slug` as last seen (at most about a second old), or null when there is none; a
   * promise only when it must be read first (the first look, or a page that changed).
   */
  get(slug: string, at: number): PageSites | null | Promise<PageSites | null> {
    if (this.#versions === null) return this.#read(at).then(() => this.#lookup(slug))
    if (this.#stale) {
      this.#stale = false
      // A read already under way may have begun before the change: the one that counts starts after it.
      const under = this.#reading ?? Promise.resolve()
      return under
        .catch(() => {})
        .then(() => this.#read(at))
        .then(() => this.#lookup(slug, true))
    }
    if (at - this.#readAt >= this.#refreshMs && this.#reading === null) {
      // A failed read leaves the copy held; the next look past the interval tries again.
      this.#read(at).catch(() => {})
    }
    return this.#lookup(slug)
  }

  /**
   * Says a page was created, changed or deleted here (the pages API): the next look waits for the
   * pages to be read again, so this instance's badges and JSON follow at once rather than within a
   * second.
   */
  changed(slug: string): void {
    this.#stale = true
    // Its copy goes too: a change in the same millisecond as the one before leaves changed_at as it was.
    this.#pages.delete(slug)
  }

  #read(at: number): Promise<void> {
    this.#reading ??= listStatusPageVersions({ db: this.#db })
      .then((versions) => {
        this.#versions = versions
        this.#readAt = at
        for (const slug of this.#pages.keys()) if (!versions.has(slug)) this.#pages.delete(slug)
      })
      .finally(() => {
        this.#reading = null
      })
    return this.#reading
  }

  /** The page from the versions read; a copy of an older version answers while the new one is read, unless `wait`. */
  #lookup(slug: string, wait = false): PageSites | null | Promise<PageSites | null> {
    const version = this.#versions?.get(slug)
    if (version === undefined) return null
    const kept = this.#pages.get(slug)
    if (kept !== undefined && kept.version === version) return kept
    let loading = this.#loading.get(slug)
    if (loading === undefined) {
      loading = findStatusPage({ db: this.#db, slug })
        .then((page) => {
          if (page === null) {
            this.#pages.delete(slug)
            return null
          }
          // Kept under the version that asked for it: a change since is read again at the next look.
          const sites: PageSites = {
            slug,
            title: page.title,
            domains: page.sites.map((s) => s.domain),
            monitorDomains: page.monitors.map((m) => m.domain),
            heartbeatSiteIds: page.heartbeats.map((h) => h.site_id),
            version
          }
          this.#pages.set(slug, sites)
          return sites
        })
        .finally(() => this.#loading.delete(slug))
      this.#loading.set(slug, loading)
    }
    if (kept === undefined || wait) return loading
    // The copy held answers meanwhile; a failed read is tried again at the next look.
    loading.catch(() => {})
    return kept
  }
}
