import type { Logger } from 'pino'
import type { ConnectToRule, LocationConfig } from '../../../config/index.js'
import { dnsTimeoutFor, type DnsSettings } from '../../net/resolver.js'
import type { CheckSpec } from '../../rules/check-spec.js'
import type { LocationExpectations } from '../../rules/expectations.js'
import type { TargetPolicy } from '../../rules/target-policy.js'
import type { Piscina } from 'piscina'
import { AgentLocation, type AgentLink } from './agent.js'
import { classesOfService, classOf, type ServiceClass } from './classes.js'
import { LocalLocation } from './local.js'
import {
  ANSWER_MARGIN_MS,
  notAnswered,
  STOPPING_ERROR,
  CANCELLED_ERROR,
  type Location,
  type LocationAnswer,
  type LocationFailureCode,
  type LocationHealth
} from './location.js'

export { ANSWER_MARGIN_MS, STOPPING_ERROR } from './location.js'
export type { LocationAnswer, LocationErrorCode, LocationFailureCode, LocationHealth, LocationResult } from './location.js'
export type { ServiceClass } from './classes.js'

export interface LocationsOptions {
  locations: readonly LocationConfig[]
  connectTo: readonly ConnectToRule[]
  /** The target policy every local actor judges its dials by (agents judge by their own). */
  policy: TargetPolicy
  /** The actors' resolvers; default: the system's, with the budget {@link dnsTimeoutFor} the deadline. */
  dns?: DnsSettings
  timeoutMs: number
  userAgent: string
  logger: Logger
  /**
   * Probes one actor thread runs at once. They are I/O bound and each is bounded by its deadline,
   * so this follows the instance's check capacity (every check asks every location once), which
   * the supervisor's admission enforces; Piscina's queue then never grows past it.
   */
  concurrency?: number
  /** The actor module; default local.ts `ACTOR_FILE`. Fault tests give one that never answers. */
  actorFile?: string
  /** The Node options of the actors' threads; default this process's own (tests give `[]`). */
  execArgv?: string[]
  /** A certificate authority (PEM) the actors trust besides the system's (see `ActorSettings.extraCa`). */
  extraCa?: string
  /** Actors of their own for the scheduler's probes (classes.ts); without them the on-demand actors run them. */
  scheduledActors?: boolean
  /** Actors of their own for light consumers' checks (classes.ts); without them the on-demand actors run them. */
  lightActors?: boolean
  /** How long a light consumers' actor stays without a probe before its thread stops. */
  lightIdleMs?: number
  /** The NATS link to the agents; required when a location names an agent. */
  agents?: AgentLink
}

/**
 * Every location of the service, local or served by agents: asked all at once for each check, with
 * one timer and one stop hook for the whole check whatever their number.
 */
export class Locations {
  readonly all: readonly Location[]
  readonly #labels: string[]
  readonly #timeoutMs: number
  /** Probes waiting for an answer: each can be cut short when the service stops. */
  readonly #cuts = new Set<() => void>()
  #cutAll = false
  readonly #agents: AgentLink | undefined

  constructor(opts: LocationsOptions) {
    this.#labels = opts.locations.map((l) => l.label)
    this.#timeoutMs = opts.timeoutMs
    this.#agents = opts.agents
    const classes = classesOfService({ scheduled: opts.scheduledActors, light: opts.lightActors, lightIdleMs: opts.lightIdleMs })
    const dns = opts.dns ?? { servers: [], timeoutMs: dnsTimeoutFor(opts.timeoutMs) }
    this.all = opts.locations.map((location): Location => {
      if (location.agent !== undefined) {
        if (opts.agents === undefined) throw new Error(`location ${location.label} names an agent, but there is no NATS link`)
        return new AgentLocation({
          label: location.label,
          agent: location.agent,
          link: opts.agents,
          userAgent: opts.userAgent,
          timeoutMs: opts.timeoutMs
        })
      }
      return new LocalLocation({
        label: location.label,
        settings: {
          proxy: location.proxy,
          resolveAtProxy: location.resolve === 'proxy',
          connectTo: opts.connectTo,
          policy: opts.policy,
          dns,
          timeoutMs: opts.timeoutMs,
          userAgent: opts.userAgent,
          ...(opts.extraCa === undefined ? {} : { extraCa: opts.extraCa })
        },
        classes,
        logger: opts.logger,
        concurrency: opts.concurrency ?? 4000,
        actorFile: opts.actorFile,
        execArgv: opts.execArgv
      })
    })
  }

  get labels(): readonly string[] {
    return this.#labels
  }

  /** The local locations' actors of one class, in location order (tests and benchmarks look at them). */
  actors(cls: ServiceClass): Piscina[] {
    return this.all.filter((l): l is LocalLocation => l instanceof LocalLocation).map((l) => l.actors[cls])
  }

  /**
   * Resolves once every location can take probes: every actor thread that starts with the service
   * has answered, and the NATS link (if any) has connected or given up waiting. `light`: the light
   * consumers' actors too (they otherwise start with their first check).
   */
  async ready({ light = false }: { light?: boolean } = {}): Promise<void> {
    await Promise.all([...this.all.map((l) => l.ready({ light })), this.#agents?.ready()])
  }

  /** Agents' answers that came after their request had given up (dropped). */
  lateAnswers(): number {
    return this.#agents?.late ?? 0
  }

  /** What each location is made of, for /healthz and /metrics. */
  health(): LocationHealth[] {
    return this.all.map((l) => l.health())
  }

  /**
   * Asks every location at once. A local location whose actor crashes, or that has not answered by
   * the probe deadline plus a margin, is reported as `error` (it did not answer); an agent location
   * ends its own request a hop's margin later. The others are not held up. `lane` is whose check it
   * is (workers/fair-starts.ts); `light`: the check of a consumer with few checks in flight;
   * `signal`: aborted when nobody waits for the check any longer, which ends it at once; `expect`:
   * what the check expects of each location's final answer; `check`: what each location does.
   */
  probeAll(
    domain: string,
    lane?: string,
    light = false,
    signal?: AbortSignal,
    expect?: LocationExpectations,
    check?: CheckSpec
  ): Promise<LocationAnswer[]> {
    const labels = this.#labels
    const locations = this.all
    if (this.#cutAll)
      return Promise.resolve(labels.map((label) => ({ location: label, ...notAnswered('location_stopping', STOPPING_ERROR) })))
    if (signal?.aborted)
      return Promise.resolve(labels.map((label) => ({ location: label, ...notAnswered('location_cancelled', CANCELLED_ERROR) })))
    const cls = classOf(lane, light)
    return new Promise((resolve) => {
      const results = new Array<LocationAnswer | undefined>(labels.length)
      let left = labels.length
      const answer = (i: number, result: Omit<LocationAnswer, 'location'>): void => {
        if (results[i] !== undefined) return
        results[i] = { location: labels[i] as string, ...result }
        if (--left > 0) return
        clearTimeout(timer)
        this.#cuts.delete(cut)
        signal?.removeEventListener('abort', cancelled)
        resolve(results as LocationAnswer[])
      }
      // Whoever has not answered by now gets `error`: the rest of the answer does not wait.
      const giveUp = (code: LocationFailureCode, error: string, late: boolean): void => {
        for (let i = 0; i < labels.length; i++) {
          const location = locations[i] as Location
          if (results[i] !== undefined || (late && location.ownDeadline)) continue
          answer(i, notAnswered(code, error))
          if (late && !this.#cutAll) location.missed(cls)
        }
      }
      const limitMs = this.#timeoutMs + ANSWER_MARGIN_MS
      const timer = setTimeout(() => {
        giveUp('location_no_answer', `location: no answer in ${limitMs} ms`, true)
      }, limitMs)
      const cut = (): void => {
        giveUp('location_stopping', STOPPING_ERROR, false)
      }
      this.#cuts.add(cut)
      // Cancelled: every location is told (the request carries the signal) and nobody is waited for.
      const cancelled = (): void => {
        giveUp('location_cancelled', CANCELLED_ERROR, false)
      }
      signal?.addEventListener('abort', cancelled, { once: true })
      const request = {
        domain,
        lane,
        cls,
        ...(signal === undefined ? {} : { signal }),
        ...(expect === undefined ? {} : { expect }),
        ...(check === undefined ? {} : { check })
      }
      for (let i = 0; i < labels.length; i++) {
        void (locations[i] as Location).probe(request).then((result) => {
          answer(i, result)
        })
      }
    })
  }

  /** Resolves once the liveness checks under way now have ended (tests wait on it). */
  async livenessChecked(): Promise<void> {
    await Promise.all(this.all.filter((l): l is LocalLocation => l instanceof LocalLocation).map((l) => l.livenessChecked()))
  }

  /**
   * The service is stopping: probes still unanswered after `graceMs` (and any started later) are
   * reported as not answered, so that in-flight checks answer and the stop ends in bounded time.
   */
  stopping(graceMs: number): void {
    const timer = setTimeout(() => {
      this.#cutAll = true
      for (const cut of [...this.#cuts]) cut()
    }, graceMs)
    timer.unref()
  }

  async close(): Promise<void> {
    this.#cutAll = true
    for (const cut of [...this.#cuts]) cut()
    await Promise.all(this.all.map((l) => l.close()))
    await this.#agents?.close()
  }
}
