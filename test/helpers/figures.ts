import type { Test } from 'tap'
import { insertChecks } from '../../lib/store/checks.js'
import { scheduledCheck } from './checks.js'
import { trackedServer, type TrackedServer } from './sites.js'
import { storePage } from './status-pages.js'

export const HOUR = 3_600_000
export const DAY = 24 * HOUR

/**
 * Sites with a known history, for the figure badges:
 * - `old.example.com`, checked for 100 days: a 6-hour outage 10 days ago and a 1-hour one 2 hours
 *   ago; a check every hour on the half hour for 100 days, 200 ms in the last 24, 100 ms in the
 *   rest of the last 7 days, 50 ms before. Uptime: 24h 95.83, 7d 99.40, 30d 99.02, 90d 99.67;
 *   mean response time: 24h 200, 7d 114.3, 30d 65, 90d 55.
 * - `fresh.example.com`, checked for 3 days, always up, 300 ms: partly monitored over 7 days and more.
 * - `never.example.com`, tracked, never checked: no data.
 * Pages: `both` (old, fresh, never) and `young` (fresh, never).
 */
export const SITES = [
  { domain: 'old.example.com', name: 'Old Shop' },
  { domain: 'fresh.example.com', name: 'Fresh & <New>' },
  { domain: 'never.example.com', name: 'Never' }
]

/** `now` on the half hour, so that each hourly check is in the middle of its hour. */
export async function figureServer(
  t: Test,
  {
    engine = 'sqlite',
    now,
    env,
    pageStreams
  }: { engine?: 'sqlite' | 'mysql'; now: number; env?: Record<string, string>; pageStreams?: Record<string, never> }
): Promise<TrackedServer> {
  const s = await trackedServer(t, { engine, sites: SITES, start: now, env, pageStreams })
  // The outages, through the real recorder (it opens and closes them); no response time of their own.
  const history: Array<[string, 'up' | 'down', number]> = [
    ['old.example.com', 'up', now - 100 * DAY],
    ['old.example.com', 'down', now - 10 * DAY],
    ['old.example.com', 'up', now - 10 * DAY + 6 * HOUR],
    ['old.example.com', 'down', now - 2 * HOUR],
    ['old.example.com', 'up', now - HOUR],
    ['fresh.example.com', 'up', now - 3 * DAY],
    ['old.example.com', 'up', now - 60_000],
    ['fresh.example.com', 'up', now - 60_000]
  ]
  for (const [domain, status, at] of history) await s.feed(domain, status, at, { responseMs: null })
  // The response times, straight into the checks table: the badges read them from there.
  const ids = new Map<string, number>(
    (await s.db('sites').select('id', 'domain')).map((r: { id: unknown; domain: string }) => [r.domain, Number(r.id)])
  )
  const checks = []
  for (let k = 1; k <= 2400; k++) {
    const ms = k <= 24 ? 200 : k <= 168 ? 100 : 50
    checks.push({ ...scheduledCheck(ids.get('old.example.com') as number, 'up', now - k * HOUR), responseMs: ms })
  }
  for (let k = 1; k <= 72; k++)
    checks.push({ ...scheduledCheck(ids.get('fresh.example.com') as number, 'up', now - k * HOUR), responseMs: 300 })
  await insertChecks({ db: s.db, checks })
  await storePage(s.db, { slug: 'both', title: 'Both', description: null, logo_url: null }, SITES, new Date(now - DAY))
  await storePage(s.db, { slug: 'young', title: 'Young', description: null, logo_url: null }, SITES.slice(1), new Date(now - DAY))
  return s
}
