import type { LocationVerdict } from './consensus.js'
import type { PolicyRefusalCode } from './target-policy.js'

/**
 * What went wrong with a probe, as a stable code beside the error text users read. The text may
 * carry details (a status, a TLS code, the deadline); code branches on the code alone.
 */
export type ProbeErrorCode =
  | 'dns_nxdomain'
  | 'dns_nodata'
  | 'dns_timeout'
  | 'dns_servfail'
  | 'dns_refused'
  | 'dns_failed'
  | 'connect_refused'
  | 'connect_reset'
  | 'connect_unreachable'
  | 'connect_timeout'
  | 'connect_failed'
  | 'proxy_auth'
  | 'proxy_refused'
  | 'location_egress'
  | 'tls'
  | 'timeout'
  | 'http_empty_reply'
  | 'http_protocol'
  | 'http_5xx'
  | 'blocked_challenge'
  | 'blocked_status'
  | 'too_many_redirects'
  | 'unexpected_status'
  | 'body_mismatch'
  | 'assertion_failed'
  | 'reply_mismatch'
  | 'dns_rcode'
  | 'dns_answer_mismatch'
  | PolicyRefusalCode
  | 'internal'

/**
 * The verdicts a probe reports with each code: what a location that probed can honestly say. An
 * agent's answer is held to it (lib/net/agent-reply.ts): a code with another verdict is a lie or
 * a bug, never counted. DNS failures are `error` where the site was resolved by the location itself
 * but not in its region (a proxied location).
 */
export const CODE_VERDICTS: Readonly<Record<ProbeErrorCode, readonly LocationVerdict[]>> = {
  dns_nxdomain: ['down', 'error'],
  dns_nodata: ['down', 'error'],
  dns_timeout: ['down', 'error'],
  dns_servfail: ['down', 'error'],
  dns_refused: ['down', 'error'],
  dns_failed: ['down', 'error'],
  connect_refused: ['down'],
  connect_reset: ['down'],
  connect_unreachable: ['down'],
  connect_timeout: ['down'],
  connect_failed: ['down'],
  proxy_auth: ['error'],
  proxy_refused: ['down'],
  location_egress: ['error'],
  tls: ['down'],
  timeout: ['down'],
  http_empty_reply: ['down'],
  http_protocol: ['down'],
  http_5xx: ['down'],
  blocked_challenge: ['blocked'],
  blocked_status: ['blocked'],
  too_many_redirects: ['down'],
  unexpected_status: ['down'],
  body_mismatch: ['down'],
  assertion_failed: ['down'],
  reply_mismatch: ['down'],
  dns_rcode: ['down'],
  dns_answer_mismatch: ['down'],
  policy_non_public: ['down'],
  policy_port: ['down'],
  internal: ['error']
}

/**
 * Phases in ms, summed over every hop that got a connection (redirects and the http fallback
 * included), as blackbox_exporter sums its per-redirect traces. `first_byte` is the wait from the
 * connection being ready to the response headers (blackbox "processing": writing the request and the server's wait); `total` is the whole
 * probe's wall time, like `response_ms`. dns/connect/tls are only known for sockets made by a
 * location dispatcher (workers/location-dispatcher.ts) dispatcher and stay 0 otherwise (first_byte then also holds
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
   * location dispatcher (workers/location-dispatcher.ts) dispatcher. Optional for answers made without a probe.
   */
  tls_expires_at?: string | null
  /** That certificate's issuer (`CN=R11, O=Let's Encrypt, C=US`), null alongside it. */
  tls_issuer?: string | null
  /** A `dns` check's records as text (dig's data form), at most 50; absent for other kinds. */
  answers?: string[]
  /** With `assertion_failed`: the place (from 0) in the check's list of the first assertion that failed. */
  assertion?: number
}
