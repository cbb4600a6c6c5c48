import type { ServerRoute } from '@hapi/hapi'
import type { BadgeRenderer } from '../badge/renderer.js'
import type { ServiceMetrics } from '../metrics/service-metrics.js'
import type { EventStreams } from '../events/streams.js'
import type { PageStreams } from '../events/page-streams.js'
import type { RenderCache } from '../pages/render-cache.js'
import type { SiteStates } from '../monitoring/state/site-state.js'
import type { CheckSupervisor } from '../probing/supervisor.js'
import type { Limiter } from '../rate-limit.js'
import type { Db } from '../store/db.js'
import type { PageDirectory } from '../pages/page-directory.js'
import { badgeRoutes } from './badges.js'
import { batchCheckRoutes } from './batch-check.js'
import { checkRoutes } from './check.js'
import { eventRoutes } from './events.js'
import { fallbackRoutes } from './fallback.js'
import { healthRoutes, type RecordingHealth, type ScheduleHealth } from './health.js'
import { maintenanceRoutes } from './maintenance.js'
import type { LocationHealth } from '../probing/locations/index.js'
import { metricsRoutes } from './metrics.js'
import type { RedisPing } from '../net/redis-ping.js'
import { openApiRoutes } from './openapi.js'
import { outageRoutes } from './outages.js'
import { pageRoutes } from './pages.js'
import { statusPageDataRoutes } from './status-page-data.js'
import { rateLimitRoutes } from './rate-limit.js'
import { siteRoutes } from './sites.js'
import { slaRoutes } from './sla.js'
import { statusRoutes } from './status.js'
import { statusPageRoutes } from './status-pages.js'
import { statusPageHtmlRoutes } from './status-page.js'
import { forgetStatusPage } from '../pages/status-page.js'
import { webhookRoutes, type WebhookRouteDeps } from './webhooks.js'
import { alertPolicyRoutes } from './alert-policies.js'
import { heartbeatRoutes } from './heartbeats.js'
import { HeartbeatFigures } from '../badge/heartbeat-figures.js'
import { heartbeatBadgeRoutes } from './heartbeat-badge.js'
import { monitorRoutes } from './monitors.js'
import { monitorBadgeRoutes } from './monitor-badge.js'
import { pingRoutes, type PingLimits } from './pings.js'
import { configRoutes } from './config.js'
import { channelRoutes, type AlertRouteDeps } from './channels.js'
import type { ChannelHealth } from '../alerts/dispatcher.js'

export interface RouteDeps {
  db: Db
  limiter: Limiter
  now: () => Date
  /** Base of `url` fields, page links and embed code. */
  publicUrl: string
  /** TRUSTED_PROXIES: reverse proxies whose `X-Forwarded-For` names the client (the page streams' bound). */
  trustedProxies?: readonly string[]
  /** Rendered badges, kept between hits. */
  badges: BadgeRenderer
  /** On-demand checks; a server built without one (some tests) has no check route. */
  checks?: CheckSupervisor
  /** Tracked sites' state for the status endpoint, badges and pages; likewise optional. */
  states?: SiteStates
  /** Whether the scheduler keeps up, for /healthz; without one (no scheduler) it is `ok`. */
  schedule?: () => ScheduleHealth
  /** What each location is made of (agents counted), for /healthz; without it, /healthz leaves it out. */
  locations?: () => LocationHealth[]
  /** How recording keeps up (waiting, set aside), for /healthz; without it, /healthz leaves it out. */
  recording?: () => RecordingHealth
  /** INSTANCE_ID, named by /healthz. */
  instance: string
  /** /healthz's Redis probe; null when REDIS_URL is unset. */
  redis: RedisPing | null
  /** The webhook routes' secret box, target policy and the dispatcher's wake-up. */
  webhooks: Omit<WebhookRouteDeps, 'db' | 'now'>
  /** The open event streams; a server built without them (some tests) has no events route. */
  events?: EventStreams
  /** The status pages' event streams; without them (some tests) there is no `/status/{slug}/events`. */
  pageStreams?: PageStreams
  /** Resolves once the scheduler and `states` hold a site the sites API just added or removed. */
  sitesChanged: () => Promise<void>
  /** `GET /metrics`: what it serves, and whether METRICS_TOKEN is accepted too. */
  metrics: { metrics: ServiceMetrics; tokenAuth: boolean }
  /** Renders of the public status pages (HTML, JSON, feed), keyed by request path; one per server. */
  statusPageRenders: RenderCache
  /** The stored status pages' slugs and sites, held in memory for badges and 404s. */
  pageDirectory: PageDirectory
  /** Alerting: the channels' secret box, the address policy, how a test message is sent. */
  alerting: Omit<AlertRouteDeps, 'db' | 'now'>
  /** The alert channels' health for /healthz; without it (no dispatcher), /healthz leaves it out. */
  alertHealth?: () => ChannelHealth[]
  /** Pings a minute per token and per client address (default PING_LIMITS). */
  pingLimits?: PingLimits
}

/**
 * The route table: every path the service answers, one module per resource. Every keyed route
 * declares the scope it needs (`requireScope`); `GET /api/v1/rate_limit` alone is open to any key.
 */
export function routes(deps: RouteDeps): ServerRoute[] {
  const heartbeatFigures = new HeartbeatFigures({ db: deps.db })
  return [
    ...healthRoutes({ ...deps, alerts: deps.alertHealth }),
    ...rateLimitRoutes(deps),
    ...(deps.checks ? checkRoutes({ checks: deps.checks, limiter: deps.limiter }) : []),
    ...(deps.checks ? batchCheckRoutes({ checks: deps.checks, limiter: deps.limiter }) : []),
    ...(deps.states ? statusRoutes({ states: deps.states, now: deps.now }) : []),
    ...outageRoutes(deps),
    ...(deps.events ? eventRoutes({ streams: deps.events, limiter: deps.limiter }) : []),
    ...(deps.states
      ? siteRoutes({ db: deps.db, states: deps.states, now: deps.now, sitesChanged: deps.sitesChanged, box: deps.webhooks.box })
      : []),
    ...(deps.states
      ? monitorRoutes({ db: deps.db, states: deps.states, now: deps.now, sitesChanged: deps.sitesChanged, box: deps.webhooks.box })
      : []),
    ...(deps.states ? monitorBadgeRoutes({ states: deps.states, renderer: deps.badges, now: deps.now }) : []),
    ...maintenanceRoutes(deps),
    ...statusPageRoutes({
      ...deps,
      forget: (slug) => {
        forgetStatusPage(deps.statusPageRenders, slug)
        deps.pageDirectory.changed(slug)
      }
    }),
    ...configRoutes({
      ...deps,
      pagesChanged: (slugs) => {
        for (const slug of slugs) {
          forgetStatusPage(deps.statusPageRenders, slug)
          deps.pageDirectory.changed(slug)
        }
      }
    }),
    ...slaRoutes(deps),
    ...(deps.states
      ? badgeRoutes({ db: deps.db, states: deps.states, renderer: deps.badges, now: deps.now, directory: deps.pageDirectory })
      : []),
    ...(deps.states ? pageRoutes({ db: deps.db, states: deps.states, now: deps.now, publicUrl: deps.publicUrl }) : []),
    ...(deps.states
      ? statusPageDataRoutes({
          db: deps.db,
          states: deps.states,
          now: deps.now,
          publicUrl: deps.publicUrl,
          badges: deps.badges,
          renders: deps.statusPageRenders,
          directory: deps.pageDirectory
        })
      : []),
    ...(deps.states
      ? statusPageHtmlRoutes({ ...deps, states: deps.states, renders: deps.statusPageRenders, streams: deps.pageStreams })
      : []),
    ...webhookRoutes({ db: deps.db, now: deps.now, ...deps.webhooks }),
    ...channelRoutes({ db: deps.db, now: deps.now, ...deps.alerting }),
    ...alertPolicyRoutes({ db: deps.db, now: deps.now, ...deps.alerting }),
    ...heartbeatRoutes(deps),
    ...heartbeatBadgeRoutes({ figures: heartbeatFigures, renderer: deps.badges, now: deps.now }),
    ...pingRoutes({
      ...deps,
      pinged: (tokenHash) => {
        heartbeatFigures.forgetToken(tokenHash)
      },
      ...(deps.pingLimits === undefined ? {} : { limits: deps.pingLimits })
    }),
    ...metricsRoutes(deps.metrics),
    ...openApiRoutes({ publicUrl: deps.publicUrl }),
    ...fallbackRoutes()
  ]
}
