import type { Dispatcher } from 'undici'
import type { PolicyRefusalCode } from '../lib/rules/target-policy.js'
import type { ConnectToRule } from '../lib/rules/connect-to.js'
import type { LocationExpectations } from '../lib/rules/expectations.js'
import type { Assertion } from '../lib/rules/assertions.js'
import type { Method } from '../lib/rules/check-spec.js'

/** What an `http` check sends beyond the probe's own headers. */
export interface HttpRequest {
  method: Method
  path: string
  headers: Readonly<Record<string, string>>
  body: string | null
}

export type { ProbeResult, ProbeTimings } from '../lib/rules/probe-result.js'

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
