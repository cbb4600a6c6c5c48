import type { Logger } from 'pino'
import type { Config } from '../../config/index.js'
import { createResolver, probeDns, type DnsSettings, type Resolve } from '../net/resolver.js'
import { targetPolicy, type TargetPolicy } from '../rules/target-policy.js'
import { userAgent } from '../rules/user-agent.js'
import { Admission } from './admission.js'
import { AgentLink } from './locations/agent.js'
import { ANSWER_MARGIN_MS, Locations } from './locations/index.js'
import { CheckSupervisor, type Outcome, type Prober, type SupervisorOptions } from './supervisor.js'
import { SharedCheckRuns } from '../sharing/check-runs.js'
import type { SharedRedis } from '../sharing/redis.js'

/** The probing side of the service, built from one configuration. */
export interface Probing {
  /** The one target policy the supervisor and every actor judge targets by. */
  policy: TargetPolicy
  /** The resolver settings of the supervisor's policy look-up and of every actor. */
  dns: DnsSettings
  /** The locations, local and agents'. Start-up awaits `locations.ready()`; stop calls `stopping()` then `close()`. */
  locations: Locations
  /** MAX_CHECKS_IN_FLIGHT's gate and its occupancy. */
  admission: Admission
  checks: CheckSupervisor
}

export interface ProbingOptions {
  logger: Logger
  /** Where every fresh result goes (the monitoring side records it). */
  onResult?: SupervisorOptions['onResult']
  /** A tracked site's own expectations, which its checks are judged by. */
  siteExpect?: SupervisorOptions['siteExpect']
  /** A tracked site's own request and assertions, which its checks send. */
  siteCheck?: SupervisorOptions['siteCheck']
  siteTarget?: SupervisorOptions['siteTarget']
  /** The supervisor's look-up for the target policy; default: a resolver with {@link Probing.dns}. */
  lookup?: Resolve
  /** Wraps the pool as the supervisor asks it (tests count the probe runs). */
  prober?: (locations: Locations) => Prober
  /** The actor module; default the build's (locations/local.ts `ACTOR_FILE`). Fault tests give ones that hang or wedge. */
  actorFile?: string
  /** The actors' threads' Node options (Locations' `execArgv`); default this process's own. */
  actorExecArgv?: string[]
  /** A second actor per location for the scheduler's probes (Locations' `scheduledActors`); default true. */
  scheduledActors?: boolean
  /** A third actor per location for light consumers' checks (Locations' `lightActors`); default true. */
  lightActors?: boolean
  /**
   * Locations already running, asked instead of starting new ones; they keep their own settings and
   * their owner closes them (a test that judges many configurations with one set of actors).
   */
  locations?: Locations
  /** Default: the service's own, naming PUBLIC_URL. */
  userAgent?: string
  /** With REDIS_URL: on-demand results and probe runs are shared with the other instances on it. */
  redis?: SharedRedis
  /** A certificate authority (PEM) the actors trust besides the system's: tests' own. */
  extraCa?: string
}

/**
 * Builds the probing side from the configuration: the target policy and resolver settings, the
 * location actors, admission and the supervisor. Nothing runs yet but the actors' threads starting.
 */
export function createProbing(config: Config, opts: ProbingOptions): Probing {
  const policy = targetPolicy(config)
  const dns = probeDns(config)
  const userAgentText = opts.userAgent ?? userAgent(config.publicUrl)
  const agents =
    opts.locations === undefined && config.nats !== null && config.locations.some((l) => l.agent !== undefined)
      ? new AgentLink({ nats: config.nats, logger: opts.logger, instanceId: config.instanceId })
      : undefined
  const locations =
    opts.locations ??
    new Locations({
      locations: config.locations,
      connectTo: config.connectTo,
      policy,
      dns,
      timeoutMs: config.probeTimeoutMs,
      userAgent: userAgentText,
      // Pings and liveness checks come on top of one probe per admitted check.
      concurrency: config.maxChecksInFlight + 16,
      logger: opts.logger,
      actorFile: opts.actorFile,
      execArgv: opts.actorExecArgv,
      extraCa: opts.extraCa,
      scheduledActors: opts.scheduledActors ?? true,
      lightActors: opts.lightActors ?? true,
      agents
    })
  const admission = new Admission({
    capacity: config.maxChecksInFlight,
    keyShare: config.maxKeyShare,
    maxCheckMs: config.probeTimeoutMs + ANSWER_MARGIN_MS
  })
  // The longest a probe run may take: the policy's look-up, then the locations' deadline and margin.
  const runMs = dns.timeoutMs + config.probeTimeoutMs + ANSWER_MARGIN_MS
  const shared = opts.redis && new SharedCheckRuns<Outcome>({ redis: opts.redis, ttlMs: config.cacheTtlS * 1000, runMs })
  const checks = new CheckSupervisor({
    shared,
    prober: opts.prober?.(locations) ?? locations,
    admission,
    cacheTtlS: config.cacheTtlS,
    policy,
    connectTo: config.connectTo,
    lookup: opts.lookup ?? createResolver(dns),
    lookupTimeoutMs: dns.timeoutMs,
    onResult: opts.onResult,
    siteExpect: opts.siteExpect,
    siteCheck: opts.siteCheck,
    siteTarget: opts.siteTarget
  })
  return { policy, dns, locations, admission, checks }
}
