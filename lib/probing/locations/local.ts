import { Piscina } from 'piscina'
import type { Logger } from 'pino'
import type { ActorSettings, ProbeTask } from '../../../workers/location-actor.js'
import type { ProbeResult } from '../../../workers/http-probe.js'
import { SERVICE_CLASSES, type ClassOfService, type ServiceClass } from './classes.js'
import { ANSWER_MARGIN_MS, notAnswered, type Location, type LocationAnswer, type LocationHealth, type ProbeRequest } from './location.js'

/**
 * The location actor as the build lays it out. Worker threads load compiled JavaScript; whoever
 * runs this module from elsewhere (tests, from the TypeScript sources) names the compiled actor
 * with `actorFile`.
 */
export const ACTOR_FILE = new URL('../../../workers/location-actor.js', import.meta.url).href

/**
 * The longest the light consumers' actor is given to start, during which light checks go to the
 * on-demand actor; after it they go to the light actor whether it answered or not (a thread wedged
 * while starting is then found and replaced as any other). Far longer than a start takes, even with
 * both cores busy.
 */
export const LIGHT_START_LIMIT_MS = 30_000

export interface LocalActorsOptions {
  label: string
  /** What every actor thread of this location is given (its proxy, policy, resolver, deadline). */
  settings: Omit<ActorSettings, 'niceness'>
  classes: Readonly<Record<ServiceClass, ClassOfService>>
  logger: Logger
  /** Probes one actor thread runs at once: the instance's check capacity, which admission enforces. */
  concurrency: number
  /** The actor module; default {@link ACTOR_FILE}. Fault tests give one that never answers. */
  actorFile?: string
  /** The actors' threads' Node options; default this process's own (tests give `[]`). */
  execArgv?: string[]
}

/**
 * A location whose probes run on this machine, directly or through its regional proxy: a
 * single-thread Piscina pool per class of service that has actors of its own, so that a crash or a
 * hang costs only that location's answer. Each thread owns its location's undici dispatcher.
 */
export class LocalLocation implements Location {
  readonly label: string
  readonly ownDeadline = false
  /** The actor running each class's probes (the on-demand one for a class without its own). */
  readonly actors: Readonly<Record<ServiceClass, Piscina>>
  readonly #classes: Readonly<Record<ServiceClass, ClassOfService>>
  readonly #proxied: boolean
  readonly #timeoutMs: number
  readonly #logger: Logger
  /** Actors whose liveness is being checked now. */
  readonly #checking = new Map<Piscina, Promise<void>>()
  /** The light consumers' actor starting again, while it does. */
  #lightStarting: Promise<void> | null = null
  #closed = false
  /** The id of the last cancellable probe handed to an actor. */
  #lastId = 0

  constructor(opts: LocalActorsOptions) {
    this.label = opts.label
    this.#classes = opts.classes
    this.#proxied = opts.settings.proxy !== null
    this.#timeoutMs = opts.settings.timeoutMs
    this.#logger = opts.logger
    const start = (spec: ClassOfService): Piscina => {
      const pool = new Piscina({
        filename: opts.actorFile ?? ACTOR_FILE,
        ...(opts.execArgv === undefined ? {} : { execArgv: opts.execArgv }),
        workerData: { ...opts.settings, niceness: spec.niceness } satisfies ActorSettings,
        minThreads: spec.idleMs === null ? 1 : 0,
        maxThreads: 1,
        concurrentTasksPerWorker: opts.concurrency,
        // The dispatcher lives with the thread: never let an idle actor be reaped, unless it may stop.
        idleTimeout: spec.idleMs ?? Number.MAX_SAFE_INTEGER,
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
        opts.logger.error({ err, location: opts.label }, 'location actor failed; it is being replaced')
      })
      return pool
    }
    const demand = start(opts.classes.demand)
    const own = (cls: ServiceClass): Piscina => (opts.classes[cls].own ? start(opts.classes[cls]) : demand)
    this.actors = Object.freeze({ demand, scheduled: own('scheduled'), light: own('light') })
  }

  /** Every actor, each once. */
  get #all(): Piscina[] {
    return [...new Set(Object.values(this.actors))]
  }

  async ready({ light = false }: { light?: boolean } = {}): Promise<void> {
    const starting = new Set(SERVICE_CLASSES.filter((cls) => this.#classes[cls].startsWithService || light).map((cls) => this.actors[cls]))
    await Promise.all([...starting].map((pool) => pool.run({ ping: true } satisfies ProbeTask)))
  }

  probe({ domain, lane, cls, userAgent, expect, check, signal }: ProbeRequest): Promise<Omit<LocationAnswer, 'location'>> {
    const actor = this.#actorFor(cls)
    // No abort signal for Piscina: aborting a running task terminates the whole thread and every
    // probe on it. A probe that may be cancelled carries an id, and a cancel task names it to the
    // same actor; the others carry nothing more.
    const id = signal === undefined ? undefined : ++this.#lastId
    const answered = actor
      .run({
        domain,
        lane,
        ...(userAgent === undefined ? {} : { userAgent }),
        ...(id === undefined ? {} : { id }),
        ...(expect === undefined ? {} : { expect }),
        ...(check === undefined ? {} : { check })
      } satisfies ProbeTask)
      .then(
        (result: ProbeResult) => result,
        () => notAnswered('location_failed', 'location: worker failed')
      )
    if (signal === undefined || id === undefined) return answered
    const cancel = (): void => {
      actor.run({ cancel: id } satisfies ProbeTask).catch(() => {})
    }
    signal.addEventListener('abort', cancel, { once: true })
    return answered.finally(() => {
      signal.removeEventListener('abort', cancel)
    })
  }

  /**
   * The actor that runs a class's probe now. An actor that starts with its first probe (light
   * consumers') is started, and until it has answered, its probes go to the on-demand actor: a light
   * consumer checking every few minutes would otherwise wait for a thread to start at every check.
   */
  #actorFor(cls: ServiceClass): Piscina {
    const actor = this.actors[cls]
    if (this.#classes[cls].startsWithService || actor === this.actors.demand) return actor
    if (this.#lightStarting !== null || actor.threads.length === 0) {
      void this.#startLight(actor)
      return this.actors.demand
    }
    return actor
  }

  /** Starts a stopped actor; resolves once it has answered or failed, or after {@link LIGHT_START_LIMIT_MS} at the latest. */
  #startLight(actor: Piscina): Promise<void> {
    if (this.#lightStarting) return this.#lightStarting
    let timer: NodeJS.Timeout | undefined
    const started = actor.run({ ping: true } satisfies ProbeTask).catch(() => {})
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, LIGHT_START_LIMIT_MS)
    })
    this.#lightStarting = Promise.race([started, late]).then(() => {
      clearTimeout(timer)
      this.#lightStarting = null
    })
    return this.#lightStarting
  }

  /**
   * A probe always ends by its own deadline, so a location that missed the answer deadline is
   * either stuck on that one task or its thread is wedged (its event loop blocked), in which case
   * every later probe there would be lost too. The actor gets as long again to answer a ping or
   * finish any task; if it does neither, its thread is terminated and Piscina starts a new one.
   */
  missed(cls: ServiceClass): void {
    const pool = this.#actorFor(cls)
    if (this.#checking.has(pool) || this.#closed) return
    const checking = this.#livenessCheck(pool).finally(() => this.#checking.delete(pool))
    this.#checking.set(pool, checking)
  }

  async #livenessCheck(pool: Piscina): Promise<void> {
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
      if (alive || pool.completed !== completed || this.#closed) return
      if (thread === undefined || pool.threads[0] !== thread) return
      this.#logger.error({ location: this.label }, 'location actor stopped answering; replacing its thread')
      await thread.terminate()
    } finally {
      clearTimeout(timer)
    }
  }

  /** Resolves once the liveness checks under way now have ended (tests wait on it). */
  async livenessChecked(): Promise<void> {
    await Promise.all(this.#checking.values())
  }

  health(): LocationHealth {
    return { label: this.label, kind: this.#proxied ? 'proxy' : 'local' }
  }

  async close(): Promise<void> {
    this.#closed = true
    await Promise.all(this.#all.map((p) => p.destroy()))
  }
}
