import type { Test } from 'tap'
import type { Db } from '../../lib/store/db.js'
import { insertStatusPage, type StatusPageFields } from '../../lib/store/status-pages.js'
import { insertMaintenanceWindow } from '../../lib/store/maintenance.js'
import { trackedServer, type TrackedServer } from './sites.js'

const HOUR = 3_600_000
export const DAY = 24 * HOUR
/** Noon: today's bar is half a day. */
export const NOW = Date.parse('2026-11-28T12:00:00.000Z')
/** A day of the 90 with a 6-hour outage of shop (06:00-12:00 UTC): its bar shows 75. */
export const OUTAGE_DAY = '2026-11-20'

export const PAGE_SITES = [
  { domain: 'shop.example.com', name: 'Shop' },
  { domain: 'blog.example.com', name: 'Blog' },
  { domain: 'api.example.com', name: 'API' },
  { domain: 'new.example.com', name: 'New' }
]
/** Tracked, never on the page: nothing of it may show. */
export const OTHER_SITE = { domain: 'secret.example.com', name: 'Secret internal' }

/**
 * Stores a page straight into the tables, its sites named by domain (each tracked) with an optional
 * display name; returns the sites' ids by domain.
 */
export async function storePage(
  db: Db,
  page: StatusPageFields,
  sites: ReadonlyArray<{ domain: string; name?: string | null }>,
  now: Date
): Promise<Map<string, number>> {
  const ids = new Map<string, number>()
  for (const r of await db('sites').select('id', 'domain')) ids.set(String(r.domain), Number(r.id))
  await db.transaction((trx) =>
    insertStatusPage({
      db: trx,
      page,
      sites: sites.map((site) => ({ siteId: ids.get(site.domain) as number, displayName: site.name ?? null })),
      now
    })
  )
  return ids
}

export interface SeededPage extends TrackedServer {
  slug: string
  /** The sites' ids by domain. */
  ids: Map<string, number>
}

/**
 * A tracked server with a page `acme` of four sites, their history recorded through the real
 * recorder (checks open and close the outages): shop has been checked for 100 days, with a 6-hour
 * outage on {@link OUTAGE_DAY}, one across midnight ten days ago and one ongoing since an hour ago;
 * blog for 100 days with a weekly maintenance window; api since 5 days ago; new never. `secret`,
 * down too, is on no page.
 */
export async function seededPage(t: Test, engine: 'sqlite' | 'mysql'): Promise<SeededPage> {
  const api = await trackedServer(t, {
    engine,
    sites: [...PAGE_SITES, OTHER_SITE],
    start: NOW
  })
  const ids = await storePage(
    api.db,
    { slug: 'acme', title: 'Acme & Co <status>', description: 'Our services', logo_url: null },
    [
      { domain: 'shop.example.com', name: 'Web shop' },
      { domain: 'blog.example.com' },
      { domain: 'api.example.com' },
      { domain: 'new.example.com' }
    ],
    new Date(NOW - 2 * DAY)
  )
  await insertMaintenanceWindow({
    db: api.db,
    siteId: ids.get('blog.example.com') as number,
    window: { weekly: { day: 'sat', time: '11:00', duration_minutes: 120, zone: 'UTC' }, reason: 'weekly upgrade' },
    now: new Date(NOW - 3 * DAY)
  })
  const history: Array<[string, 'up' | 'down', number]> = [
    ['shop.example.com', 'up', NOW - 100 * DAY],
    ['shop.example.com', 'down', Date.parse('2026-11-17T22:00:00Z')],
    ['shop.example.com', 'up', Date.parse('2026-11-18T02:00:00Z')],
    ['shop.example.com', 'down', Date.parse(`${OUTAGE_DAY}T06:00:00Z`)],
    ['shop.example.com', 'up', Date.parse(`${OUTAGE_DAY}T12:00:00Z`)],
    ['shop.example.com', 'down', NOW - HOUR],
    ['blog.example.com', 'up', NOW - 100 * DAY],
    ['api.example.com', 'up', NOW - 5 * DAY],
    ['secret.example.com', 'up', NOW - 100 * DAY],
    ['secret.example.com', 'down', NOW - 3 * HOUR]
  ]
  for (const [domain, status, at] of history) await api.feed(domain, status, at)
  // Fresh checks, so the current verdicts stand (not `unavailable`).
  for (const domain of ['shop.example.com', 'secret.example.com']) await api.feed(domain, 'down', NOW - 30_000)
  for (const domain of ['blog.example.com', 'api.example.com']) await api.feed(domain, 'up', NOW - 30_000)
  api.states.changed()
  await api.states.refresh(api.db, new Date(NOW))
  api.clock.now = NOW
  return { ...api, slug: 'acme', ids }
}
