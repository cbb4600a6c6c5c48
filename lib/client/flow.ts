/**
 * The openapi-fetch middleware every call of the client goes through: the key, the budget, the
 * retries and the errors. A 2xx answer passes on to openapi-fetch, which parses it; anything else
 * ends as a thrown SiteStatusError once the retries are spent. 429 and 503 are tried again after
 * their Retry-After (never sooner, never when longer than the cap); a GET that got no answer at
 * all after a short pause. Rules in docs/decisions.md, "Client".
 */
import type { Middleware } from 'openapi-fetch'
import type { Budget, Hold, Sleep } from './budget.js'
import { errorFromResponse, SiteStatusError } from './errors.js'
import { BATCH_PATH, batchCost, costOf, isKeyed, isRetried } from './routes.js'

export interface FlowOptions {
  key: string | undefined
  budget: Budget
  /** Sends a request (the client's `fetch`). */
  send: (request: Request) => Promise<Response>
  retries: number
  maxRetryWaitMs: number
  now: () => number
  sleep: Sleep
}

/** A call between its request and its last answer. */
interface Call {
  /** The request as first built: each retry sends a clone of it (a body is read once). */
  readonly pristine: Request
  readonly keyed: boolean
  readonly cost: number
  readonly retries: number
  hold: Hold | undefined
  attempt: number
}

type Outcome = { response: Response } | { error: unknown }

/** The first pause before a GET that got no answer is tried again; it doubles with each try. */
const NETWORK_RETRY_MS = 200

export function flowControl(options: FlowOptions): Middleware {
  const { budget } = options
  /** Calls under way, by openapi-fetch's request id. */
  const calls = new Map<string, Call>()

  /** Settles `first` and tries again while the rules allow: the 2xx answer, or a thrown SiteStatusError. */
  async function conclude(call: Call, signal: AbortSignal, first: Outcome): Promise<Response> {
    let outcome = first
    for (;;) {
      let waitMs: number
      // After a 429 the server said when this cost fits: the retry goes then, whatever the budget thinks.
      let told = false
      if ('response' in outcome) {
        const res = outcome.response
        if (call.hold) budget.settle(call.hold, res.headers)
        if (res.ok) return res
        const error = await errorFromResponse(res, options.now())
        const limit = budget.state?.limit
        const retryable =
          (res.status === 429 || res.status === 503) &&
          error.retryAfterS !== undefined &&
          error.retryAfterS * 1000 <= options.maxRetryWaitMs &&
          call.attempt < call.retries &&
          // A cost over the key's whole limit is refused however long one waits.
          !(res.status === 429 && limit !== undefined && call.cost > limit)
        if (!retryable) throw error
        waitMs = error.retryAfterS * 1000
        told = res.status === 429
      } else {
        if (call.hold) budget.settle(call.hold, null)
        if (signal.aborted) throw signal.reason
        waitMs = NETWORK_RETRY_MS * 2 ** call.attempt
        // A POST may have been done: only a GET is sent again.
        if (call.pristine.method !== 'GET' || call.attempt >= call.retries || waitMs > options.maxRetryWaitMs) {
          throw new SiteStatusError({ status: 0, message: `no answer from the server (${causeOf(outcome.error)})`, cause: outcome.error })
        }
      }
      await options.sleep(waitMs, signal)
      call.attempt++
      call.hold = call.keyed ? await budget.acquire(call.cost, signal, told) : undefined
      try {
        outcome = { response: await options.send(call.pristine.clone()) }
      } catch (error) {
        outcome = { error }
      }
    }
  }

  return {
    async onRequest({ request, schemaPath, id }) {
      const keyed = isKeyed(schemaPath)
      if (keyed && options.key !== undefined) request.headers.set('authorization', `Bearer ${options.key}`)
      const cost = !keyed ? 0 : schemaPath === BATCH_PATH ? await bodyCost(request) : costOf(schemaPath)
      const retries = isRetried(schemaPath) ? options.retries : 0
      const call: Call = { pristine: request.clone(), keyed, cost, retries, hold: undefined, attempt: 0 }
      call.hold = keyed ? await budget.acquire(cost, request.signal) : undefined
      calls.set(id, call)
      return undefined
    },
    async onResponse({ request, response, id }) {
      const call = calls.get(id)
      // None: onError's retry already concluded the call with this answer.
      if (call === undefined) return undefined
      calls.delete(id)
      return conclude(call, request.signal, { response })
    },
    async onError({ request, error, id }) {
      const call = calls.get(id)
      if (call === undefined) return error instanceof Error ? error : new Error(String(error))
      calls.delete(id)
      return conclude(call, request.signal, { error })
    }
  }
}

/** A batch's cost, from the domains of its JSON body. */
async function bodyCost(request: Request): Promise<number> {
  const body: unknown = await request.clone().json()
  const domains = typeof body === 'object' && body !== null && 'domains' in body ? body.domains : undefined
  return Array.isArray(domains) ? batchCost(domains) : 0
}

/** fetch's "fetch failed" says little; its cause says what (a refused connection, a reset). */
function causeOf(err: unknown): string {
  const cause = (err as { cause?: unknown } | null)?.cause
  const described = cause instanceof Error ? cause : err instanceof Error ? err : undefined
  return described?.message ?? String(err)
}
