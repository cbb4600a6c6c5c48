import type { Dispatcher } from 'undici'
import type { LocationVerdict } from '../lib/rules/consensus.js'
import type { PolicyRefusalCode } from '../lib/rules/target-policy.js'
import type { ConnectToRule } from '../lib/rules/connect-to.js'
import type { LocationExpectations } from '../lib/rules/expectations.js'
import type { ProbeErrorCode } from './probe-errors.js'
import type { Assertion } from '../lib/rules/assertions.js'
import type { Method } from '../lib/rules/check-spec.js'

/** What an `http` check sends beyond the probe's own headers. */
export interface HttpRequest {
  method: Method
  path: string
  headers: Readonly<Record<string, string>>
  body: string | null
}

/**
 * Phases in ms, summed over every hop that got a connection (redirects and the http fallback
 * included), as blackbox_exporter sums its per-redirect traces. `first_byte` is the wait from the
 * connection being ready to the response headers (blackbox "processing": writing the request and the server's wait); `total` is the whole
 * probe's wall time, like `response_ms`. dns/connect/tls are only known for sockets made by a
 * {@link createLocationDispatcher} dispatcher and stay 0 otherwise (first_byte then also holds
 * the connection setup); dns is 0 for an IP literal and, behind a proxy, covers only the proxy's name.
 */
export interface ProbeTimings {
  dns: number
  connect: number
  tls: number
  first_byte: number
  total: number
}

/**
 * One location's answer about a site. `error` is the text users read; `code` says the same for
 * code to branch on (null when `error` is). Plain data: it crosses the actor thread's boundary.
 */
export interface ProbeResult {
  status: LocationVerdict
  http_code: number
  response_ms: number
  error: string | null
  code: ProbeErrorCode | null
  final_url: string | null
  timings: ProbeTimings
  /**
   * `notAfter` of the leaf certificate of the final hop's handshake (ISO 8601); null when the final
   * hop was plain http or its TLS handshake did not complete. Known only for connections made by a
   * {@link createLocationDispatcher} dispatcher. Optional for answers made without a probe.
   */
  tls_expires_at?: string | null
  /** That certificate's issuer (`CN=R11, O=Let's Encrypt, C=US`), null alongside it. */
  tls_issuer?: string | null
  /** A `dns` check's records as text (dig's data form), at most 50; absent for other kinds. */
  answers?: string[]
  /** With `assertion_failed`: the place (from 0) in the check's list of the first assertion that failed. */
  assertion?: number
}

export interface ProbeOptions {
  domain: string
  dispatcher: Dispatcher
  timeoutMs: number
  userAgent: string
  maxRedirects?: number
  maxBodyBytes?: number
  connectTo?: readonly ConnectToRule[]
  /**
   * Runs the work of a passed deadline, ending what the probe waits on (its hop's connection
   * closed, the answer built): the actor takes it in turns, so that thousands of probes started
   * together, and so expiring together, do not hold its thread in one piece. Nothing that arrives
   * after the deadline counts meanwhile. Default: at once.
   */
  onDeadline?: (expire: () => void) => void
  /**
   * Handed the probe's cancel once it has started: calling it ends the probe as its deadline would
   * (a probe whose checker is gone). Default: the probe cannot be cancelled.
   */
  cancelWith?: (cancel: () => void) => void
  /**
   * What the check expects of the final answer (lib/rules/expectations.ts); absent: the probe's own
   * rule alone. With `body_contains`, the final answer's body is kept up to `maxBodyBytes`.
   */
  expect?: LocationExpectations
  /**
   * The request the check sends (method, path with query, headers, body); absent: `GET /` with no
   * header of its own. Followed redirects keep them as a browser does (303, and 301/302 after a
   * POST, go on with GET and no body).
   */
  request?: HttpRequest
  /** What the final answer must also pass (lib/rules/assertions.ts); the body is kept as far as they read. */
  assertions?: readonly Assertion[]
  /** Asked before every hop: a refusal stops the probe there. */
  checkTarget?: (host: string, port: number) => Promise<PolicyRefusalCode | null>
  now?: () => number
}
