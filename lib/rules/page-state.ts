import type { SiteStatus } from './consensus.js'

/** A status page's one state, from its sites' (the page badge's words). */
export type PageState = 'operational' | 'degraded' | 'partial outage' | 'major outage' | 'maintenance'

/** A site as the page state reads it. */
export interface PageSiteState {
  status: SiteStatus
  /** Some location reached it while another saw it down. */
  partial: boolean
  slow: boolean
  /** Inside a maintenance window now. */
  maintenance: boolean
}

/**
 * The page's state (decisions.md, Status pages): a site down makes it `major outage` when at least
 * half the sites are down, else `partial outage`; otherwise a site slow, unconfirmed, unavailable,
 * pending or partial makes it `degraded`; otherwise a site in maintenance makes it `maintenance`; otherwise
 * `operational` (a page without sites included: nothing on it is failing).
 *
 * A site inside a maintenance window counts as in maintenance whatever its checks say: a site taken
 * down for its planned work is what the window announced, not an outage (no outage opens for it
 * either). `unavailable` (no location could tell) and `pending` (not checked yet) are `degraded`: the page
 * cannot say it is up.
 */
export function pageState(sites: readonly PageSiteState[]): PageState {
  let down = 0
  let degraded = false
  let maintenance = false
  for (const s of sites) {
    if (s.maintenance) maintenance = true
    else if (s.status === 'down') down++
    else if (s.status !== 'up' || s.partial || s.slow) degraded = true
  }
  if (down > 0) return down * 2 >= sites.length ? 'major outage' : 'partial outage'
  if (degraded) return 'degraded'
  return maintenance ? 'maintenance' : 'operational'
}

/** The page's state in one sentence, for people. */
export const PAGE_STATE_SENTENCES: Readonly<Record<PageState, string>> = Object.freeze({
  operational: 'All systems operational',
  degraded: 'Degraded performance',
  'partial outage': 'Partial outage',
  'major outage': 'Major outage',
  maintenance: 'Under maintenance'
})
