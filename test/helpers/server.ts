import { Writable } from 'node:stream'
import type { Server } from '@hapi/hapi'
import { loadConfig, type Config } from '../../config/index.js'
import type { BadgeRenderer } from '../../lib/badge/renderer.js'
import { EventFeed } from '../../lib/events/feed.js'
import { EventStreams } from '../../lib/events/streams.js'
import { PageStreams } from '../../lib/events/page-streams.js'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createLogger } from '../../lib/logger.js'
import { SiteStates } from '../../lib/monitoring/state/site-state.js'
import { CheckSupervisor } from '../../lib/probing/supervisor.js'
import type { Limiter } from '../../lib/rate-limit.js'
import { buildServer, type ServerDeps, type ServerTimeouts } from '../../lib/server.js'
import type { Db } from '../../lib/store/db.js'
import { createKey } from '../../lib/store/keys.js'
import { recordLogLines } from './suite-log.js'

/** Every log line a test server wrote, parsed, so tests can assert what logs never contain. */
export class LogCapture extends Writable {
  readonly lines: string[] = []
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    const lines = chunk.toString().split('\n').filter(Boolean)
    this.lines.push(...lines)
    recordLogLines(lines)
    done()
  }
}

export interface TestServer {
  server: Server
  config: Config
  logs: LogCapture
  /** Issues a key straight into the store (scopes comma-separated, `read,check` by default); returns the key text. */
  issueKey: (options?: { name?: string; limit?: number | null; scopes?: string }) => Promise<string>
}

export async function testServer({
  db,
  env = {},
  now,
  limiter,
  checks,
  states,
  badges,
  timeouts,
  schedule,
  webhooks,
  events,
  pageStreams,
  sitesChanged,
  statusPageRenders,
  badgeHits
}: {
  db: Db
  env?: Record<string, string>
  now?: () => Date
  limiter?: Limiter
  checks?: CheckSupervisor
  states?: SiteStates
  badges?: BadgeRenderer
  timeouts?: ServerTimeouts
  schedule?: () => 'ok' | 'behind'
  webhooks?: ServerDeps['webhooks']
  events?: EventStreams
  pageStreams?: ServerDeps['pageStreams']
  sitesChanged?: () => Promise<void>
  statusPageRenders?: ServerDeps['statusPageRenders']
  badgeHits?: ServerDeps['badgeHits']
}): Promise<TestServer> {
  const config = loadConfig({ PORT: '0', LOG_LEVEL: 'info', ...env })
  const logs = new LogCapture()
  const logger = createLogger({ level: config.logLevel, stream: logs })
  const server = await buildServer({
    config,
    db,
    logger,
    now,
    limiter,
    checks,
    states,
    badges,
    timeouts,
    schedule,
    webhooks,
    events,
    pageStreams,
    sitesChanged,
    statusPageRenders,
    badgeHits
  })
  return {
    server,
    config,
    logs,
    issueKey: async ({ name = 'test', limit = null, scopes } = {}) => {
      const key = generateKey()
      await createKey({ db, name, keyHash: hashKey(key), rateLimit: limit, scopes, now: new Date() })
      return key
    }
  }
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` }
}

/**
 * A test server that answers every route the service has: a check supervisor whose locations
 * answer nothing, empty site states, and event streams (the API's and the status pages') whose feed
 * never runs. For tests about the
 * route table itself (scopes, the OpenAPI document), where a route's existence is the point.
 */
export async function everyRouteServer(
  t: { teardown(fn: () => unknown): void },
  { db, env = {} }: { db: Db; env?: Record<string, string> }
): Promise<TestServer> {
  const checks = new CheckSupervisor({
    prober: { probeAll: async () => [] },
    cacheTtlS: 60,
    policy: { allowPrivate: false },
    connectTo: []
  })
  const states = new SiteStates({ intervalMs: 60_000, publicUrl: 'https://status.example.net' })
  const logger = createLogger({ level: 'silent' })
  const feed = new EventFeed({ db, logger })
  const events = new EventStreams({ db, feed, logger })
  const pageStreams = new PageStreams({ db, feed, logger, forget: () => {} })
  t.teardown(async () => {
    events.close()
    await pageStreams.close()
  })
  return testServer({ db, env, checks, states, events, pageStreams })
}
