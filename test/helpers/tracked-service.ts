import http from 'node:http'
import type { Test } from 'tap'
import { loadConfig, type Config } from '../../config/index.js'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createLogger } from '../../lib/logger.js'
import { startService, type RunningService } from '../../lib/main.js'
import { openDb } from '../../lib/store/db.js'
import { createKey } from '../../lib/store/keys.js'
import { addSite } from '../../lib/monitoring/add-sites.js'
import { createMigratedDatabase } from './db.js'
import { LogCapture } from './server.js'
import { closedPort, serveOnLoopback } from './targets.js'
import { TEST_ACTORS } from './compiled.js'

export interface TrackedService {
  service: RunningService
  config: Config
  key: string
  /** Switches the target between 200 `ok` and 503 `down`. */
  setHealthy: (healthy: boolean) => void
  /** The User-Agent of every request the target has seen. */
  userAgents: Set<string | undefined>
  /** Host headers of the requests the target has seen, in order. */
  hosts: string[]
  /** Fires with each request's Host as it arrives at the target. */
  onRequest: (listener: (host: string) => void) => void
  /** What the service logged. */
  logs: LogCapture
}

/** The loopback ports a {@link startTrackedService} target listens on, for an `env` that maps names itself. */
export interface TargetPorts {
  /** The HTTP target. */
  http: number
  /** A port that refuses connections (every probe's https attempt). */
  closed: number
}

/**
 * The real service (`startService`, real location actors) on a fresh database of `engine`, with one
 * tracked site and a key, probing a loopback target that answers 200 or 503 on demand: every probe's
 * https attempt is refused and its http one reaches the target. Everything is torn down with `t`.
 */
export async function startTrackedService(
  t: Test,
  {
    engine,
    site,
    env,
    hang,
    sites = [],
    scheduledActors = false,
    respond,
    extraCa
  }: {
    engine: 'sqlite' | 'mysql'
    site: { domain: string; name: string }
    /** Settings over the defaults; a function gets the target's ports (to write its own CONNECT_TO). */
    env: Record<string, string> | ((ports: TargetPorts) => Record<string, string>)
    /** Requests for these hosts are never answered (the connection stays open until the probe gives up). */
    hang?: (host: string) => boolean
    /** More tracked sites. */
    sites?: Array<{ domain: string; name: string }>
    /** The scheduler's actors of their own, as in production; by default its probes share the on-demand actors. */
    scheduledActors?: boolean
    /** Answers the target's requests instead of the 200 `ok` / 503 `down` of {@link TrackedService.setHealthy}. */
    respond?: (req: http.IncomingMessage, res: http.ServerResponse, host: string) => void
    /** A certificate authority (PEM) the location actors trust besides the system's. */
    extraCa?: string
  }
): Promise<TrackedService> {
  let healthy = true
  const userAgents = new Set<string | undefined>()
  const hosts: string[] = []
  const listeners: Array<(host: string) => void> = []
  const target = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '')
    userAgents.add(req.headers['user-agent'])
    hosts.push(host)
    for (const listener of listeners) listener(host)
    if (hang?.(host)) return
    if (respond) {
      respond(req, res, host)
      return
    }
    res.writeHead(healthy ? 200 : 503).end(healthy ? 'ok' : 'down')
  })
  const port = await serveOnLoopback(t, target)
  const closed = await closedPort()

  const database = await createMigratedDatabase(engine)
  t.teardown(() => database.cleanup())
  const setup = openDb(database.url)
  for (const entry of [site, ...sites]) await addSite({ db: setup, entry, now: new Date() })
  const key = generateKey()
  await createKey({ db: setup, name: 'tracked-service', keyHash: hashKey(key), rateLimit: 100_000, now: new Date() })
  await setup.destroy()

  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: database.url,
    PROBE_TIMEOUT_MS: '1000',
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${port}`,
    ...(typeof env === 'function' ? env({ http: port, closed }) : env)
  })
  const logs = new LogCapture()
  const service = await startService({
    config,
    actors: { ...TEST_ACTORS, scheduledActors },
    logger: createLogger({ level: 'info', stream: logs }),
    ...(extraCa === undefined ? {} : { extraCa })
  })
  t.teardown(() => service.stop())
  return {
    service,
    config,
    key,
    setHealthy: (h) => {
      healthy = h
    },
    userAgents,
    hosts,
    onRequest: (l) => {
      listeners.push(l)
    },
    logs
  }
}
