import { request, type Dispatcher } from 'undici'
import { createResolver, type Resolve } from '../net/resolver.js'
import { isAllowedAddress, type TargetPolicy } from '../rules/target-policy.js'
import { createLocationDispatcher, POLICY_REFUSED_CODE } from '../../workers/location-dispatcher.js'
import { classify } from '../../workers/probe-errors.js'

/** A delivery's whole time limit: dial, request and the answer's headers. */
export const DELIVERY_TIMEOUT_MS = 15_000
/** Bytes of an answer's body read before the connection is dropped; none of it is kept. */
const BODY_CAP_BYTES = 4096

/** One POST to a receiver. */
export interface PostRequest {
  url: string
  headers: Record<string, string>
  body: string
  /** Aborts the request (the service is stopping): the answer is then `aborted`. */
  signal?: AbortSignal
  /** Up to this many bytes of the answer's body are handed back as `answer` (alert channels show what the receiver said); none by default. */
  keep?: number
}

/** What came of a POST: the status, or a short stable error text; `aborted` when it was called off. */
export type PostAnswer = { status: number; error: null; answer?: string } | { status: null; error: string; aborted?: true }

/** Sends one delivery; the dispatcher is built from the target policy unless a test brings its own. */
export type Post = (req: PostRequest) => Promise<PostAnswer>

/**
 * An error as a short text for the deliveries list, by the probes' own classifier (one reading of
 * every dial, DNS and TLS code): a stage and a code, never a message with addresses or data.
 */
export function errorText(err: unknown, timedOut: boolean): string {
  const code = (err as { code?: unknown } | null)?.code
  if (!timedOut && code === POLICY_REFUSED_CODE) return 'policy: url resolves to a non-public address'
  // Without a code, all an error says is its message, which may hold addresses or data.
  if (!timedOut && typeof code !== 'string') return 'http: ERROR'
  return classify(err, DELIVERY_TIMEOUT_MS, false, timedOut).error
}

/** The first `limit` bytes of a body as text; the rest is not read (the connection is not reused). */
async function readSome(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string> {
  const parts: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body) {
      parts.push(chunk)
      size += chunk.length
      if (size >= limit) break
    }
  } catch {
    // What was read is what the receiver said.
  } finally {
    body.destroy()
  }
  return Buffer.concat(parts).subarray(0, limit).toString('utf8')
}

/**
 * The outbound side of webhooks: undici through a location dispatcher's direct connector, which
 * resolves the receiver's name through c-ares, asks the target policy about every address and
 * dials the vetted one (no DNS rebinding gap between the check at creation and the send), with a
 * fresh connection per delivery. No redirect is followed: a 3xx is an answer that is not 2xx.
 */
export function createPost({
  policy,
  lookup,
  dnsServers = [],
  userAgent
}: {
  policy: TargetPolicy
  lookup?: Resolve
  dnsServers?: readonly string[]
  userAgent: string
}): { post: Post; close(): Promise<void> } {
  const dispatcher: Dispatcher = createLocationDispatcher({
    lookup: lookup ?? createResolver({ servers: dnsServers, timeoutMs: 5000 }),
    connectTimeoutMs: DELIVERY_TIMEOUT_MS,
    allowAddress: (ip) => isAllowedAddress(ip, policy)
  })
  const post: Post = async ({ url, headers, body, signal, keep }) => {
    const deadline = new AbortController()
    const late = { timedOut: false }
    const timer = setTimeout(() => {
      late.timedOut = true
      deadline.abort()
    }, DELIVERY_TIMEOUT_MS)
    const signals = signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, signal])
    try {
      const res = await request(url, {
        dispatcher,
        method: 'POST',
        // One connection per delivery, closed after it (as probes do): the policy judges every dial.
        reset: true,
        headers: { ...headers, 'user-agent': userAgent, 'content-type': 'application/json' },
        body,
        signal: signals,
        headersTimeout: DELIVERY_TIMEOUT_MS,
        bodyTimeout: DELIVERY_TIMEOUT_MS
      })
      if (keep !== undefined && keep > 0) return { status: res.statusCode, error: null, answer: await readSome(res.body, keep) }
      // The answer's body says nothing we keep; a little is read so a small answer ends cleanly.
      await res.body.dump({ limit: BODY_CAP_BYTES }).catch(() => {})
      return { status: res.statusCode, error: null }
    } catch (err) {
      if (signal?.aborted === true && !late.timedOut) return { status: null, error: 'aborted: the service is stopping', aborted: true }
      return { status: null, error: errorText(err, late.timedOut) }
    } finally {
      clearTimeout(timer)
    }
  }
  return { post, close: () => dispatcher.close() }
}
