/**
 * The key's budget as the client knows it from the RateLimit-* headers of every keyed answer: a
 * request whose cost would exceed what remains waits until RateLimit-Reset (the full limit back)
 * instead of spending into a 429. Requests in flight hold their cost, so concurrent calls do not
 * all spend the same remaining units.
 */
import { SiteStatusError } from './errors.js'

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>

/** A timer, ended by `signal` with its reason. */
export const defaultSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error)
      return
    }
    const stop = (): void => {
      clearTimeout(timer)
      reject(signal?.reason as Error)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop)
      resolve()
    }, ms)
    signal?.addEventListener('abort', stop, { once: true })
  })

/** A request's hold on the budget, from {@link Budget.acquire} to {@link Budget.settle}. */
export interface Hold {
  readonly cost: number
  /** How many answers had been settled when the request left. */
  readonly settledBefore: number
  settled: boolean
}

interface Known {
  limit: number
  remaining: number
  /** When every unit counted so far has aged out, by the client's clock. */
  resetAt: number
}

export class Budget {
  readonly #now: () => number
  readonly #sleep: Sleep
  readonly #maxWaitMs: number
  #known: Known | undefined
  #pendingCost = 0
  #pendingCount = 0
  #settles = 0
  /** Acquisitions go one at a time, in call order: a large cost is not passed over by small ones. */
  #turn: Promise<unknown> = Promise.resolve()
  #wakeSettled: () => void = () => {}
  #settled: Promise<void>
  readonly #learn: (() => Promise<Headers | null>) | undefined
  /** The look at the budget while it is under way (see {@link #lookOnce}). */
  #learning: Promise<void> | null = null
  #asked = false

  constructor({
    now,
    sleep,
    maxWaitMs,
    learn
  }: {
    now: () => number
    sleep: Sleep
    maxWaitMs: number
    /** Asks the free `GET /api/v1/rate_limit` for the budget headers (null: no answer). */
    learn?: () => Promise<Headers | null>
  }) {
    this.#now = now
    this.#sleep = sleep
    this.#maxWaitMs = maxWaitMs
    this.#learn = learn
    this.#settled = this.#nextSettled()
  }

  /**
   * Asks the free rate_limit route once, when a call must wait for the first keyed answer: that
   * answer may be a slow check's, which would hold every other call behind it. Settles once asked;
   * a failure is not asked again (the calls then wait for the first answer).
   */
  #lookOnce(): void {
    if (this.#learn === undefined || this.#asked) return
    this.#asked = true
    this.#learning = this.#learn().then(
      (headers) => {
        const reported = headers && readBudget(headers)
        if (reported && this.#known === undefined) {
          this.#known = { limit: reported.limit, remaining: reported.remaining, resetAt: this.#now() + reported.resetS * 1000 }
        }
        this.#learning = null
      },
      () => {
        this.#learning = null
      }
    )
  }

  /** What the client knows of the key's budget now (undefined before the first keyed answer). */
  get state(): Readonly<Known & { pending: number }> | undefined {
    return this.#known && { ...this.#known, pending: this.#pendingCost }
  }

  /**
   * Resolves once `cost` units may be spent, holding them until {@link settle}. Before the first
   * keyed answer one request goes alone to learn the budget; a call that would wait for it asks the
   * free rate_limit route instead, once. `force` skips the wait: the server
   * itself said when to come back (Retry-After of a 429). Throws a `rate_limited` error when the
   * wait would be longer than the client's maxRetryWaitMs.
   */
  acquire(cost: number, signal?: AbortSignal, force = false): Promise<Hold> {
    if (cost === 0 || force) return Promise.resolve(this.#hold(cost))
    const turn = this.#turn.then(() => this.#wait(cost, signal))
    this.#turn = turn.catch(() => {})
    return turn
  }

  /** Ends a hold with its answer's headers (null when none came), learning the budget from them. */
  settle(hold: Hold, headers: Headers | null): void {
    if (hold.settled) return
    hold.settled = true
    this.#pendingCost -= hold.cost
    this.#pendingCount--
    const reported = headers && readBudget(headers)
    if (reported) {
      const now = this.#now()
      const resetAt = now + reported.resetS * 1000
      const known = this.#known
      // An answer whose request left after every answer before it was charged after them all: it
      // is the newest word. Otherwise its figures may predate an answer already read.
      if (known === undefined || hold.settledBefore === this.#settles || now >= known.resetAt) {
        this.#known = { limit: reported.limit, remaining: reported.remaining, resetAt }
      } else {
        this.#known = {
          limit: reported.limit,
          remaining: Math.min(known.remaining, reported.remaining),
          resetAt: Math.max(known.resetAt, resetAt)
        }
      }
    }
    this.#settles++
    this.#wakeSettled()
  }

  #hold(cost: number): Hold {
    this.#pendingCost += cost
    this.#pendingCount++
    return { cost, settledBefore: this.#settles, settled: false }
  }

  #nextSettled(): Promise<void> {
    return new Promise((resolve) => {
      this.#wakeSettled = () => {
        this.#settled = this.#nextSettled()
        resolve()
      }
    })
  }

  async #wait(cost: number, signal: AbortSignal | undefined): Promise<Hold> {
    for (;;) {
      signal?.throwIfAborted()
      const known = this.#known
      if (known === undefined) {
        if (this.#pendingCount === 0) break
        this.#lookOnce()
        await this.#until(this.#learning === null ? this.#settled : Promise.race([this.#settled, this.#learning]), Infinity, signal)
        continue
      }
      const now = this.#now()
      if (now >= known.resetAt) known.remaining = known.limit
      // A cost over the whole limit never fits: the server says so, and the call fails.
      if (cost > known.limit || known.remaining - this.#pendingCost >= cost) break
      const waitMs = Math.max(0, known.resetAt - now)
      if (this.#pendingCount === 0 && waitMs > this.#maxWaitMs) {
        throw new SiteStatusError({
          status: 429,
          message: `the key's budget covers this request's ${cost} units only in ${Math.ceil(waitMs / 1000)} s, longer than maxRetryWaitMs`,
          retryAfterS: Math.ceil(waitMs / 1000)
        })
      }
      // An answer may come first and tell more (or free a hold); otherwise the window has passed.
      await this.#until(this.#pendingCount > 0 ? this.#settled : null, waitMs, signal)
    }
    return this.#hold(cost)
  }

  /** Waits for `event` or `ms`, whichever comes first. */
  async #until(event: Promise<void> | null, ms: number, signal: AbortSignal | undefined): Promise<void> {
    const stop = new AbortController()
    const abort = (): void => {
      stop.abort(signal?.reason)
    }
    signal?.addEventListener('abort', abort, { once: true })
    try {
      const waits: Array<Promise<void>> = []
      if (event) waits.push(event)
      if (ms !== Infinity) waits.push(this.#sleep(ms, stop.signal))
      const aborted = new Promise<never>((_, reject) => {
        stop.signal.addEventListener('abort', () => {
          reject(signal?.reason as Error)
        })
      })
      aborted.catch(() => {})
      await Promise.race([...waits, aborted])
    } finally {
      signal?.removeEventListener('abort', abort)
      stop.abort()
    }
  }
}

/** The budget headers of an answer, or undefined when it carries none (no key, METRICS_TOKEN). */
function readBudget(headers: Headers): { limit: number; remaining: number; resetS: number } | undefined {
  const [limit, remaining, resetS] = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'].map((name) =>
    Number(headers.get(name) ?? NaN)
  )
  if (!Number.isFinite(limit) || !Number.isFinite(remaining) || !Number.isFinite(resetS)) return undefined
  return { limit: limit as number, remaining: remaining as number, resetS: resetS as number }
}
