/**
 * The typed client (lib/client) as the end-to-end tests call the service with, as a consumer would.
 * It never retries: a 429 or a 503 the server sends is what the test sees, not waited out. Nor does
 * it wait for the key's budget to come back: a call the budget it knows does not cover fails at once
 * (a test that is about the limits sends raw requests, so that every refusal is the server's).
 */
import { SiteStatusClient, SiteStatusError } from '../../lib/client/index.js'

export type ApiClient = SiteStatusClient & {
  /** The status of every answer the client got, in the order they came: a test that tells 201 from 200 reads it. */
  readonly statuses: readonly number[]
}

export function apiClient(baseUrl: string, key?: string): ApiClient {
  const statuses: number[] = []
  const client = new SiteStatusClient({
    baseUrl,
    key,
    retries: 0,
    maxRetryWaitMs: 0,
    fetch: async (input, init) => {
      const res = await fetch(input, init)
      statuses.push(res.status)
      return res
    }
  })
  return Object.defineProperty(client, 'statuses', { value: statuses, enumerable: true }) as ApiClient
}

/** A call's answer, or the SiteStatusError it failed with: for a test that waits for an error to show (a revoked key's 401). */
export type Outcome<T> = { value: T; error?: undefined } | { value?: undefined; error: SiteStatusError }

export async function outcome<T>(call: Promise<T>): Promise<Outcome<T>> {
  try {
    return { value: await call }
  } catch (err) {
    if (err instanceof SiteStatusError) return { error: err }
    throw err
  }
}
