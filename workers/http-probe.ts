import { performance } from 'node:perf_hooks'
import { ProxyAgent } from 'undici'
import { bodyNeeded, failedAssertion } from '../lib/rules/assertions.js'
import { daysRemaining } from '../lib/rules/certificates.js'
import { BODY_SEARCH_BYTES } from '../lib/rules/expectations.js'
import { internalFailure, judge, laterStage, type Judgement } from './probe-errors.js'
import type { Run } from './probe-hop.js'
import type { ProbeOptions, ProbeResult } from './probe-types.js'
import { chain, type Outcome } from './redirect-chain.js'

export type { LocationVerdict } from '../lib/rules/consensus.js'
export type { ProbeErrorCode } from './probe-errors.js'
export type { ProbeOptions, ProbeResult, ProbeTimings } from './probe-types.js'
export { createLocationDispatcher, type ConnectToRule, type LocationDispatcherOptions } from './location-dispatcher.js'

const round1 = (ms: number): number => Math.round(ms * 10) / 10

/**
 * One check of `domain` from one location: GET https://domain/ (or the check's own request), or
 * http://domain/ when https got no HTTP response at all. Never throws. When both schemes fail, the
 * error of the attempt that got further is kept (a TLS failure on https says more than a refused
 * http port); on a tie, https's. An answer the probe's rule (or the check's `expect`) passes is
 * then held to the check's assertions.
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
    waiting: null,
    method: opts.request?.method ?? 'GET',
    body: opts.request?.body ?? null,
    keepBytes: Math.max(bodyNeeded(opts.assertions ?? []), opts.expect?.body_contains != null ? BODY_SEARCH_BYTES : 0)
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
  opts.cancelWith?.(() => {
    if (run.expired) return
    run.expired = true
    clearTimeout(timer)
    expire()
  })
  const path = opts.request?.path ?? '/'
  let outcome: Outcome
  try {
    outcome = await chain(run, `https://${opts.domain}${path}`)
    if (outcome.kind === 'fail' && outcome.fallback) {
      run.method = opts.request?.method ?? 'GET'
      run.body = opts.request?.body ?? null
      const plain = await chain(run, `http://${opts.domain}${path}`)
      outcome = plain.kind === 'answer' || laterStage(plain.stage, outcome.stage) ? plain : outcome
    }
  } catch (err) {
    outcome = internalFailure(err)
  } finally {
    clearTimeout(timer)
  }
  const total = round1(now() - started)
  let verdict: Judgement = outcome.kind === 'answer' ? judge(outcome.status, outcome.headers, outcome.body, opts.expect) : outcome
  let assertion: number | undefined
  if (outcome.kind === 'answer' && verdict.status === 'up' && opts.assertions !== undefined && opts.assertions.length > 0) {
    const failure = failedAssertion(opts.assertions, {
      status: outcome.status,
      headers: outcome.headers,
      body: outcome.body,
      responseMs: total,
      certificateDays: run.certificate === null ? null : daysRemaining(new Date(run.certificate.expires_at), new Date())
    })
    if (failure !== null) {
      verdict = { status: 'down', code: 'assertion_failed', error: failure.error }
      assertion = failure.index
    }
  }
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
    },
    ...(assertion === undefined ? {} : { assertion })
  }
}
