import http from 'node:http'
import Hapi, { type Server, type ServerRoute } from '@hapi/hapi'
import Boom from '@hapi/boom'
import type { Logger } from 'pino'
import type { Config } from '../config/index.js'
import { BadgeRenderer } from './badge/renderer.js'
import type { EventStreams } from './events/streams.js'
import type { PageStreams } from './events/page-streams.js'
import type { SiteStates } from './monitoring/state/site-state.js'
import type { CheckSupervisor } from './probing/supervisor.js'
import { KeyAuthenticator, registerKeyAuth, registerMetricsToken } from './auth.js'
import { answerClientErrors, formatErrorResponse } from './errors.js'
import { logRequestErrors, registerAccessLog } from './logger.js'
import { ServiceMetrics } from './metrics/service-metrics.js'
import { RenderCache } from './pages/render-cache.js'
import { errorPage, registerPages } from './pages/views.js'
import { PageDirectory } from './pages/page-directory.js'
import { addBudgetHeaders, chargeAfterBody, RateLimiter, type Limiter } from './rate-limit.js'
import type { RecordingHealth, ScheduleHealth } from './routes/health.js'
import type { LocationHealth } from './probing/locations/index.js'
import { routes } from './routes/index.js'
import type { Db } from './store/db.js'
import { createResolver, type Resolve } from './net/resolver.js'
import { createRedisPing, type RedisPing } from './net/redis-ping.js'
import { targetPolicy } from './rules/target-policy.js'
import { SecretBox } from './webhooks/secret-box.js'
import { createPost, type Post } from './webhooks/post.js'
import { createSmtpSend, type SmtpSend } from './alerts/smtp.js'
import type { ChannelHealth } from './alerts/dispatcher.js'
import { userAgent } from './rules/user-agent.js'
import { heartbeatExposition } from './metrics/heartbeat-series.js'
import { answerBadgeHitsFirst, BadgeHits } from './routes/badge-hits.js'

/** Everything the server needs, passed in so tests can build one around their own database and clock. */
export interface ServerDeps {
  config: Config
  db: Db
  logger: Logger
  now?: () => Date
  /** Default: this process's own windows; with REDIS_URL, the shared one (lib/sharing/rate-limit.ts). */
  limiter?: Limiter
  checks?: CheckSupervisor
  states?: SiteStates
  /** Whether the scheduler keeps up, told by /healthz. */
  schedule?: () => ScheduleHealth
  /** What each location is made of, told by /healthz. */
  locations?: () => LocationHealth[]
  /** How recording keeps up, told by /healthz. */
  recording?: () => RecordingHealth
  /**
   * Called after the sites API added or removed a site; resolves once the scheduler and `states`
   * hold the change. Without one (no scheduler), `states` is refreshed directly.
   */
  sitesChanged?: () => Promise<void>
  /** Rendered badges; tests pass their own to count renders. */
  badges?: BadgeRenderer
  /** Renders of the public status pages, shared with what forgets them on their sites' events; default a new one. */
  statusPageRenders?: RenderCache
  /** Tests shorten them. */
  timeouts?: ServerTimeouts
  /** Webhooks: the secret box shared with the dispatcher, the dispatcher's wake-up, the policy's look-up (tests). */
  webhooks?: { box?: SecretBox; wake?: () => void; lookup?: Resolve }
  /** Alerting: how a channel's test message is sent (default: through the address policy, made here), the dispatcher's wake-up and health. */
  alerts?: { post?: Post; smtp?: SmtpSend; wake?: () => void; health?: () => ChannelHealth[] }
  /** The open event streams, for `GET /api/v1/events`. */
  events?: EventStreams
  /** The status pages' event streams, for `GET /status/{slug}/events`. */
  pageStreams?: PageStreams
  /** The service's metrics; without them (tests) the server makes its own, reading `states` and the rate limiter. */
  metrics?: ServiceMetrics
  /** Badge answers sent again without hapi (lib/routes/badge-hits.ts); by default one following `states`. */
  badgeHits?: BadgeHits
  /** /healthz's Redis probe; by default one on REDIS_URL (none when unset), closed with the server. */
  redis?: RedisPing | null
}

/**
 * The listening socket's accept queue. Node's default, 511, is too short for thousands of clients
 * connecting at once (a load balancer warming its pool, a consumer opening 2,000 connections): the
 * handshakes beyond it are dropped and retried by the client after 1, 3, 7 s. The kernel caps it at
 * `net.core.somaxconn` (4,096 on current kernels).
 */
export const LISTEN_BACKLOG = 4096

/** Largest request body accepted anywhere: the check endpoint's 4 KiB. */
export const MAX_BODY_BYTES = 4096

/** How long a client may take over its requests; Node enforces them, checking every `checkEveryMs`. */
export interface ServerTimeouts {
  /** From a connection's first byte of a request to the end of its headers (slowloris). */
  headersMs: number
  /** For the whole request, body included (ours are 4 KiB at most); the answer is not counted. */
  requestMs: number
  /** An idle keep-alive connection is closed after this (idle connections hold descriptors); a load balancer in front must close idle ones sooner. */
  keepAliveMs: number
  /** How often Node looks for connections past the first two. */
  checkEveryMs: number
}

export const SERVER_TIMEOUTS: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 10_000, checkEveryMs: 1000 }

/** Without a scheduler to tell, a change of sites is brought into the in-memory state directly. */
function refreshStates(db: Db, states: SiteStates | undefined, now: () => Date): () => Promise<void> {
  return async () => {
    if (!states) return
    states.changed()
    await states.refresh(db, now())
  }
}

/**
 * Builds the Hapi server without listening: `main` starts it, tests drive it with `inject()`.
 * Every route under /api/v1/ needs a key unless it says otherwise.
 */
export async function buildServer(deps: ServerDeps): Promise<Server> {
  const { config, db, logger } = deps
  const now = deps.now ?? (() => new Date())
  const limiter = deps.limiter ?? new RateLimiter({ now: () => now().getTime() })
  const timeouts = deps.timeouts ?? SERVER_TIMEOUTS
  // Node has defaults (60 s for headers, 5 min per request, checked every 30 s), which let slow
  // clients hold connections for minutes; they are only settable when the listener is made.
  const listener = http.createServer({
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    connectionsCheckingInterval: timeouts.checkEveryMs
  })
  listenWithBacklog(listener, LISTEN_BACKLOG)
  const server = Hapi.server({
    listener,
    port: config.port,
    host: config.host,
    router: { isCaseSensitive: true, stripTrailingSlash: false },
    // hapi compresses every text/* answer a client accepts gzip for, streams included: an event
    // stream would then sit in the compressor's buffer instead of reaching the client.
    mime: { override: { 'text/event-stream': { compressible: false } } },
    // hapi's clean stop half-closes every connection it thinks idle; a request already on its way
    // over one is then read and run, but its answer can no longer be sent. Node's own close (see
    // lib/main.ts) answers every request it reads and closes only idle keep-alive connections.
    operations: { cleanStop: false },
    routes: {
      payload: { maxBytes: MAX_BODY_BYTES },
      validate: {
        // Joi's message names the field and the rule; hapi's default hides it behind a generic text.
        failAction: (_request, _h, err) => {
          throw Boom.badRequest(err?.message ?? 'invalid request')
        }
      },
      response: { emptyStatusCode: 204 },
      // Every answer says what it is and must not be sniffed as something else (JSON as HTML, say),
      // nor framed (hapi's xframe default). No HSTS: TLS is the proxy's in front, if any.
      security: { hsts: false, xss: false, noOpen: false, noSniff: true, referrer: false }
    }
  })
  answerClientErrors(server.listener)
  answerBadgeHitsFirst(server, listener, deps.badgeHits ?? new BadgeHits({ changes: () => deps.states?.changes ?? 0 }))
  registerAccessLog(server, logger)
  logRequestErrors(server, logger)
  registerKeyAuth(server, new KeyAuthenticator({ db, defaultLimit: config.rateLimitPerMin }), limiter)
  server.auth.default({ strategy: 'api-key', mode: 'required' })
  if (config.metricsToken !== null) registerMetricsToken(server, config.metricsToken)
  const metrics = deps.metrics ?? new ServiceMetrics({ now })
  metrics.watch({
    states: deps.states,
    rateLimitRefusals: () => limiter.refused,
    heartbeats: () => heartbeatExposition({ db, now })
  })
  await registerPages(server)
  // One onPreResponse step for every response: errors become JSON (HTML on pages), keyed responses
  // get their budget. Budget first: an error replaced while formatting keeps the headers of the one
  // it replaces.
  server.ext('onPreResponse', (request, h) => {
    const budget = addBudgetHeaders(request, limiter)
    if (budget === undefined) return formatErrorResponse(request, h, errorPage)
    return budget.then(() => formatErrorResponse(request, h, errorPage))
  })
  const redis = deps.redis !== undefined ? deps.redis : config.redisUrl === null ? null : createRedisPing(config.redisUrl)
  if (deps.redis === undefined && redis !== null) {
    server.ext('onPostStop', async () => {
      await redis.close()
    })
  }
  // Every route added to this server, here or later (tests add their own), gets the charge step its
  // method needs (see chargeAfterBody).
  const addRoutes = server.route.bind(server)
  server.route = ((route: ServerRoute | ServerRoute[]) => {
    addRoutes(chargeAfterBody(Array.isArray(route) ? route : [route], limiter))
  }) as typeof server.route
  const policy = targetPolicy(config)
  const box = deps.webhooks?.box ?? new SecretBox({ key: config.webhookKey, keyFile: config.webhookKeyFile })
  const lookup = deps.webhooks?.lookup ?? createResolver({ servers: config.dnsServers, timeoutMs: 5000 })
  let post = deps.alerts?.post
  if (post === undefined) {
    const own = createPost({ policy, lookup, userAgent: userAgent(config.publicUrl) })
    post = own.post
    server.ext('onPostStop', () => own.close())
  }
  server.route(
    routes({
      db,
      instance: config.instanceId,
      redis,
      limiter,
      now,
      publicUrl: config.publicUrl,
      trustedProxies: config.trustedProxies,
      badges: deps.badges ?? new BadgeRenderer(),
      statusPageRenders: deps.statusPageRenders ?? new RenderCache(),
      pageDirectory: new PageDirectory({ db }),
      checks: deps.checks,
      states: deps.states,
      schedule: deps.schedule,
      locations: deps.locations,
      recording: deps.recording,
      webhooks: { box, policy, lookup, wake: deps.webhooks?.wake ?? (() => {}) },
      alerting: {
        box,
        policy,
        lookup,
        wake: deps.alerts?.wake ?? (() => {}),
        deliver: {
          db,
          box,
          post,
          smtp: deps.alerts?.smtp ?? createSmtpSend({ policy, lookup }),
          logger,
          now,
          random: Math.random,
          publicUrl: config.publicUrl
        }
      },
      alertHealth: deps.alerts?.health,
      events: deps.events,
      pageStreams: deps.pageStreams,
      metrics: { metrics, tokenAuth: config.metricsToken !== null },
      sitesChanged: deps.sitesChanged ?? refreshStates(db, deps.states, now)
    })
  )
  return server
}

/**
 * hapi calls `listener.listen(port, address, done)` with no way to pass a backlog; this inserts one
 * into that call (and into `listen(port, done)`), leaving any other form alone.
 */
function listenWithBacklog(listener: http.Server, backlog: number): void {
  const listen = listener.listen.bind(listener) as (...args: unknown[]) => http.Server
  listener.listen = ((...args: unknown[]) => {
    const done = args.at(-1)
    if (typeof done !== 'function' || args.length > 3) return listen(...args)
    const [port, address] = args.length === 3 ? args : [args[0], undefined]
    return listen(port, address ?? undefined, backlog, done)
  }) as typeof listener.listen
}
