import { Piscina } from 'piscina'
import type { Logger } from 'pino'
import type { ConnectToRule, LocationConfig } from '../../config/index.js'
import type { ActorSettings, ProbeTask } from '../../workers/location-actor.js'
import type { ProbeErrorCode, ProbeResult } from '../../workers/http-probe.js'
import { dnsTimeoutFor, type DnsSettings } from '../net/resolver.js'
import type { TargetPolicy } from '../rules/target-policy.js'
import { ACTOR_NICENESS } from '../../workers/thread-priority.js'
import { SCHEDULED_LANE } from './fair-starts.js'

/**
 * The location actor as the build lays it out beside this module. Worker threads load compiled
 * JavaScript; whoever runs this module from elsewhere (tests, from the TypeScript sources) names
 * the compiled actor with `actorFile`.
 */
export const ACTOR_FILE = new URL('../../workers/location-actor.js', import.meta.url).href

/** Extra time a location gets beyond its probe deadline before it counts as not answering. */
export const ANSWER_MARGIN_MS = 2000
/** The error of a location whose probe was still running when the service's stop grace ran out. */
export const STOPPING_ERROR = 'location: service stopping'

/**
 * How long a light consumers' actor may stay without a probe before its thread stops (the next
 * light check starts it again): a service that never serves on-demand checks, or not for a while,
 * does not keep three threads' memory for them.
 */
export const LIGHT_ACTOR_IDLE_MS = 5 * 60_000

/**
 * The longest the light consumers' actors are given to start, during which light checks go to the
 * on-demand actors; after it they go to any light actor whose thread is there, whether it answered
 * or not (a thread wedged while starting is then found and replaced as any other). Far longer than
 * a start takes, even with both cores busy.
 */
export const LIGHT_START_LIMIT_MS = 30_000

/** Why a location gave no answer of its own: its actor failed, missed the deadline, or the service is stopping. */
export type LocationFailureCode = 'location_failed' | 'location_no_answer' | 'location_stopping'

/** The code of a location's error: the probe's, or the pool's when the location did not answer. */
export type LocationErrorCode = ProbeErrorCode | LocationFailureCode

/** One location's result as the check endpoint reports it (and the store keeps it). */
export interface LocationResult extends Omit<ProbeResult, 'code'> {
  location: string
}

/**
 * What a location answered: its result and the code of its error, which the endpoint does not
 * show. A prober that brings no codes (test doubles) leaves `code` out: nothing is then refused.
 */
export interface LocationAnswer extends LocationResult {
  code?: LocationErrorCode | null
}

export interface LocationPoolOptions {
  locations: readonly LocationConfig[]
  connectTo: readonly ConnectToRule[]
  /** The target policy every actor judges its dials by. */
  policy: TargetPolicy
  /** The actors' resolvers; default: the system's, with the budget {@link dnsTimeoutFor} the deadline. */
  dns?: DnsSettings
  timeoutMs: number
  userAgent: string
  logger: Logger
  /**
   * Probes one actor thread runs at once. They are I/O bound and each is bounded by its deadline,
   * so this follows the instance's check capacity (every check asks every actor once), which the
   * supervisor's admission enforces; Piscina's queue then never grows past it.
   */
  concurrency?: number
  /** The actor module; default {@link ACTOR_FILE}. Fault tests give one that never answers. */
  actorFile?: string
  /**
   * The Node options of the actors' threads; default this process's own. A caller whose own
   * options load what compiled actors do not need (tests' TypeScript loader) gives `[]`.
   */
  execArgv?: string[]
  /** A certificate authority (PEM) the actors trust besides the system's (see `ActorSettings.extraCa`). */
  extraCa?: string
  /**
   * A second actor per location for the scheduler's probes (the {@link SCHEDULED_LANE}), running
   * {@link ACTOR_NICENESS} steps below the thread that started it: background work yields the CPU to
   * the API (docs/decisions.md, Probing). Without them (the default) every probe goes to the one
   * actor per location.
   */
  scheduledActors?: boolean
  /**
   * A third actor per location for the checks of light consumers (keys with few checks in flight,
   * {@link LocationPools.probeAll}'s `light`), at the API's priority: their probes never wait in the
   * event loop of an actor busy with another consumer's thousands (docs/decisions.md, Probing).
   * Their threads start with the first such check and stop after `lightIdleMs` with none; while they
   * start, light checks go to the on-demand actors.
   */
  lightActors?: boolean
  /** How long a light consumers' actor stays without a probe before its thread stops; default {@link LIGHT_ACTOR_IDLE_MS}. */
  lightIdleMs?: number
}

function notAnswered(location: string, code: LocationFailureCode, error: string): LocationAnswer {
  return {
    location,
    status: 'error',
    http_code: 0,
    response_ms: 0,
    error,
    code,
    final_url: null,
    tls_expires_at: null,
    tls_issuer: null,
    timings: { dns: 0, connect: 0, tls: 0, first_byte: 0, total: 0 }
  }
}

/**
 * The location actors: one single-thread Piscina pool per location, so that a crash or a hang
 * costs only that location's answer. Each thread owns its location's undici dispatcher. With
 * `scheduledActors`, each location has a second one for the scheduler's probes, at a lower priority.
 */
export class LocationPools {
  /** The actors of on-demand checks (and of every check without `scheduledActors`), one per location. */
  readonly pools: Piscina[]
  /** The scheduler's actors, one per location; the same as {@link pools} without `scheduledActors`. */
  readonly scheduledPools: Piscina[]
  /** The light consumers' actors, one per location; the same as {@link pools} without `lightActors`. */
  readonly lightPools: Piscina[]
  readonly #labels: string[]
  readonly #timeoutMs: number
  readonly #logger: Logger
  /** Actors whose liveness is being checked now. */
  readonly #checking = new Map<Piscina, Promise<void>>()
  /** Probes waiting for an answer: each can be cut short when the service stops. */
  readonly #cuts = new Set<() => void>()
  #cutAll = false
  #closed = false
  /** The light consumers' actors starting again, while they do. */
  #lightStarting: Promise<void> | null = null

  constructor(opts: LocationPoolOptions) {
    this.#labels = opts.locations.map((l) => l.label)
    this.#timeoutMs = opts.timeoutMs
    this.#logger = opts.logger
    const policy = opts.policy
    const dns = opts.dns ?? { servers: [], timeoutMs: dnsTimeoutFor(opts.timeoutMs) }
    const start = (location: LocationConfig, niceness: number, idleMs?: number): Piscina => {
      const settings: ActorSettings = {
        proxy: location.proxy,
        resolveAtProxy: location.resolve === 'proxy',
        connectTo: opts.connectTo,
        policy,
        dns,
        timeoutMs: opts.timeoutMs,
        userAgent: opts.userAgent,
        niceness,
        ...(opts.extraCa === undefined ? {} : { extraCa: opts.extraCa })
      }
      const pool = new Piscina({
        filename: opts.actorFile ?? ACTOR_FILE,
        ...(opts.execArgv === undefined ? {} : { execArgv: opts.execArgv }),
        workerData: settings,
        minThreads: idleMs === undefined ? 1 : 0,
        maxThreads: 1,
        concurrentTasksPerWorker: opts.concurrency ?? 4000,
        // The dispatcher lives with the thread: never let an idle actor be reaped, unless it may stop.
        idleTimeout: idleMs ?? Number.MAX_SAFE_INTEGER,
        // Actors wait on sockets, not on the pool: a blocking Atomics.wait would freeze their event loop.
        atomics: 'disabled',
        // Probes allocate many small, short-lived objects: a 16 MB young generation makes scavenges
        // rarer than the default 8 MB, and a larger one costs more memory than the 10,000-site
        // budget allows (docs/decisions.md, Probing). The old-generation cap turns a runaway
        // actor into a replaced worker.
        resourceLimits: { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 256 },
        // Nobody reads Piscina's per-task run/wait histograms; recording them costs on every probe.
        recordTiming: false
      })
      pool.on('error', (err: unknown) => {
        opts.logger.error({ err, location: location.label }, 'location actor failed; it is being replaced')
      })
      return pool
    }
    this.pools = opts.locations.map((location) => start(location, 0))
    this.scheduledPools = opts.scheduledActors === true ? opts.locations.map((location) => start(location, ACTOR_NICENESS)) : this.pools
    this.lightPools =
      opts.lightActors === true ? opts.locations.map((location) => start(location, 0, opts.lightIdleMs ?? LIGHT_ACTOR_IDLE_MS)) : this.pools
  }

  /** Every actor, each once. */
  get #all(): Piscina[] {
    return [...new Set([...this.pools, ...this.scheduledPools, ...this.lightPools])]
  }

  /**
   * Resolves once every actor thread has started and answered; start-up waits for it. The light
   * consumers' actors start with their first check instead (until then light checks go to the
   * on-demand actors), unless `light`: a caller that needs them to take light checks from the first.
   */
  async ready({ light = false }: { light?: boolean } = {}): Promise<void> {
    const starting = new Set([...this.pools, ...this.scheduledPools, ...(light ? this.lightPools : [])])
    await Promise.all([...starting].map((pool) => pool.run({ ping: true } satisfies ProbeTask)))
  }

  get labels(): readonly string[] {
    return this.#labels
  }

  /**
   * Asks every location at once. A location whose actor crashes, or that has not answered by the
   * probe deadline plus a margin, is reported as `error` (it did not answer); the others are not
   * held up. One timer and one stop hook serve the whole check, whatever the number of locations.
   * `lane` is whose check it is (lib/probing/fair-starts.ts): each actor starts a busy lane's
   * probes in turn with the others'. `light`: the check of a consumer with few checks in flight,
   * taken by the light consumers' actors (`lightActors`).
   */
  probeAll(domain: string, lane?: string, light = false): Promise<LocationAnswer[]> {
    const pools = lane === SCHEDULED_LANE ? this.scheduledPools : light ? this.lightPools : this.pools
    // Light consumers' actors whose threads have stopped start again, and until each has answered,
    // light checks go to the on-demand actors: a light consumer checking every few minutes would
    // otherwise wait for three threads to start at every check.
    if (
      pools === this.lightPools &&
      pools !== this.pools &&
      (this.#lightStarting !== null || pools.some((pool) => pool.threads.length === 0))
    ) {
      void this.#startLightActors()
      return this.#probeAll(domain, lane, this.pools)
    }
    return this.#probeAll(domain, lane, pools)
  }

  /**
   * Starts the light consumers' actors that have stopped; resolves once each has answered or failed,
   * or after {@link LIGHT_START_LIMIT_MS} at the latest.
   */
  #startLightActors(): Promise<void> {
    if (this.#lightStarting) return this.#lightStarting
    let timer: NodeJS.Timeout | undefined
    const started = Promise.all(this.lightPools.map((pool) => pool.run({ ping: true } satisfies ProbeTask).catch(() => {})))
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, LIGHT_START_LIMIT_MS)
    })
    this.#lightStarting = Promise.race([started, late]).then(() => {
      clearTimeout(timer)
      this.#lightStarting = null
    })
    return this.#lightStarting
  }

  #probeAll(domain: string, lane: string | undefined, pools: Piscina[]): Promise<LocationAnswer[]> {
    const labels = this.#labels
    if (this.#cutAll) return Promise.resolve(labels.map((label) => notAnswered(label, 'location_stopping', STOPPING_ERROR)))
    return new Promise((resolve) => {
      const results = new Array<LocationAnswer | undefined>(labels.length)
      let left = labels.length
      const answer = (i: number, result: LocationAnswer): void => {
        if (results[i] !== undefined) return
        results[i] = result
        if (--left > 0) return
        clearTimeout(timer)
        this.#cuts.delete(cut)
        resolve(results as LocationAnswer[])
      }
      // Whoever has not answered by now gets `error`: the rest of the answer does not wait.
      const giveUp = (code: LocationFailureCode, error: string, late: boolean): void => {
        for (let i = 0; i < labels.length; i++) {
          if (results[i] !== undefined) continue
          answer(i, notAnswered(labels[i] as string, code, error))
          if (late) void this.#checkAlive(pools[i] as Piscina, labels[i] as string)
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
      for (let i = 0; i < labels.length; i++) {
        const location = labels[i] as string
        // No abort signal: aborting a running Piscina task terminates the whole thread and every probe on it.
        ;(pools[i] as Piscina).run({ domain, lane } satisfies ProbeTask).then(
          (result: ProbeResult) => {
            answer(i, { location, ...result })
          },
          () => {
            answer(i, notAnswered(location, 'location_failed', 'location: worker failed'))
          }
        )
      }
    })
  }

  /**
   * A probe always ends by its own deadline, so a location that missed the answer deadline is
   * either stuck on that one task or its thread is wedged (its event loop blocked), in which case
   * every later probe there would be lost too. The actor gets as long again to answer a ping or
   * finish any task; if it does neither, its thread is terminated and Piscina starts a new one.
   */
  #checkAlive(pool: Piscina, location: string): Promise<void> {
    if (this.#checking.has(pool) || this.#closed || this.#cutAll) return Promise.resolve()
    const checking = this.#livenessCheck(pool, location).finally(() => this.#checking.delete(pool))
    this.#checking.set(pool, checking)
    return checking
  }

  async #livenessCheck(pool: Piscina, location: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    try {
      const thread = pool.threads[0]
      const completed = pool.completed
      const alive = await Promise.race([
        // A rejection means the thread died, and Piscina replaces it anyway.
        pool.run({ ping: true } satisfies ProbeTask).then(
          () => true,
          () => true
        ),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => {
            resolve(false)
          }, this.#timeoutMs + ANSWER_MARGIN_MS)
        })
      ])
      if (alive || pool.completed !== completed || this.#closed || this.#cutAll) return
      if (thread === undefined || pool.threads[0] !== thread) return
      this.#logger.error({ location }, 'location actor stopped answering; replacing its thread')
      await thread.terminate()
    } finally {
      clearTimeout(timer)
    }
  }

  /** Resolves once the liveness checks under way now have ended (tests wait on it). */
  async livenessChecked(): Promise<void> {
    await Promise.all(this.#checking.values())
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
    this.#closed = true
    this.#cutAll = true
    for (const cut of [...this.#cuts]) cut()
    await Promise.all(this.#all.map((p) => p.destroy()))
  }
}
