import { setImmediate as afterIo } from 'node:timers/promises'
import { Events, type NatsConnection, type Service, type ServiceMsg } from 'nats'
import type { Logger } from 'pino'
import { agentService, agentSubject, probeQueue, probeSubject, readProbeRequest, requestExpectations } from '../net/agent-protocol.js'
import type { AgentProbeReply } from '../net/agent-reply.js'
import { connectNats, endConnection } from '../net/nats.js'
import { probeDns } from '../net/resolver.js'
import { targetPolicy } from '../rules/target-policy.js'
import { classesOfService } from '../probing/locations/classes.js'
import { LocalLocation } from '../probing/locations/local.js'
import { ANSWER_MARGIN_MS } from '../probing/locations/location.js'
import type { AgentConfig } from './config.js'
import { packageVersion } from './version.js'

/**
 * Probes one agent runs at once, whatever the number of centrals sending them; past it a request is
 * answered `503` at once (the central reports the location busy) rather than queued behind the rest.
 */
export const MAX_AGENT_IN_FLIGHT = 8000

/** Sent when a request names none (every central names its own). */
const DEFAULT_USER_AGENT = 'SiteStatusAPI/0.1 (location agent)'

export interface RunningAgent {
  /** The agent's id in the NATS services API (`$SRV.PING.site-status-agent`). */
  id: string
  /** Requests answered with a probe, and refused without one, since start. */
  counts(): { probed: number; refused: number }
  /**
   * Resolves with the reason if the agent stops serving by itself (NATS took away a subscription it
   * needs): the command then stops it and exits 1 with that one line.
   */
  failed: Promise<string>
  /** Stops taking requests, answers those in flight, then closes the connection and the actors. */
  stop(): Promise<void>
}

export interface AgentActors {
  /** The actor module; default the build's. Tests running the sources name the compiled one. */
  actorFile?: string
  /** The actors' threads' Node options; default this process's own. */
  actorExecArgv?: string[]
  /** Actors of their own for scheduled and light consumers' probes (lib/probing/locations/classes.ts); default true. */
  scheduledActors?: boolean
  lightActors?: boolean
}

/**
 * `site-status agent`: one location's actors, the same `workers/` code and classes of service as a
 * local location of the central, serving that location's probe requests over NATS in its queue
 * group. It opens no port; it resolves and vets every address itself by its own target policy,
 * whatever the central allows.
 */
export async function startAgent({
  config,
  logger,
  actors = {}
}: {
  config: AgentConfig
  logger: Logger
  actors?: AgentActors
}): Promise<RunningAgent> {
  const policy = targetPolicy(config)
  const location = new LocalLocation({
    label: config.location,
    settings: {
      proxy: null,
      resolveAtProxy: false,
      connectTo: config.connectTo,
      policy,
      dns: probeDns(config),
      timeoutMs: config.probeTimeoutMs,
      userAgent: DEFAULT_USER_AGENT
    },
    classes: classesOfService({ scheduled: actors.scheduledActors ?? true, light: actors.lightActors ?? true }),
    logger,
    concurrency: MAX_AGENT_IN_FLIGHT + 16,
    actorFile: actors.actorFile,
    execArgv: actors.actorExecArgv
  })
  let nc: NatsConnection | undefined
  try {
    await location.ready()
    nc = await connectNats(config.nats, `site-status agent ${config.location} ${config.instanceId}`)
  } catch (err) {
    await location.close()
    throw err
  }
  const conn = nc
  const version = packageVersion()
  let probed = 0
  let refused = 0
  const inFlight = new Set<Promise<void>>()
  let stopping: Promise<void> | undefined

  const handle = (msg: ServiceMsg): void => {
    const request = readProbeRequest(msg.data)
    if (request === null) {
      refused++
      logger.warn({ location: config.location, bytes: msg.data.byteLength }, 'refused an invalid probe request')
      msg.respondError(400, 'invalid probe request')
      return
    }
    // Stopping, or full: the central sends it to another agent of the location (a 503 says so).
    if (stopping !== undefined || inFlight.size >= MAX_AGENT_IN_FLIGHT) {
      refused++
      msg.respondError(503, stopping === undefined ? 'agent at capacity' : 'agent stopping')
      return
    }
    // A probe ends by its own deadline; one that has not by then points at a wedged actor, which
    // the location checks and replaces, as the central does for its own.
    const overdue = setTimeout(() => {
      location.missed(request.class)
    }, config.probeTimeoutMs + ANSWER_MARGIN_MS)
    const running = location
      .probe({
        domain: request.domain,
        lane: request.lane,
        cls: request.class,
        userAgent: request.user_agent,
        expect: requestExpectations(request),
        ...(request.check === undefined ? {} : { check: request.check })
      })
      .then((answer) => {
        // The location's own failures (a wedged or failed actor) are this agent's, not a measurement:
        // a service error, which the central reports as the agent failing, never as the site's state.
        if (answer.code?.startsWith('location_') === true) {
          refused++
          msg.respondError(500, 'the agent failed to probe')
          return
        }
        probed++
        const reply: AgentProbeReply = {
          v: 1,
          location: config.location,
          domain: request.domain,
          result: {
            status: answer.status,
            http_code: answer.http_code,
            response_ms: answer.response_ms,
            error: answer.error,
            code: (answer.code ?? null) as AgentProbeReply['result']['code'],
            final_url: answer.final_url,
            tls_expires_at: answer.tls_expires_at ?? null,
            tls_issuer: answer.tls_issuer ?? null,
            timings: answer.timings,
            ...(answer.answers === undefined ? {} : { answers: answer.answers }),
            ...(answer.assertion === undefined ? {} : { assertion: answer.assertion })
          }
        }
        msg.respond(JSON.stringify(reply))
      })
      .catch((err: unknown) => {
        logger.error({ err: { message: (err as Error).message } }, 'probe request failed')
      })
      .finally(() => {
        clearTimeout(overdue)
        inFlight.delete(running)
      })
    inFlight.add(running)
  }

  const handler = (err: Error | null, msg: ServiceMsg): void => {
    if (err !== null) {
      logger.error({ err: { message: err.message } }, 'probe endpoint failed')
      return
    }
    handle(msg)
  }
  // NATS refusing a subscription (another location's user, or permissions changed while running)
  // leaves this agent deaf to some of what it must answer: it stops rather than serve half.
  const denial: { reason: string | null } = { reason: null }
  let refuse!: (reason: string) => void
  const failed = new Promise<string>((resolve) => {
    refuse = resolve
  })
  void (async () => {
    for await (const status of conn.status()) {
      const denied = status.permissionContext
      if (denied?.operation === 'subscription') {
        denial.reason ??= `NATS refused the agent's subscription to ${denied.subject}: NATS_URL's user may not serve location ${config.location}`
        refuse(denial.reason)
      } else if (status.type === Events.Disconnect) logger.warn('NATS connection lost; reconnecting')
      else if (status.type === Events.Reconnect) logger.info('NATS connection back')
    }
  })()
  let service: Service
  let id = ''
  try {
    service = await conn.services.add({
      name: agentService(config.location),
      version,
      description: `Site Status API location agent for ${config.location}`,
      metadata: { location: config.location, instance: config.instanceId },
      queue: probeQueue(config.location)
    })
    id = service.info().id
    // The location's queue group, and this agent's own subject: the central sends there once it
    // knows this agent, and sends a probe again to another when this one vanishes.
    service.addEndpoint('probe', { subject: probeSubject(config.location), handler })
    service.addEndpoint('direct', { subject: agentSubject(config.location, id), handler })
    // The subscriptions leave in the client's buffer: once NATS has answered a ping after them, it
    // has them (or refused them, which it says before the ping's answer), and "agent serving" is
    // true for the first request that follows.
    await conn.flush()
    await afterIo()
    if (denial.reason !== null) throw Object.assign(new Error(denial.reason), { code: 'PERMISSIONS_VIOLATION' })
  } catch (err) {
    await conn.close()
    await location.close()
    throw err
  }
  logger.info({ location: config.location, id, version }, 'agent serving')

  return {
    id,
    counts: () => ({ probed, refused }),
    failed,
    stop: () => {
      stopping ??= (async () => {
        // The service stays up (answering PINGs: the central must not take it for gone) until
        // what is in flight is answered; new requests are refused meanwhile.
        await Promise.all([...inFlight])
        await service.stop()
        // The answers just written reach NATS unless it has gone quiet (half open): never wait on it long.
        await endConnection(conn, { drain: true })
        await location.close()
      })()
      return stopping
    }
  }
}
