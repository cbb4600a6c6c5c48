/**
 * One call to the service over fetch, with the key, the budget and the retries: 429 and 503 are
 * tried again after their Retry-After (never sooner, and never when it is longer than the cap);
 * a GET that got no answer at all is tried again after a short pause.
 */
import { Budget, type Sleep } from './budget.js'
import { errorFromResponse, SiteStatusError } from './errors.js'

export interface TransportOptions {
  baseUrl: string
  key: string | undefined
  fetch: typeof fetch
  retries: number
  maxRetryWaitMs: number
  now: () => number
  sleep: Sleep
}

/** A request as a client method describes it. */
export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** The path with its parameters filled in (see {@link fillPath}). */
  path: string
  query?: Record<string, string | number | undefined> | undefined
  body?: unknown
  accept: string
  /** Whether the route takes the key (and so charges and reports its budget). */
  keyed: boolean
  /** Units the route charges the key. */
  cost: number
  headers?: Record<string, string>
  signal?: AbortSignal | undefined
  /** Overrides the client's `retries` for this call. */
  retries?: number
}

/** The first pause before a GET that got no answer is tried again; it doubles with each try. */
const NETWORK_RETRY_MS = 200

export class Transport {
  readonly budget: Budget
  readonly #options: TransportOptions
  readonly #base: string

  constructor(options: TransportOptions) {
    this.#options = options
    this.#base = options.baseUrl.replace(/\/+$/, '')
    const { key } = options
    const learn =
      key === undefined
        ? undefined
        : async (): Promise<Headers | null> => {
            const res = await options.fetch(`${this.#base}/api/v1/rate_limit`, {
              headers: { accept: 'application/json', authorization: `Bearer ${key}` }
            })
            await res.arrayBuffer()
            return res.ok ? res.headers : null
          }
    this.budget = new Budget({ now: options.now, sleep: options.sleep, maxWaitMs: options.maxRetryWaitMs, learn })
  }

  /** Sends `call` until it is answered with a 2xx (returned, its body unread) or fails for good (thrown). */
  async send(call: Call): Promise<Response> {
    const { maxRetryWaitMs, sleep } = this.#options
    const retries = call.retries ?? this.#options.retries
    // After a 429 the server said when this cost fits: the retry goes then, whatever the budget thinks.
    let toldWhen = false
    for (let attempt = 0; ; attempt++) {
      const hold = call.keyed ? await this.budget.acquire(call.cost, call.signal, toldWhen) : undefined
      let res: Response
      try {
        res = await this.#options.fetch(this.#url(call), this.#init(call))
      } catch (err) {
        if (hold) this.budget.settle(hold, null)
        if (call.signal?.aborted) throw call.signal.reason
        const pauseMs = NETWORK_RETRY_MS * 2 ** attempt
        if (call.method === 'GET' && attempt < retries && pauseMs <= maxRetryWaitMs) {
          await sleep(pauseMs, call.signal)
          continue
        }
        throw new SiteStatusError({ status: 0, message: `no answer from the server (${causeOf(err)})`, cause: err })
      }
      if (hold) this.budget.settle(hold, res.headers)
      if (res.ok) return res
      const error = await errorFromResponse(res)
      const waitMs = error.retryAfterS === undefined ? undefined : error.retryAfterS * 1000
      const limit = this.budget.state?.limit
      const retryable =
        (res.status === 429 || res.status === 503) &&
        waitMs !== undefined &&
        waitMs <= maxRetryWaitMs &&
        attempt < retries &&
        // A cost over the key's whole limit is refused however long one waits.
        !(res.status === 429 && limit !== undefined && call.cost > limit)
      if (!retryable) throw error
      await sleep(waitMs, call.signal)
      toldWhen = res.status === 429
    }
  }

  #url(call: Call): string {
    const query = new URLSearchParams()
    for (const [name, value] of Object.entries(call.query ?? {})) if (value !== undefined) query.set(name, String(value))
    const search = query.toString() === '' ? '' : `?${query.toString()}`
    return `${this.#base}${call.path}${search}`
  }

  #init(call: Call): RequestInit {
    const headers: Record<string, string> = { accept: call.accept, ...call.headers }
    if (call.keyed && this.#options.key !== undefined) headers.authorization = `Bearer ${this.#options.key}`
    let body: string | undefined
    if (call.body !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(call.body)
    }
    return { method: call.method, headers, body, signal: call.signal }
  }
}

/** A path template of the document with its `{parameters}` filled in, each encoded. */
export function fillPath(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name]
    if (value === undefined) throw new TypeError(`missing path parameter ${name}`)
    return encodeURIComponent(String(value))
  })
}

/** fetch's "fetch failed" says little; its cause says what (a refused connection, a reset). */
function causeOf(err: unknown): string {
  const cause = (err as { cause?: unknown } | null)?.cause
  const described = cause instanceof Error ? cause : err instanceof Error ? err : undefined
  return described?.message ?? String(err)
}
