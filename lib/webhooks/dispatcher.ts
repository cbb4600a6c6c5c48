import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Logger } from 'pino'
import { deliveryBody, judgeAnswer, retryDelayMs, signDelivery } from '../rules/webhooks.js'
import type { Db } from '../store/db.js'
import {
  claimDueDeliveries,
  disableWebhook,
  failPendingDeliveries,
  pruneDeliveries,
  recordAttempt,
  releaseClaim,
  type AttemptOutcome,
  type ClaimedDelivery
} from '../store/webhooks.js'
import { fanOut } from './fan-out.js'
import { DELIVERY_TIMEOUT_MS, type Post, type PostAnswer } from './post.js'
import { SecretBoxError, type SecretBox } from './secret-box.js'

/** How often the dispatcher looks for new events and due retries when nobody wakes it. */
const INTERVAL_MS = 1000
/**
 * Deliveries in flight at once per instance. An event for a hundred webhooks is a hundred
 * deliveries, which should go out in one or two rounds of claims, not in many.
 */
const CONCURRENCY = 64
/** A claim outlives the longest send by a wide margin; an instance that dies mid-send frees it then. */
const LEASE_MS = 4 * DELIVERY_TIMEOUT_MS
const DAY_MS = 86_400_000
/** The delivery log is kept this long (decisions.md: 30 days). */
const RETENTION_DAYS = 30
const PRUNE_EVERY_MS = 3_600_000

export const GONE_REASON = 'the receiver answered 410 Gone'

/** Delivery attempts recorded by this dispatcher since start: delivered, to be retried, failed for good (410 included). */
export interface DeliveryOutcomes {
  delivered: number
  retry: number
  failed: number
}

export interface WebhookDispatcherOptions {
  db: Db
  box: SecretBox
  post: Post
  logger: Logger
  now?: () => Date
  /** Jitter's randomness (tests pin it). */
  random?: () => number
  concurrency?: number
  intervalMs?: number
  /** This instance's name in leases; made unique per dispatcher. */
  instance?: string
}

/**
 * Sends webhook deliveries off the request path: each cycle fans new events out into deliveries,
 * claims due ones (a lease in the database, so one instance at a time sends each), sends them with
 * bounded concurrency and records each outcome under its lease. It runs every second, and at once
 * on {@link wake} (new events); {@link tick} runs one cycle and waits for its sends (tests).
 */
export class WebhookDispatcher {
  readonly #o: Required<Omit<WebhookDispatcherOptions, 'instance'>>
  readonly #owner: string
  readonly #inFlight = new Set<Promise<void>>()
  readonly #stop = new AbortController()
  #running: Promise<Array<Promise<void>>> | null = null
  #queued: Promise<Array<Promise<void>>> | null = null
  #timer: NodeJS.Timeout | undefined
  #stopping = false
  #lastPrune = 0
  readonly #outcomes: DeliveryOutcomes = { delivered: 0, retry: 0, failed: 0 }

  constructor(opts: WebhookDispatcherOptions) {
    this.#o = {
      now: () => new Date(),
      random: Math.random,
      concurrency: CONCURRENCY,
      intervalMs: INTERVAL_MS,
      ...opts
    }
    this.#owner = `${opts.instance ?? `${hostname()}:${process.pid}`}:${randomBytes(4).toString('hex')}`.slice(0, 64)
  }

  start(): void {
    this.#timer ??= setInterval(() => {
      this.wake()
    }, this.#o.intervalMs)
    this.#timer.unref()
    this.wake()
  }

  /** The attempts recorded since start, by outcome (for /metrics). */
  outcomes(): DeliveryOutcomes {
    return { ...this.#outcomes }
  }

  /** Look for work now (the event feed calls it when events arrive). */
  wake(): void {
    if (!this.#stopping) void this.#cycle()
  }

  /** One cycle, then its sends, awaited. */
  async tick(): Promise<void> {
    await Promise.all(await this.#cycle())
  }

  /**
   * Stops looking for work; sends in flight get `graceMs` to finish, then are called off and
   * their claims freed without counting an attempt (another instance, or the next start, sends them).
   */
  async stop(graceMs = 3000): Promise<void> {
    this.#stopping = true
    clearInterval(this.#timer)
    const cutoff = setTimeout(() => {
      this.#stop.abort()
    }, graceMs)
    try {
      const settled = (): undefined => undefined
      await this.#running?.then(settled, settled)
      await this.#queued?.then(settled, settled)
      while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight])
    } finally {
      clearTimeout(cutoff)
      this.#stop.abort()
    }
  }

  /** Cycles run one at a time; wakes during one coalesce into one more after it. */
  #cycle(): Promise<Array<Promise<void>>> {
    if (this.#queued) return this.#queued
    if (this.#running) {
      const after = (): Promise<Array<Promise<void>>> => {
        this.#queued = null
        return this.#start()
      }
      this.#queued = this.#running.then(after, after)
      return this.#queued
    }
    return this.#start()
  }

  #start(): Promise<Array<Promise<void>>> {
    const run = this.#cycleOnce().finally(() => {
      if (this.#running === run) this.#running = null
    })
    this.#running = run
    return run
  }

  async #cycleOnce(): Promise<Array<Promise<void>>> {
    if (this.#stopping) return []
    const { db, logger } = this.#o
    const now = this.#o.now()
    try {
      await fanOut({ db, now })
    } catch (err) {
      logger.warn({ err }, 'webhook fan-out failed')
    }
    const sends: Array<Promise<void>> = []
    try {
      const free = this.#o.concurrency - this.#inFlight.size
      const claimed = await claimDueDeliveries({ db, owner: this.#owner, now, until: new Date(now.getTime() + LEASE_MS), limit: free })
      for (const delivery of claimed) {
        const send: Promise<void> = this.#send(delivery).finally(() => {
          this.#inFlight.delete(send)
          // A full claim suggests more are due: look again without waiting for the timer.
          if (claimed.length === free) this.wake()
        })
        this.#inFlight.add(send)
        sends.push(send)
      }
    } catch (err) {
      logger.warn({ err }, 'claiming webhook deliveries failed')
    }
    await this.#prune(now)
    return sends
  }

  async #send(d: ClaimedDelivery): Promise<void> {
    const { db, logger } = this.#o
    try {
      if (this.#stop.signal.aborted) {
        await releaseClaim({ db, id: d.id, owner: this.#owner })
        return
      }
      const answer = await this.#post(d)
      if ('aborted' in answer) {
        await releaseClaim({ db, id: d.id, owner: this.#owner })
        return
      }
      const at = this.#o.now()
      const attempts = d.attempts + 1
      const verdict = answer.status === null ? 'retry' : judgeAnswer(answer.status)
      const outcome: AttemptOutcome = {
        status: 'pending',
        attempts,
        last_http_code: answer.status,
        last_error: answer.error ?? (verdict === 'delivered' ? null : `http: ${answer.status}`),
        next_attempt_at: at,
        delivered_at: null
      }
      if (verdict === 'delivered') Object.assign(outcome, { status: 'delivered', delivered_at: at })
      else if (verdict === 'gone') Object.assign(outcome, { status: 'failed', last_error: `http: 410 (webhook disabled)` })
      else {
        const wait = retryDelayMs(attempts, this.#o.random)
        if (wait === null) outcome.status = 'failed'
        else outcome.next_attempt_at = new Date(at.getTime() + wait)
      }
      if (!(await recordAttempt({ db, id: d.id, owner: this.#owner, outcome }))) return
      this.#outcomes[outcome.status === 'pending' ? 'retry' : outcome.status]++
      if (verdict === 'gone' && (await disableWebhook({ db, id: d.webhook_id, reason: GONE_REASON, now: at }))) {
        await failPendingDeliveries({ db, webhookId: d.webhook_id, error: `webhook disabled: ${GONE_REASON}` })
        logger.warn({ webhookId: d.webhook_id }, 'webhook disabled: its receiver answered 410 Gone')
      }
    } catch (err) {
      // The lease runs out and the delivery is tried again; nothing is lost.
      logger.warn({ err, deliveryId: d.id }, 'recording a webhook delivery failed')
    }
  }

  /** Signs and sends one attempt; a secret this instance cannot open is an attempt that failed. */
  async #post(d: ClaimedDelivery): Promise<PostAnswer> {
    if (d.data === null || d.event_at === null) return { status: null, error: 'event: no longer stored' }
    let secret: string
    try {
      secret = this.#o.box.open(d.secret)
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err
      this.#o.logger.error({ webhookId: d.webhook_id, code: err.code }, 'webhook secret cannot be opened: check WEBHOOK_KEY')
      return { status: null, error: `secret: ${err.message}` }
    }
    const body = deliveryBody({ type: d.type, at: d.event_at, data: d.data })
    const id = String(d.event_id)
    const timestamp = Math.floor(this.#o.now().getTime() / 1000)
    return this.#o.post({
      url: d.url,
      body,
      signal: this.#stop.signal,
      headers: {
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signDelivery({ secret, id, timestamp, body })
      }
    })
  }

  async #prune(now: Date): Promise<void> {
    if (now.getTime() - this.#lastPrune < PRUNE_EVERY_MS) return
    this.#lastPrune = now.getTime()
    try {
      const pruned = await pruneDeliveries({ db: this.#o.db, before: new Date(now.getTime() - RETENTION_DAYS * DAY_MS) })
      if (pruned > 0) this.#o.logger.info({ pruned }, 'old webhook deliveries pruned')
    } catch (err) {
      this.#o.logger.warn({ err }, 'pruning webhook deliveries failed')
    }
  }
}
