import { Events, type NatsConnection, type Service, type ServiceMsg } from 'nats'
import type { Logger } from 'pino'
import { AGENT_SERVICE, probeQueue, probeSubject, readProbeRequest, requestExpectations } from '../net/agent-protocol.js'
import { connectNats } from '../net/nats.js'
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

  const handle = (msg: ServiceMsg): void => {
    const request = readProbeRequest(msg.data)
    if (request === null) {
      refused++
      logger.warn({ location: config.location, bytes: msg.data.byteLength }, 'refused an invalid probe request')
      msg.respondError(400, 'invalid probe request')
      return
    }
    if (inFlight.size >= MAX_AGENT_IN_FLIGHT) {
      refused++
      msg.respondError(503, 'agent at capacity')
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
        expect: requestExpectations(request)
      })
      .then(({ code, ...rest }) => {
        probed++
        msg.respond(JSON.stringify({ result: { ...rest, code: code ?? null } }))
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

  let service: Service
  let id = ''
  try {
    service = await conn.services.add({
      name: AGENT_SERVICE,
      version,
      description: `Site Status API location agent for ${config.location}`,
      metadata: { location: config.location, instance: config.instanceId },
      queue: probeQueue(config.location)
    })
    id = service.info().id
    service.addEndpoint('probe', {
      subject: probeSubject(config.location),
      queue: probeQueue(config.location),
      metadata: { location: config.location },
      handler: (err, msg) => {
        if (err !== null) {
          logger.error({ err: { message: err.message } }, 'probe endpoint failed')
          return
        }
        handle(msg)
      }
    })
    // The subscriptions leave in the client's buffer: once NATS has answered a ping after them,
    // it has them, and "agent serving" is true for the first request that follows.
    await conn.flush()
  } catch (err) {
    await conn.close()
    await location.close()
    throw err
  }
  void (async () => {
    for await (const status of conn.status()) {
      if (status.type === Events.Disconnect) logger.warn('NATS connection lost; reconnecting')
      else if (status.type === Events.Reconnect) logger.info('NATS connection back')
    }
  })()
  logger.info({ location: config.location, id, version }, 'agent serving')

  let stopping: Promise<void> | undefined
  return {
    id,
    counts: () => ({ probed, refused }),
    stop: () => {
      stopping ??= (async () => {
        await service.stop()
        await Promise.all([...inFlight])
        await conn.drain().catch(() => {})
        await location.close()
      })()
      return stopping
    }
  }
}
