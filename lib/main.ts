import type { Server } from '@hapi/hapi'
import type { Logger } from 'pino'
import type { Config } from '../config/index.js'
import { EventFeed, type WakeSource } from './events/feed.js'
import { onAnnounced } from './events/outbox.js'
import { EventStreams } from './events/streams.js'
import { PageStreams } from './events/page-streams.js'
import type { Admission } from './probing/admission.js'
import { createProbing, type ProbingOptions } from './probing/build.js'
import type { Locations } from './probing/locations/index.js'
import { startMonitoring, type Monitoring } from './monitoring/monitor.js'
import { CheckRecorder } from './monitoring/record/recorder.js'
import { ServiceMetrics } from './metrics/service-metrics.js'
import { RenderCache } from './pages/render-cache.js'
import { forgetStatusPage } from './pages/status-page.js'
import { SiteStates } from './monitoring/state/site-state.js'
import { buildServer } from './server.js'
import { openDb, type Db } from './store/db.js'
import { lockSqliteFile } from './store/instance-lock.js'
import { migrateLatest } from './store/migrate.js'
import { targetPolicy } from './rules/target-policy.js'
import { userAgent } from './rules/user-agent.js'
import { WebhookDispatcher } from './webhooks/dispatcher.js'
import { createPost } from './webhooks/post.js'
import { SecretBox } from './webhooks/secret-box.js'
import { openCheck } from './monitoring/check-secrets.js'
import { AlertDispatcher } from './alerts/dispatcher.js'
import { DeadlineLoop } from './heartbeats/deadlines.js'
import { createResolver } from './net/resolver.js'
import { createSmtpSend } from './alerts/smtp.js'
import { announceToOthers, othersAnnounce } from './sharing/events.js'
import { SharedRateLimiter } from './sharing/rate-limit.js'
import { SharedRedis } from './sharing/redis.js'
import { keepHeapCompact } from './heap-settings.js'
import { writeServedUrl } from './store/service-urls.js'

export interface RunningService {
  server: Server
  db: Db
  /** The scheduler and its counters (benchmarks and operators read them). */
  monitoring: Monitoring
  /** MAX_CHECKS_IN_FLIGHT's gate and its occupancy. */
  admission: Admission
  /** The checks waiting to be recorded, and those dropped (benchmarks read its counters). */
  recorder: CheckRecorder
  /** Sends webhook deliveries; `wake()` when events arrive. */
  webhooks: WebhookDispatcher
  /** Turns events into alerts and sends their messages; `wake()` when events arrive. */
  alerts: AlertDispatcher
  /** Moves heartbeats past their deadlines to late and down; `sweep()` looks at once. */
  heartbeats: DeadlineLoop
  /** The outbox's reader: subscribe to it to learn of each event committed (the webhook dispatcher does). */
  events: EventFeed
  /** With REDIS_URL: the connections shared state goes through; `available` says whether Redis answers. */
  redis: SharedRedis | null
  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  stop(): Promise<void>
}

/**
 * Probes still unanswered this long after a stop are reported as not answered, so that checks in
 * flight (on-demand requests and scheduled checks alike) end and the whole stop fits in
 * {@link STOP_DEADLINE_MS} however long PROBE_TIMEOUT_MS is.
 */
const STOP_GRACE_MS = 5000
/** How long in-flight requests may take to finish after a stop signal; a backstop behind the grace. */
const DRAIN_TIMEOUT_MS = 7000
/** How long checks still waiting for the database may take to be written at stop. */
const FLUSH_TIMEOUT_MS = 1500
/** How long webhook deliveries in flight may take to finish after a stop; the rest are sent later. */
const WEBHOOK_GRACE_MS = 3000

export async function startService({
  config,
  logger,
  firstPruneMs,
  extraCa,
  actors = {}
}: {
  config: Config
  logger: Logger
  /** Delay before the first prune of old checks (tests shorten it). */ firstPruneMs?: number
  /** A certificate authority (PEM) the location actors trust besides the system's (tests' own). */
  extraCa?: string
  /**
   * Which actors start, and from which module: by default the build's actor, each kind of them.
   * Tests running the sources name the compiled actor and start only the kinds they use.
   */
  actors?: Pick<ProbingOptions, 'actorFile' | 'actorExecArgv' | 'scheduledActors' | 'lightActors'>
}): Promise<RunningService> {
  // Before anything else: a second serve on one SQLite file must not touch it.
  const lock = lockSqliteFile(config.databaseUrl)
  keepHeapCompact()
  const db = openDb(config.databaseUrl)
  // Never awaited: an instance starts, and serves, whether or not Redis answers yet.
  const redis = config.redisUrl === null ? null : new SharedRedis({ url: config.redisUrl, logger })
  let locations: Locations | undefined
  let monitoring: Monitoring | undefined
  let webhooks: WebhookDispatcher | undefined
  let alerts: AlertDispatcher | undefined
  const outbound = createPost({ policy: targetPolicy(config), dnsServers: config.dnsServers, userAgent: userAgent(config.publicUrl) })
  let feed: EventFeed | undefined
  try {
    const applied = await migrateLatest(db)
    if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated')
    const intervalMs = config.checkIntervalS * 1000
    const box = new SecretBox({ key: config.webhookKey, keyFile: config.webhookKeyFile })
    const states = new SiteStates({ intervalMs, publicUrl: config.publicUrl, openCheck: (stored) => openCheck(stored, box) })
    const recorder = new CheckRecorder({ db, states, logger })
    const metrics = new ServiceMetrics()
    const probing = createProbing(config, {
      logger,
      redis: redis ?? undefined,
      extraCa,
      actorFile: actors.actorFile,
      actorExecArgv: actors.actorExecArgv,
      scheduledActors: actors.scheduledActors,
      lightActors: actors.lightActors,
      onResult: (result, source) => {
        metrics.checkDone(result, source)
        recorder.record(result, source)
      },
      siteExpect: (domain) => states.expectations(domain),
      siteCheck: (domain) => states.siteCheck(domain),
      siteTarget: (domain) => states.siteTarget(domain)
    })
    const { admission, checks } = probing
    locations = probing.locations
    // The first checks must not count actor start-up against their deadline.
    await locations.ready()
    monitoring = await startMonitoring({
      db,
      states,
      checks,
      intervalMs,
      retentionDays: config.checkRetentionDays,
      logger,
      firstPruneMs,
      concurrency: admission.scheduledSlots,
      onCheckStarted: (lagMs) => {
        metrics.checkStarted(lagMs)
      },
      instanceId: config.instanceId
    })
    const wakeups: WakeSource[] = redis ? [onAnnounced, othersAnnounce(redis)] : [onAnnounced]
    feed = new EventFeed({ db, logger, wakeups })
    await feed.start()
    const events = feed
    const streams = new EventStreams({ db, feed, logger })
    const renders = new RenderCache()
    const pageStreams = new PageStreams({
      db,
      feed,
      logger,
      forget: (slug) => {
        forgetStatusPage(renders, slug)
      }
    })
    pageStreams.start()
    const running = monitoring
    const sync = monitoring.sync
    // An outage another instance opened or closed: read that site's state again.
    const unfollow =
      sync === null
        ? () => {}
        : events.subscribe((event) => {
            if (event.site_id !== null && event.type.startsWith('outage.')) sync.outageChanged(event.site_id)
          })
    const schedule = (): ReturnType<Monitoring['schedule']> => running.schedule()
    const sitesChanged = (): Promise<void> => running.sitesChanged()
    webhooks = new WebhookDispatcher({ db, box, post: outbound.post, logger })
    const dispatcher = webhooks
    const smtp = createSmtpSend({ policy: targetPolicy(config), lookup: createResolver({ servers: config.dnsServers, timeoutMs: 5000 }) })
    const alerting = new AlertDispatcher({
      db,
      box,
      post: outbound.post,
      smtp,
      logger,
      publicUrl: config.publicUrl,
      instance: config.instanceId
    })
    alerts = alerting
    const server = await buildServer({
      config,
      db,
      logger,
      limiter: redis ? new SharedRateLimiter({ redis }) : undefined,
      checks,
      states,
      schedule,
      locations: () => probing.locations.health(),
      recording: () => {
        const { count, last } = recorder.setAside()
        return {
          pending: recorder.pending(),
          set_aside: count,
          last_set_aside: last === null ? null : { site_id: last.siteId, checked_at: last.checkedAt, code: last.code, at: last.at }
        }
      },
      webhooks: {
        box,
        wake: () => {
          dispatcher.wake()
        }
      },
      alerts: {
        post: outbound.post,
        smtp,
        wake: () => {
          alerting.wake()
        },
        health: () => alerting.channels()
      },
      events: streams,
      pageStreams,
      statusPageRenders: renders,
      metrics,
      // /healthz asks the shared connection (its commands fail fast while Redis is away), not a third one.
      redis:
        redis === null
          ? null
          : {
              ping: () =>
                redis.client.ping().then(
                  () => true,
                  () => false
                ),
              close: () => Promise.resolve()
            },
      sitesChanged
    })
    metrics.watch({
      locations: probing.locations,
      admission,
      webhooks: dispatcher,
      alerts: alerting,
      scheduler: running.scheduler,
      recordingBacklog: () => recorder.pending(),
      setAside: () => recorder.setAside().count
    })
    // A committed event wakes the dispatcher at once, instead of at its next round.
    const unsubscribe = events.subscribe(() => {
      dispatcher.wake()
      alerting.wake()
    })
    const stopAnnouncing = redis ? announceToOthers(redis) : () => {}
    await server.start()
    // The operator tool prints page links from it, whatever its own environment says (decisions.md).
    await writeServedUrl({ db, url: config.publicUrlSet || config.port !== 0 ? config.publicUrl : server.info.uri, now: new Date() })
    dispatcher.start()
    await alerting.start()
    const heartbeats = new DeadlineLoop({
      db,
      now: () => new Date(),
      onError: (err) => {
        logger.error({ err }, 'heartbeat deadlines not judged; trying again')
      }
    })
    heartbeats.start()
    logger.info({ uri: server.info.uri, locations: config.locations.map((l) => l.label) }, 'listening')
    let stopping: Promise<void> | undefined
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        locations?.stopping(STOP_GRACE_MS)
        // No new scheduled checks from now on; the ones running end within the grace, while the
        // listener closes and the requests in flight finish.
        const scheduled = monitoring?.stop()
        const delivering = dispatcher.stop(WEBHOOK_GRACE_MS)
        const stoppingAlerts = alerting.stop(WEBHOOK_GRACE_MS)
        const stoppingHeartbeats = heartbeats.stop()
        // Event streams never end by themselves: end them, so that the drain does not wait for them.
        streams.close()
        const pagesClosed = pageStreams.close()
        await drain(server, DRAIN_TIMEOUT_MS)
        await pagesClosed
        await scheduled
        unsubscribe()
        stopAnnouncing()
        unfollow()
        await events.stop()
        await delivering
        await stoppingAlerts
        await stoppingHeartbeats
        await outbound.close()
        if (!(await recorder.flush(FLUSH_TIMEOUT_MS))) logger.warn({ pending: recorder.pending() }, 'checks not recorded at stop')
        recorder.close()
        await monitoring?.retire()
        await locations?.close()
        await db.destroy()
        lock?.release()
        await redis?.close()
      })()
      return stopping
    }
    return { server, db, monitoring, admission, recorder, webhooks: dispatcher, alerts: alerting, heartbeats, events, redis, stop }
  } catch (err) {
    await webhooks?.stop(0).catch(() => {})
    await alerts?.stop(0).catch(() => {})
    await outbound.close().catch(() => {})
    await monitoring?.stop().catch(() => {})
    await feed?.stop().catch(() => {})
    await locations?.close().catch(() => {})
    await db.destroy().catch(() => {})
    lock?.release()
    await redis?.close().catch(() => {})
    throw err
  }
}

/**
 * Stops listening and waits for the requests in flight. Node's close answers every request it has
 * read (with `Connection: close`) and closes idle keep-alive connections; past `timeoutMs` every
 * connection still open is cut.
 */
async function drain(server: Server, timeoutMs: number): Promise<void> {
  const timer = setTimeout(() => {
    server.listener.closeAllConnections()
  }, timeoutMs)
  try {
    await server.stop()
  } finally {
    clearTimeout(timer)
  }
}

export { STOP_DEADLINE_MS, stopOnSignals } from './stop-on-signals.js'
