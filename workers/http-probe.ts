import { performance } from 'node:perf_hooks'
import { ProxyAgent, type Dispatcher } from 'undici'
import type { LocationVerdict } from '../lib/rules/consensus.js'
import type { PolicyRefusalCode } from '../lib/rules/target-policy.js'
import type { ConnectToRule } from './location-dispatcher.js'
import { internalFailure, judge, laterStage, type ProbeErrorCode } from './probe-errors.js'
import type { Run } from './probe-hop.js'
import { chain, type Outcome } from './redirect-chain.js'

export type { LocationVerdict } from '../lib/rules/consensus.js'
export type { ProbeErrorCode } from './probe-errors.js'
export { createLocationDispatcher, type ConnectToRule, type LocationDispatcherOptions } from './location-dispatcher.js'

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
  /** Asked before every hop: a refusal stops the probe there. */
  checkTarget?: (host: string, port: number) => Promise<PolicyRefusalCode | null>
  now?: () => number
}

const round1 = (ms: number): number => Math.round(ms * 10) / 10

/**
 * One check of `domain` from one location: GET https://domain/, or http://domain/ when https
 * got no HTTP response at all. Never throws. When both schemes fail, the error of the attempt that
 * got further is kept (a TLS failure on https says more than a refused http port); on a tie, https's.
 */
export async function probe(opts: ProbeOptions): Promise<ProbeResult> {
  const now = opts.now ?? (() => performance.now())
  const started = now()
  const run: Run = {
    opts,
    now,
    viaProxy: opts.dispatcher instanceof ProxyAgent,
    sums: { dns: 0, connect: 0, tls: 0, first_byte: 0 },
    lastStatus: 0,
    lastUrl: null,
    certificate: null,
    expired: false,
    waiting: null
  }
  // An exact deadline of our own (undici's timers tick coarsely), cleared as soon as the probe is
  // done: AbortSignal.timeout() would leave every finished probe's timer to fire later for nothing.
  // The deadline's work ends whatever the probe waits on then; once it is over, nothing is.
  const expire = (): void => {
    run.waiting?.expire()
  }
  const { onDeadline } = opts
  const timer = setTimeout(() => {
    run.expired = true
    if (onDeadline === undefined) expire()
    else onDeadline(expire)
  }, opts.timeoutMs)
  let outcome: Outcome
  try {
    outcome = await chain(run, `https://${opts.domain}/`)
    if (outcome.kind === 'fail' && outcome.fallback) {
      const plain = await chain(run, `http://${opts.domain}/`)
      outcome = plain.kind === 'answer' || laterStage(plain.stage, outcome.stage) ? plain : outcome
    }
  } catch (err) {
    outcome = internalFailure(err)
  } finally {
    clearTimeout(timer)
  }
  const total = round1(now() - started)
  const verdict = outcome.kind === 'answer' ? judge(outcome.status, outcome.headers, outcome.body) : outcome
  return {
    status: verdict.status,
    http_code: run.lastStatus,
    response_ms: total,
    error: verdict.error,
    code: verdict.code,
    final_url: run.lastUrl,
    tls_expires_at: run.certificate?.expires_at ?? null,
    tls_issuer: run.certificate?.issuer ?? null,
    timings: {
      dns: round1(run.sums.dns),
      connect: round1(run.sums.connect),
      tls: round1(run.sums.tls),
      first_byte: round1(run.sums.first_byte),
      total
    }
  }
}
