import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from 'pino'
import { listChannels } from '../store/alert-config.js'
import {
  claimChannelHeads,
  countPending,
  pruneMessages,
  releaseEarlierClaims,
  releaseMessageClaim,
  takeDueRefreshes,
  type MessageRow
} from '../store/alert-messages.js'
import { pruneAlerts } from '../store/alert-state.js'
import type { Db } from '../store/db.js'
import type { Post } from '../webhooks/post.js'
import type { SecretBox } from '../webhooks/secret-box.js'
import { composeMessages } from './compose.js'
import { deliverMessage, enqueueRefresh, type DeliverDeps } from './deliver.js'
import { evaluateDueAlerts } from './evaluate.js'
import { takeInEvents } from './intake.js'
import type { SmtpSend } from './smtp.js'

const INTERVAL_MS = 1000
/** Messages in flight at once per instance (each channel sends one at a time). */
const CONCURRENCY = 32
/** A claim outlives the longest attempt (an HA pair, a PagerDuty group, SMTP) by a wide margin. */
const LEASE_MS = 120_000
/** Alertmanager hears of its firing alerts again this often. */
export const REFRESH_MS = 60_000
const RETENTION_MS = 30 * 86_400_000
const PRUNE_EVERY_MS = 3_600_000

/** Attempts by outcome since start (for /metrics). */
export interface AlertOutcomes {
  delivered: number
  retry: number
  failed: number
}

/** A channel as health and metrics tell it. */
export interface ChannelHealth {
  id: number
  name: string
  kind: string
  failing: boolean
  failing_since: string | null
  last_error: string | null
  pending: number
}

export interface AlertDispatcherOptions {
  db: Db
  box: SecretBox
  post: Post
  smtp: SmtpSend
  logger: Logger
  publicUrl: string
  now?: () => Date
  random?: () => number
  intervalMs?: number
  leaseMs?: number
  /** INSTANCE_ID: leases are named after it, and a restart frees its earlier life's. */
  instance?: string
}

/**
 * Runs alerting off the request path. Each cycle turns new events into alerts, evaluates the
 * alerts due, composes waiting notifications into messages, queues Alertmanager re-sends, then
 * claims each channel's next message (a lease in the database: one instance sends each) and sends
 * them. It runs every second and at once on {@link wake}; {@link tick} runs one cycle and waits
 * for its sends (tests drive it so with their own clock).
 */
export class AlertDispatcher {
  readonly #deps: DeliverDeps
  readonly #o: { intervalMs: number; leaseMs: number; instance: string }
  readonly #owner: string
  readonly #inFlight = new Set<Promise<void>>()
  readonly #stop = new AbortController()
  #running: Promise<Array<Promise<void>>> | null = null
  #again = false
  #timer: NodeJS.Timeout | undefined
  #stopping = false
  #started = false
  #lastPrune = 0
  #health: ChannelHealth[] = []
  readonly #outcomes: AlertOutcomes = { delivered: 0, retry: 0, failed: 0 }

  constructor(opts: AlertDispatcherOptions) {
    const now = opts.now ?? (() => new Date())
    this.#deps = {
      db: opts.db,
      box: opts.box,
      post: opts.post,
      smtp: opts.smtp,
      logger: opts.logger,
      now,
      random: opts.random ?? Math.random,
      publicUrl: opts.publicUrl
    }
    const instance = (opts.instance ?? `${hostname()}:${process.pid}`).slice(0, 80)
    this.#o = { intervalMs: opts.intervalMs ?? INTERVAL_MS, leaseMs: opts.leaseMs ?? LEASE_MS, instance }
    this.#owner = `${instance}:${randomBytes(4).toString('hex')}`
  }

  /** Frees what an earlier life of this instance held, then runs every interval. */
  async start(): Promise<void> {
    const freed = await releaseEarlierClaims({ db: this.#deps.db, instance: this.#o.instance, owner: this.#owner }).catch(() => 0)
    if (freed > 0) this.#deps.logger.info({ freed }, 'alert messages claimed before a restart are sent again')
    this.#started = true
    this.#timer ??= setInterval(() => {
      this.wake()
    }, this.#o.intervalMs)
    this.#timer.unref()
    this.wake()
  }

  outcomes(): AlertOutcomes {
    return { ...this.#outcomes }
  }

  /** Every channel's health as of the last cycle. */
  channels(): ChannelHealth[] {
    return this.#health
  }

  wake(): void {
    if (!this.#stopping) void this.#cycle()
  }

  /**
   * Cycles at the clock's present until one sends nothing, each one's sends awaited: everything
   * due now is sent (a channel's next message only goes once the one before it has).
   */
  async tick(maxRounds = 20): Promise<void> {
    for (let round = 0; round < maxRounds; round++) {
      const sends = await this.#cycle()
      await Promise.all(sends)
      if (sends.length === 0) return
    }
  }

  /** Stops; sends in flight get `graceMs`, then are called off and their claims freed (sent later). */
  async stop(graceMs = 3000): Promise<void> {
    this.#stopping = true
    clearInterval(this.#timer)
    const cutoff = setTimeout(() => {
      this.#stop.abort()
    }, graceMs)
    try {
      await this.#running?.then(
        () => undefined,
        () => undefined
      )
      while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight])
    } finally {
      clearTimeout(cutoff)
      this.#stop.abort()
    }
  }

  /** Cycles run one at a time; a wake during one makes one more after it. */
  #cycle(): Promise<Array<Promise<void>>> {
    if (this.#running) {
      this.#again = true
      return this.#running
    }
    const run = this.#cycleOnce().finally(() => {
      this.#running = null
      if (this.#again && !this.#stopping) {
        this.#again = false
        this.wake()
      }
    })
    this.#running = run
    return run
  }

  async #cycleOnce(): Promise<Array<Promise<void>>> {
    if (this.#stopping) return []
    const { db, logger } = this.#deps
    const now = this.#deps.now()
    const step = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
      try {
        await fn()
      } catch (err) {
        logger.warn({ err }, `alerting: ${what} failed`)
      }
    }
    await step('reading events', () => takeInEvents({ db, now }))
    await step('evaluating alerts', () => evaluateDueAlerts({ db, now }))
    await step('composing messages', () => composeMessages({ db, now }))
    await step('queueing re-sends', async () => {
      for (const id of await takeDueRefreshes({ db, now, next: new Date(now.getTime() + REFRESH_MS) })) await enqueueRefresh(db, id, now)
    })
    const sends: Array<Promise<void>> = []
    await step('claiming messages', async () => {
      const claimed = await claimChannelHeads({
        db,
        owner: this.#owner,
        now,
        until: new Date(now.getTime() + this.#o.leaseMs),
        limit: CONCURRENCY - this.#inFlight.size
      })
      for (const m of claimed) {
        const send: Promise<void> = this.#send(m).finally(() => {
          this.#inFlight.delete(send)
        })
        this.#inFlight.add(send)
        sends.push(send)
      }
    })
    await step('reading channel health', () => this.#readHealth())
    await step('pruning', () => this.#prune(now))
    return sends
  }

  async #send(m: MessageRow): Promise<void> {
    const { db, logger } = this.#deps
    try {
      if (this.#stop.signal.aborted) {
        await releaseMessageClaim({ db, id: m.id, owner: this.#owner })
        return
      }
      const outcome = await deliverMessage(this.#deps, m, this.#owner, this.#stop.signal)
      if (outcome === null) {
        await releaseMessageClaim({ db, id: m.id, owner: this.#owner })
        return
      }
      this.#outcomes[outcome.status === 'pending' ? 'retry' : outcome.status]++
      // The channel's next message may go now: a receiver back after an outage gets its backlog at once.
      if (outcome.status !== 'pending' && this.#started) this.wake()
    } catch (err) {
      // The lease runs out and the message is tried again; nothing is lost.
      logger.warn({ err, messageId: m.id }, 'recording an alert message failed')
    }
  }

  async #readHealth(): Promise<void> {
    const { db } = this.#deps
    const [channels, pending] = await Promise.all([listChannels({ db }), countPending({ db })])
    this.#health = channels.map((c) => ({
      id: c.id,
      name: c.name,
      kind: c.kind,
      failing: c.failing_since !== null,
      failing_since: c.failing_since?.toISOString() ?? null,
      last_error: c.last_error,
      pending: pending.get(c.id) ?? 0
    }))
  }

  async #prune(now: Date): Promise<void> {
    if (now.getTime() - this.#lastPrune < PRUNE_EVERY_MS) return
    this.#lastPrune = now.getTime()
    const before = new Date(now.getTime() - RETENTION_MS)
    const pruned = (await pruneMessages({ db: this.#deps.db, before })) + (await pruneAlerts({ db: this.#deps.db, before }))
    if (pruned > 0) this.#deps.logger.info({ pruned }, 'finished alerts and their messages pruned after 30 days')
  }
}
