import type { LocationVerdict } from '../lib/rules/consensus.js'
import type { ProbeErrorCode } from '../lib/rules/probe-result.js'
import { expectationVerdict, type LocationExpectations } from '../lib/rules/expectations.js'
import { POLICY_REFUSALS, type PolicyRefusalCode } from '../lib/rules/target-policy.js'
import { matchChallenge, mayBeChallenge } from './challenge-signatures.js'
import { POLICY_REFUSED_CODE, SITE_DNS_CODE } from './location-dispatcher.js'
import { isTlsErrorCode } from './tls-errors.js'
import { RESOLVER_FAILED } from '../lib/net/resolver.js'

export type { ProbeErrorCode } from '../lib/rules/probe-result.js'
export { CODE_VERDICTS } from '../lib/rules/probe-result.js'

/**
 * How far an attempt got before it failed, in order: a failure at a later stage says more about
 * the site. `response`: the request went out, or a hop was refused on the way (a reset, an empty or
 * garbled reply, a policy refusal, a redirect that cannot be followed); `deadline`: the attempt
 * waited out the probe's whole deadline.
 */
export type Stage = 'dns' | 'connect' | 'tls' | 'response' | 'deadline'

const STAGE_ORDER: Readonly<Record<Stage, number>> = { dns: 0, connect: 1, tls: 2, response: 3, deadline: 4 }

/** Whether stage `a` comes after stage `b`. */
export function laterStage(a: Stage, b: Stage): boolean {
  return STAGE_ORDER[a] > STAGE_ORDER[b]
}

/** An attempt that got no judgeable answer. */
export interface Failure {
  kind: 'fail'
  status: LocationVerdict
  code: ProbeErrorCode
  error: string
  stage: Stage
  /** Failed before any HTTP response in a way worth retrying over http://. */
  fallback: boolean
}

export const fail = (status: LocationVerdict, code: ProbeErrorCode, error: string, stage: Stage, fallback = false): Failure => ({
  kind: 'fail',
  status,
  code,
  error,
  stage,
  fallback
})

/** The target policy stopped a hop (after a redirect, or before the first). */
export const refused = (code: PolicyRefusalCode): Failure => fail('down', code, POLICY_REFUSALS[code], 'response')

export const tooManyRedirects = (): Failure => fail('down', 'too_many_redirects', 'http: too many redirects', 'response')

/** Our own failure: like an unreachable egress, it says nothing about the site, so it ranks at the first stage. */
export const internalFailure = (err: unknown): Failure =>
  fail('error', 'internal', `internal: ${err instanceof Error ? err.message : String(err)}`, 'dns')

/** Code of the error a hop fails with when the probe's own deadline passed before any response. */
const DEADLINE_CODE = 'ERR_PROBE_DEADLINE'

export const deadlineError = (ms: number): Error => Object.assign(new Error(`no response in ${ms} ms`), { code: DEADLINE_CODE })

const EGRESS_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'ENODATA',
  'ETIMEOUT',
  'ESERVFAIL',
  'EREFUSED',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT'
])

/** Resolver codes, as the text names them and as the code does. */
const DNS_ERRORS: Readonly<Record<string, { name: string; code: ProbeErrorCode }>> = {
  ENOTFOUND: { name: 'NXDOMAIN', code: 'dns_nxdomain' },
  ENODATA: { name: 'NODATA', code: 'dns_nodata' },
  EAI_NODATA: { name: 'NODATA', code: 'dns_nodata' },
  ETIMEOUT: { name: 'TIMEOUT', code: 'dns_timeout' },
  ESERVFAIL: { name: 'SERVFAIL', code: 'dns_servfail' },
  EREFUSED: { name: 'REFUSED', code: 'dns_refused' }
}
/** The resolver itself failed: http:// would ask it the same question again, so there is no fallback. */
const RESOLVER_FAILURES = new Set(['ETIMEOUT', 'ESERVFAIL', 'EREFUSED'])

const CONNECT_CODES: Readonly<Record<string, ProbeErrorCode>> = {
  ECONNREFUSED: 'connect_refused',
  EHOSTUNREACH: 'connect_unreachable',
  ENETUNREACH: 'connect_unreachable'
}

function dnsFailure(status: LocationVerdict, resolverCode: string, ours = false): Failure {
  const known = DNS_ERRORS[resolverCode]
  const text = `dns: ${known?.name ?? resolverCode}${ours ? " (this location's resolver)" : ''}`
  return fail(status, known?.code ?? 'dns_failed', text, 'dns', !RESOLVER_FAILURES.has(resolverCode))
}

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null
  const code = e?.code ?? e?.cause?.code
  return typeof code === 'string' ? code : undefined
}

/**
 * The status a proxy answered a CONNECT with, when it was not 200. undici reports it only in the
 * message of a plain UND_ERR_ABORTED ("Proxy response (502) !== 200 when HTTP Tunneling",
 * undici's dispatcher/proxy-agent.js), so this is the one place that reads an error's text.
 */
function refusedConnect(code: string | undefined, err: unknown): string | null {
  if (code !== 'UND_ERR_ABORTED' || !(err instanceof Error)) return null
  return /^Proxy response \((\d+)\)/.exec(err.message)?.[1] ?? null
}

/** A hop's error as a failure: by undici's `UND_ERR_*` codes, Node's errno codes and our dialler's own. */
export function classify(err: unknown, timeoutMs: number, viaProxy: boolean, expired: boolean): Failure {
  const code = codeOf(err)
  if (expired || code === DEADLINE_CODE || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return fail('down', 'timeout', `timeout: no response in ${timeoutMs} ms`, 'deadline')
  }
  if (code === SITE_DNS_CODE) {
    // A proxied location resolves the site here, not in its region: a failure says nothing about
    // the site from there, so the location does not vote (decisions.md, Target policy, second wave).
    return dnsFailure('error', String((err as { dns?: unknown }).dns))
  }
  const proxyStatus = refusedConnect(code, err)
  if (proxyStatus !== null) {
    // 407 means the location's own credentials are wrong, not that the site is unreachable.
    return proxyStatus === '407'
      ? fail('error', 'proxy_auth', 'proxy: 407', 'connect')
      : fail('down', 'proxy_refused', `proxy: ${proxyStatus}`, 'connect', true)
  }
  // Through a tunnel the proxy dials the site and reports failures as a CONNECT status, so a
  // plain dial error can only be about reaching the proxy itself.
  if (viaProxy && code !== undefined && EGRESS_CODES.has(code))
    return fail('error', 'location_egress', 'location: egress unreachable', 'dns')
  if (code === undefined) return internalFailure(err)
  if (code === POLICY_REFUSED_CODE) return refused('policy_non_public')
  // The location's own resolver refusing, silent or broken says nothing about the site: the
  // location's error, never the site's down (NXDOMAIN, NODATA and the name's own SERVFAIL are the site's).
  if (DNS_ERRORS[code] !== undefined || code.startsWith('EAI_')) {
    const ours = (err as Record<string, unknown>)[RESOLVER_FAILED] === true
    return dnsFailure(ours ? 'error' : 'down', code, ours)
  }
  if (isTlsErrorCode(code)) return fail('down', 'tls', `tls: ${code}`, 'tls', true)
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return fail('down', 'connect_timeout', 'connect: timeout', 'connect', true)
  if (code === 'ECONNRESET' || code === 'EPIPE') return fail('down', 'connect_reset', `connect: ${code}`, 'response', true)
  if (code === 'UND_ERR_SOCKET') return fail('down', 'http_empty_reply', 'http: empty reply', 'response', true)
  if (code.startsWith('E')) return fail('down', CONNECT_CODES[code] ?? 'connect_failed', `connect: ${code}`, 'connect', true)
  if (code.startsWith('HPE_') || code.startsWith('UND_ERR_')) return fail('down', 'http_protocol', `http: ${code}`, 'response', true)
  return fail('error', 'internal', `internal: ${code}`, 'dns')
}

/** The verdict on a final answer, with the error's code and text when it is not up. */
export interface Judgement {
  status: LocationVerdict
  code: ProbeErrorCode | null
  error: string | null
}

/**
 * What a final answer says about the site: a challenge or a refusal is blocked, a 5xx down, the rest
 * up. A check's status list, when set, decides instead (a 401 may be what a healthy API answers);
 * an answer then up still fails when its body lacks the check's `body_contains`.
 */
export function judge(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
  expect?: Readonly<LocationExpectations>
): Judgement {
  // Without a status list the probe's own rule goes first; with one, the list replaces it but for
  // a recognised challenge page, which says nothing about the site's own answer.
  const own = expect?.status == null ? judgeAnswer(status, headers, body) : (challenge(status, headers, body) ?? UP)
  if (expect === undefined || own.status !== 'up') return own
  const failure = expectationVerdict(expect, { status, body })
  return failure === null ? UP : { status: 'down', code: failure.code, error: failure.error }
}

const UP: Judgement = { status: 'up', code: null, error: null }

/** A challenge page's verdict; null for any other answer. */
function challenge(status: number, headers: Record<string, string | string[] | undefined>, body: Buffer): Judgement | null {
  const sig = mayBeChallenge(status) ? matchChallenge(status, headers, body.toString('latin1')) : null
  return sig === null ? null : { status: 'blocked', code: 'blocked_challenge', error: `blocked: ${sig.kind} (${sig.vendor})` }
}

/** The probe's own rule, without expectations. */
function judgeAnswer(status: number, headers: Record<string, string | string[] | undefined>, body: Buffer): Judgement {
  const blocked = challenge(status, headers, body)
  if (blocked !== null) return blocked
  if (status === 403 || status === 429) return { status: 'blocked', code: 'blocked_status', error: `blocked: http ${status}` }
  if (status >= 500) return { status: 'down', code: 'http_5xx', error: `http: ${status}` }
  return { status: 'up', code: null, error: null }
}
