/**
 * The openapi-fetch client the methods call, typed by the generated `paths`, with the flow
 * middleware (key, budget, retries, errors) on every call; and what turns its answers into a
 * method's result.
 */
import createClient, { type Client } from 'openapi-fetch'
import { Budget, type Sleep } from './budget.js'
import { SiteStatusError } from './errors.js'
import { flowControl } from './flow.js'
import type { paths } from './schema.js'

/** The typed client of the document's paths; its answers typed as JSON (streams and text say `parseAs`). */
export type Api = Client<paths, 'application/json'>

export interface ApiOptions {
  baseUrl: string
  key: string | undefined
  fetch: typeof fetch
  retries: number
  maxRetryWaitMs: number
  now: () => number
  sleep: Sleep
}

export function connect(options: ApiOptions): { api: Api; budget: Budget } {
  const { key, fetch: fetchWith } = options
  // Called as a plain function: a browser's fetch refuses to run as a method of another object.
  const send = (request: Request): Promise<Response> => fetchWith(request)
  const clientOptions = { baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: send, headers: { accept: 'application/json' } }
  // The budget's one look at the free rate_limit route goes around the middleware (and the budget).
  const plain = createClient<paths>(clientOptions)
  const learn =
    key === undefined
      ? undefined
      : async (): Promise<Headers | null> => {
          const { response } = await plain.GET('/api/v1/rate_limit', { headers: { authorization: `Bearer ${key}` }, parseAs: 'stream' })
          await response.body?.cancel()
          return response.ok ? response.headers : null
        }
  const budget = new Budget({ now: options.now, sleep: options.sleep, maxWaitMs: options.maxRetryWaitMs, learn })
  const api = createClient<paths, 'application/json'>(clientOptions)
  api.use(flowControl({ ...options, budget, send }))
  return { api, budget }
}

/** An openapi-fetch answer as the middleware lets it through: a 2xx (anything else was thrown). */
interface Answer<D> {
  data?: D
  response: Response
}

/** The answer's parsed body (JSON, or text with `parseAs: 'text'`). */
export async function json<D>(pending: Promise<Answer<D>>): Promise<D> {
  const { data, response } = await pending
  if (data === undefined)
    throw new SiteStatusError({ status: response.status, code: 'malformed_answer', message: 'the answer has no body' })
  return data
}

/** The answer's text (`parseAs: 'text'`); an empty body is ''. */
export async function text(pending: Promise<Answer<string>>): Promise<string> {
  return (await pending).data ?? ''
}

/** Nothing (a 204): only that it succeeded. */
export async function none(pending: Promise<Answer<unknown>>): Promise<void> {
  await pending
}

/** The options every call takes. */
export interface CallOptions {
  /** Aborts the call, its waits included; it then rejects with the signal's reason. */
  signal?: AbortSignal
}

/** The `init` of an openapi-fetch call from a method's options. */
export const init = (options: CallOptions | undefined): { signal: AbortSignal | undefined } => ({ signal: options?.signal })

/** An Accept header, for the answers that are not JSON. */
export const accept = (type: string): { headers: { accept: string } } => ({ headers: { accept: type } })
