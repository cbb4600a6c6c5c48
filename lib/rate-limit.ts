import Boom from '@hapi/boom'
import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi'

/** What a key's budget looks like after a decision; times in ms. */
export interface RateLimitState {
  allowed: boolean
  limit: number
  remaining: number
  /** Milliseconds until every counted unit has aged out and the full limit is back. */
  resetMs: number
  /** When refused: milliseconds until enough units have aged out for this request's cost. */
  retryAfterMs: number
  /** When admitted: the admission time and cost, by which {@link RateLimiter.refund} finds it. */
  admittedAt?: number
  cost?: number
  /** When admitted by the shared (Redis) window: the entry {@link Limiter.refund} removes there. */
  token?: string
}

/**
 * What the server charges requests with: this process's {@link RateLimiter}, or the window shared
 * by every instance (lib/sharing/rate-limit.ts), which answers asynchronously.
 */
export interface Limiter {
  take(key: string, limit: number, cost: number): RateLimitState | Promise<RateLimitState>
  /** Gives back `units` of an admitted entry (default: all of it). */
  refund(
    key: string,
    limit: number,
    admitted: Pick<RateLimitState, 'admittedAt' | 'cost' | 'token'>,
    units?: number
  ): RateLimitState | Promise<RateLimitState>
  peek(key: string, limit: number): RateLimitState | Promise<RateLimitState>
  /** Requests refused since start (for /metrics). */
  readonly refused: number
}

interface Window {
  /** Admission times and costs, oldest first; `head` skips expired entries without shifting. */
  times: number[]
  costs: number[]
  head: number
  used: number
}

const WINDOW_MS = 60_000

/**
 * Per-key limits over a sliding 60-second window: a request is admitted only if the units admitted
 * in the 60 s before it plus its own cost stay within the limit, so no key ever exceeds its limit in
 * any minute, whichever minute one looks at. A refused request consumes nothing. Decisions are
 * synchronous, which keeps them exact however many requests arrive at once.
 */
export class RateLimiter implements Limiter {
  readonly #windows = new Map<string, Window>()
  readonly #now: () => number
  #lastSweep = 0
  #refused = 0

  constructor({ now = Date.now }: { now?: () => number } = {}) {
    this.#now = now
  }

  #window(key: string, now: number): Window {
    let w = this.#windows.get(key)
    if (!w) {
      w = { times: [], costs: [], head: 0, used: 0 }
      this.#windows.set(key, w)
    }
    while (w.head < w.times.length && (w.times[w.head] as number) <= now - WINDOW_MS) {
      w.used -= w.costs[w.head] as number
      w.head++
    }
    if (w.head > 1024 && w.head * 2 > w.times.length) {
      w.times = w.times.slice(w.head)
      w.costs = w.costs.slice(w.head)
      w.head = 0
    }
    return w
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < WINDOW_MS) return
    this.#lastSweep = now
    for (const [key, w] of this.#windows) {
      if (w.times.length === 0 || (w.times[w.times.length - 1] as number) <= now - WINDOW_MS) this.#windows.delete(key)
    }
  }

  #state(w: Window, limit: number, now: number, allowed: boolean, cost: number): RateLimitState {
    const last = w.times[w.times.length - 1]
    const resetMs = w.used === 0 || last === undefined ? 0 : last + WINDOW_MS - now
    let retryAfterMs = 0
    if (!allowed) {
      // Walk the oldest units until enough would have aged out for this cost to fit.
      let freed = 0
      for (let i = w.head; i < w.times.length; i++) {
        freed += w.costs[i] as number
        if (w.used - freed + cost <= limit) {
          retryAfterMs = (w.times[i] as number) + WINDOW_MS - now
          break
        }
      }
      // A cost above the whole limit never fits; a minute is the honest answer to "when".
      if (cost > limit) retryAfterMs = WINDOW_MS
    }
    return { allowed, limit, remaining: Math.max(0, limit - w.used), resetMs, retryAfterMs }
  }

  /** Admits `cost` units for `key` if they fit, consuming them; otherwise consumes nothing. */
  take(key: string, limit: number, cost: number): RateLimitState {
    const now = this.#now()
    this.#sweep(now)
    const w = this.#window(key, now)
    const allowed = w.used + cost <= limit
    if (!allowed) this.#refused++
    if (allowed && cost > 0) {
      w.times.push(now)
      w.costs.push(cost)
      w.used += cost
    }
    const state = this.#state(w, limit, now, allowed, cost)
    if (allowed && cost > 0) Object.assign(state, { admittedAt: now, cost })
    return state
  }

  /**
   * Gives back what an admitted request consumed, when the service could not serve it after all (a
   * check refused for capacity): the very units admitted at `admittedAt`, so that the window stays
   * exact; `units` of them only (a batch's domains that could not be checked), or all. Returns the
   * key's budget afterwards; nothing changes when they already aged out.
   */
  refund(key: string, limit: number, { admittedAt, cost }: Pick<RateLimitState, 'admittedAt' | 'cost'>, units = cost): RateLimitState {
    if (admittedAt === undefined || cost === undefined || units === undefined) return this.peek(key, limit)
    const now = this.#now()
    const w = this.#window(key, now)
    for (let i = w.times.length - 1; i >= w.head; i--) {
      if (w.times[i] !== admittedAt || w.costs[i] !== cost) continue
      const back = Math.min(units, cost)
      if (back < cost) {
        w.costs[i] = cost - back
      } else {
        w.times.splice(i, 1)
        w.costs.splice(i, 1)
      }
      w.used -= back
      break
    }
    return this.#state(w, limit, now, true, 0)
  }

  /** Requests refused since start (for /metrics). */
  get refused(): number {
    return this.#refused
  }

  /** The key's budget without consuming anything. */
  peek(key: string, limit: number): RateLimitState {
    const now = this.#now()
    return this.#state(this.#window(key, now), limit, now, true, 0)
  }
}

declare module '@hapi/hapi' {
  interface PluginSpecificConfiguration {
    /** Units this route costs against the key's per-minute limit (default 1, 0 = free). */
    rateLimit?: { cost: number }
  }
}

export interface RateLimitCredentials {
  keyId: number
  limit: number
}

/**
 * The key behind a request; undefined for a request without one, or one let in by another
 * credential (METRICS_TOKEN on /metrics), which has no budget to charge or show. A key refused
 * for its scope or its budget by the key strategy still counts: its answer shows the budget.
 */
function keyCredentials(request: Request): RateLimitCredentials | undefined {
  const credentials = request.auth.credentials as unknown as Partial<RateLimitCredentials> | null
  return typeof credentials?.keyId === 'number' ? (credentials as RateLimitCredentials) : undefined
}

const STATE = Symbol('rateLimitState')
type WithState = { [STATE]?: RateLimitState }

function seconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000))
}

/**
 * Charges a request's route cost to its key. Returns undefined when admitted, the 429 to answer
 * when refused; the state is kept on the request for the budget headers and a refund. The
 * in-memory window answers at once; only the shared one costs a wait (one round trip).
 */
export function chargeKey(
  request: Request,
  limiter: Limiter,
  { keyId, limit }: RateLimitCredentials
): Boom.Boom | undefined | Promise<Boom.Boom | undefined> {
  const cost = request.route.settings.plugins?.rateLimit?.cost ?? 1
  const state = limiter.take(String(keyId), limit, cost)
  if (!(state instanceof Promise)) return decide(request, state, cost)
  return state.then((s) => decide(request, s, cost))
}

/**
 * Where a request is charged: after authentication and the scope check, before validation and the
 * handler. A GET route has no body, so the key strategy charges as it authenticates (lib/auth.ts),
 * which spares every read a lifecycle step of its own (docs/decisions.md, Rate limits). Any other
 * keyed route is charged in an `onPostAuth` step of its own, added here: hapi reads a body after
 * authentication and before that step, so 413, 415 and malformed JSON cost nothing.
 */
export function chargeAfterBody(routes: ServerRoute[], limiter: Limiter): ServerRoute[] {
  const method = (request: Request, h: ResponseToolkit) => {
    const credentials = keyCredentials(request)
    // A route for several methods, GET among them: its GET requests were charged already.
    if (credentials === undefined || request.route.method === 'get') return h.continue
    const refused = chargeKey(request, limiter, credentials)
    if (refused instanceof Promise) {
      return refused.then((r) => {
        if (r !== undefined) throw r
        return h.continue
      })
    }
    if (refused !== undefined) throw refused
    return h.continue
  }
  return routes.map((route) => {
    const get = String(route.method).toLowerCase() === 'get'
    if (typeof route.options === 'function') throw new Error(`${route.path}: route options must be an object`)
    const options = route.options
    if (get || options?.auth === false) return route
    if (options?.ext?.onPostAuth !== undefined)
      throw new Error(`${route.path}: the rate limit's onPostAuth step would replace the route's own`)
    return { ...route, options: { ...options, ext: { ...options?.ext, onPostAuth: { method } } } }
  })
}

function decide(request: Request, state: RateLimitState, cost: number): Boom.Boom | undefined {
  ;(request.plugins as WithState)[STATE] = state
  if (state.allowed) return undefined
  const message =
    cost > state.limit
      ? `this request costs ${cost} units, more than this key's limit of ${state.limit} per minute`
      : `rate limit exceeded: this request costs ${cost} of ${state.limit} units per minute; retry after the Retry-After delay`
  const boom = Boom.tooManyRequests(message)
  // Never 0: a client that retries at once would only be refused again.
  boom.output.headers['Retry-After'] = String(Math.max(1, seconds(state.retryAfterMs)))
  return boom
}

/**
 * Charges `cost` units to the request's key when the cost depends on its body (a batch's distinct
 * domains): the route itself costs nothing, and this charge is the one the budget headers show and
 * {@link refundRequest} gives back. A refused charge consumes nothing.
 */
export async function chargeRequest(request: Request, limiter: Limiter, cost: number): Promise<RateLimitState> {
  const { keyId, limit } = request.auth.credentials as unknown as RateLimitCredentials
  const state = await limiter.take(String(keyId), limit, cost)
  ;(request.plugins as WithState)[STATE] = state
  return state
}

/**
 * Gives a request's cost back to its key (see {@link RateLimiter.refund}), or `units` of it; the
 * budget headers then show the refunded state. Does nothing for a request that consumed nothing.
 */
export async function refundRequest(request: Request, limiter: Limiter, units?: number): Promise<void> {
  const state = (request.plugins as WithState)[STATE]
  if (state?.admittedAt === undefined || state.cost === undefined) return
  const { keyId } = request.auth.credentials as unknown as RateLimitCredentials
  const after = await limiter.refund(String(keyId), state.limit, state, units)
  // What is left of the entry stays refundable.
  const left = units === undefined ? 0 : state.cost - Math.min(units, state.cost)
  ;(request.plugins as WithState)[STATE] =
    left > 0 ? { ...after, admittedAt: state.admittedAt, cost: left, token: after.token ?? state.token } : after
}

/**
 * Puts the key's budget on a keyed response, errors included. Called from the server's one
 * onPreResponse step; headers go straight into the response, which is on every request's path.
 * A key refused before it was charged (outside the route's scope) is shown its budget untouched:
 * the one case that asks the limiter again (a promise with the shared window).
 */
export function addBudgetHeaders(request: Request, limiter: Limiter): void | Promise<void> {
  const state = (request.plugins as WithState)[STATE]
  if (state) {
    setBudgetHeaders(request, state)
    return
  }
  // Only a key has a budget: the METRICS_TOKEN's credentials carry none.
  const credentials = keyCredentials(request)
  if (credentials === undefined) return
  const peeked = limiter.peek(String(credentials.keyId), credentials.limit)
  if (!(peeked instanceof Promise)) {
    setBudgetHeaders(request, peeked)
    return
  }
  return peeked.then((s) => {
    setBudgetHeaders(request, s)
  })
}

function setBudgetHeaders(request: Request, state: RateLimitState): void {
  const response = request.response
  const headers = Boom.isBoom(response) ? response.output.headers : response.headers
  headers['ratelimit-limit'] = String(state.limit)
  headers['ratelimit-remaining'] = String(state.remaining)
  headers['ratelimit-reset'] = String(seconds(state.resetMs))
}

/** The key's budget as the free `GET /api/v1/rate_limit` reports it. */
export async function describeBudget(limiter: Limiter, credentials: RateLimitCredentials, now: Date) {
  const state = await limiter.peek(String(credentials.keyId), credentials.limit)
  const resetSeconds = seconds(state.resetMs)
  return {
    limit: state.limit,
    remaining: state.remaining,
    used: state.limit - state.remaining,
    reset_seconds: resetSeconds,
    reset_at: new Date(now.getTime() + state.resetMs).toISOString()
  }
}
