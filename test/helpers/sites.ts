import type { Test } from 'tap'
import { BadgeRenderer } from '../../lib/badge/renderer.js'
import { EventFeed } from '../../lib/events/feed.js'
import { PageStreams } from '../../lib/events/page-streams.js'
import { CheckRecorder } from '../../lib/monitoring/record/recorder.js'
import { RenderCache } from '../../lib/pages/render-cache.js'
import { forgetStatusPage } from '../../lib/pages/status-page.js'
import { SiteStates } from '../../lib/monitoring/state/site-state.js'
import type { ServerDeps } from '../../lib/server.js'
import type { LocationResult } from '../../lib/probing/locations/index.js'
import type { CheckResult } from '../../lib/probing/supervisor.js'
import { createLogger } from '../../lib/logger.js'
import type { Db } from '../../lib/store/db.js'
import { addSites } from '../../lib/monitoring/add-sites.js'
import { migratedDb } from './db.js'
import { testServer, type TestServer } from './server.js'

export const MIN = 60_000

export interface TrackedServer extends TestServer {
  db: Db
  states: SiteStates
  badges: BadgeRenderer
  /** The status pages' renders the server keeps (JSON, feed, HTML), for tests to forget. */
  statusPageRenders: RenderCache
  /** The clock the server reads; tests move it. */
  clock: { now: number }
  /** With `pageStreams`: the event feed (polling every 50 ms) and the status pages' streams on it. */
  eventFeed?: EventFeed
  pageStreams?: PageStreams
  /** Records a check of a tracked site through the real recorder and store, and waits until it is committed. */
  feed(
    domain: string,
    status: CheckResult['status'],
    at: number,
    extra?: { blocked?: boolean; partial?: boolean; responseMs?: number | null; locations?: LocationResult[] }
  ): Promise<void>
}

/**
 * A test server with real tracked sites: the sites are added through the store, their state lives
 * in SiteStates, and checks are recorded through the CheckRecorder into the database, exactly as
 * the running service does it. The clock is passed in.
 */
export async function trackedServer(
  t: Test,
  {
    engine = 'sqlite',
    sites,
    start,
    env = {},
    badges = new BadgeRenderer(),
    statusPageRenders = new RenderCache(),
    pageStreams: streamOptions,
    badgeHits
  }: {
    engine?: 'sqlite' | 'mysql'
    sites: Array<{ domain: string; name: string | null }>
    start: number
    env?: Record<string, string>
    badges?: BadgeRenderer
    /** The status pages' renders the server keeps; `pageStreams` forgets them too. */
    statusPageRenders?: RenderCache
    /** Builds an event feed and the status pages' streams on it (their route included), started and torn down with `t`. */
    pageStreams?: { heartbeatMs?: number; maxPerClient?: number; maxTotal?: number }
    /** Badge answers sent again without hapi; by default the server's own, following `states`. */
    badgeHits?: (states: SiteStates) => ServerDeps['badgeHits']
  }
): Promise<TrackedServer> {
  const { db, url } = await migratedDb(engine, t)
  const publicUrl = env.PUBLIC_URL ?? 'https://status.example.net'
  const clock = { now: start }
  await addSites({ db, entries: sites, now: new Date(start - 60 * MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl })
  await states.refresh(db, new Date(start))
  const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'silent' }), retryDelaysMs: [20] })
  let feed: EventFeed | undefined
  let pageStreams: PageStreams | undefined
  if (streamOptions) {
    const logger = createLogger({ level: 'silent' })
    const events = new EventFeed({ db, logger, pollMs: 50 })
    await events.start()
    const streams = new PageStreams({
      db,
      feed: events,
      logger,
      forget: (slug) => {
        forgetStatusPage(statusPageRenders, slug)
      },
      ...streamOptions
    })
    streams.start()
    t.teardown(async () => {
      await streams.close()
      await events.stop()
    })
    feed = events
    pageStreams = streams
  }
  const server = await testServer({
    db,
    env: { DATABASE_URL: url, ...env, PUBLIC_URL: publicUrl },
    now: () => new Date(clock.now),
    states,
    badges,
    statusPageRenders,
    pageStreams,
    badgeHits: badgeHits?.(states)
  })
  return {
    ...server,
    db,
    states,
    badges,
    statusPageRenders,
    clock,
    eventFeed: feed,
    pageStreams,
    feed: async (domain, status, at, { blocked = false, partial = false, responseMs, locations = [] } = {}) => {
      const answered = status === 'unavailable' ? 0 : status === 'unconfirmed' ? 1 : 3
      recorder.record(
        {
          domain,
          status,
          locations_answered: answered,
          locations_total: 3,
          response_ms: responseMs !== undefined ? responseMs : answered === 0 ? null : 120,
          cached: false,
          locations,
          checked_at: new Date(at).toISOString(),
          partial,
          blocked
        },
        'schedule'
      )
      if (!(await recorder.flush(10_000))) throw new Error('the check was not recorded')
    }
  }
}
