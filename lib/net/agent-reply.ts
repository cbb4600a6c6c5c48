import type { LocationVerdict } from '../rules/consensus.js'
import { statusExpected } from '../rules/expectations.js'
import { parseIsoInstant } from '../rules/instants.js'
import { MAX_ASSERTIONS } from '../rules/assertions.js'
import type { CheckSpec } from '../rules/check-spec.js'
import { CODE_VERDICTS, type ProbeErrorCode, type ProbeResult } from '../rules/probe-result.js'
import type { AgentProbeRequest } from './agent-protocol.js'

/*
 * An agent's answer to one probe request, as the protocol's second half (the request is in
 * ./agent-protocol.ts): what the agent sends, and the one schema the central reads it by.
 */

/** The largest answer the central reads; a bigger one is refused unread. */
export const MAX_REPLY_BYTES = 16 * 1024
/** How long a certificate's expiry may lie in the past of the central's clock (clocks differ). */
const CLOCK_SKEW_MS = 86_400_000
/** How much longer than the central waited an agent's own timings may say its probe took (rounding, clocks). */
const TIMING_SLACK_MS = 10
const TEXT = /^\P{Cc}*$/u
const VERDICTS: ReadonlySet<string> = new Set<LocationVerdict>(['up', 'down', 'blocked', 'error'])
const REPLY_KEYS = ['v', 'location', 'domain', 'result']
const RESULT_KEYS = ['status', 'http_code', 'response_ms', 'error', 'code', 'final_url', 'tls_expires_at', 'tls_issuer', 'timings']
/** Keys a result has only for some checks: a `dns` check's answers, a failed assertion's place. */
const OPTIONAL_RESULT_KEYS = ['answers', 'assertion']
const TIMING_KEYS = ['dns', 'connect', 'tls', 'first_byte', 'total'] as const
const WEB_PORTS: ReadonlySet<string> = new Set(['', '80', '443'])

/** One probe's answer as an agent sends it: the protocol's version, whose request it answers, what the probe saw. */
export interface AgentProbeReply {
  v: 1
  location: string
  domain: string
  result: Omit<ProbeResult, 'tls_expires_at' | 'tls_issuer'> & { tls_expires_at: string | null; tls_issuer: string | null }
}

/** What the central knows of the request an answer claims to answer. */
export interface AskedProbe {
  location: string
  request: AgentProbeRequest
  /** How long the request has been out (ms): no probe it answers took longer. */
  elapsedMs: number
  /** The central's clock (ms since the epoch). */
  now: number
}

/** An answer read: the result to count, or why it is not one (a short text for logs, never the answer's content). */
export type ReplyReading = { ok: true; result: ProbeResult } | { ok: false; reason: string }

const bad = (reason: string): ReplyReading => ({ ok: false, reason })

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null
}

/** The key of `value` that is missing from `keys`, or outside them and `optional`; null when it has exactly them. */
function wrongKey(value: Record<string, unknown>, keys: readonly string[], optional: readonly string[] = []): string | null {
  for (const key of keys) if (!(key in value)) return `missing "${key}"`
  for (const key in value) if (!keys.includes(key) && !optional.includes(key)) return `unknown "${key}"`
  return null
}

const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max && TEXT.test(v)
const duration = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0

/**
 * The one schema of an agent's answer, read as untrusted data: exactly its fields, in their bounds,
 * and consistent with each other and with the request it answers. An agent may report the outcome
 * codes a probe produces with the verdicts a probe gives them ({@link CODE_VERDICTS}), never one of
 * the central's own (`location_*`, `agent_*`); an `up` has no error and an answer the request's
 * rule passes; timings add up and fit in the time the request was out; a certificate's expiry is a
 * storable instant a completed handshake can have seen; the final URL one a probe's redirect chain
 * can end on (http or https, ports 80 and 443, no credentials).
 */
export function readProbeReply(data: Uint8Array, asked: AskedProbe): ReplyReading {
  if (data.byteLength > MAX_REPLY_BYTES) return bad(`over ${MAX_REPLY_BYTES} bytes`)
  let parsed: unknown
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data))
  } catch {
    return bad('not JSON')
  }
  const reply = record(parsed)
  if (reply === null) return bad('not an object')
  const shape = wrongKey(reply, REPLY_KEYS)
  if (shape !== null) return bad(shape)
  if (reply.v !== 1) return bad('another protocol version')
  if (reply.location !== asked.location) return bad('another location')
  if (reply.domain !== asked.request.domain) return bad('another domain')
  const r = record(reply.result)
  if (r === null) return bad('no result')
  const fields = wrongKey(r, RESULT_KEYS, OPTIONAL_RESULT_KEYS)
  if (fields !== null) return bad(`result: ${fields}`)
  const { status, code, error, http_code: httpCode, final_url: finalUrl } = r
  if (typeof status !== 'string' || !VERDICTS.has(status)) return bad('status')
  if (!(code === null || (typeof code === 'string' && Object.hasOwn(CODE_VERDICTS, code)))) return bad('code')
  if (!(error === null || text(error, 1000))) return bad('error')
  if (typeof httpCode !== 'number' || !Number.isInteger(httpCode) || httpCode < 0 || httpCode > 999) return bad('http_code')
  const verdict =
    asked.request.check === undefined || asked.request.check.type === 'http'
      ? judgedConsistently(status as LocationVerdict, code as ProbeErrorCode | null, error, httpCode, asked.request)
      : judgedOtherKind(status as LocationVerdict, code as ProbeErrorCode | null, error, httpCode, asked.request.check)
  if (verdict !== null) return bad(verdict)
  const timings = record(r.timings)
  if (timings === null || wrongKey(timings, TIMING_KEYS) !== null) return bad('timings')
  const t = timings as Record<(typeof TIMING_KEYS)[number], unknown>
  if (!TIMING_KEYS.every((k) => duration(t[k]))) return bad('timings')
  const times = t as Record<(typeof TIMING_KEYS)[number], number>
  const phases = times.dns + times.connect + times.tls + times.first_byte
  if (r.response_ms !== times.total || phases > times.total + 1) return bad('timings do not add up')
  if (times.total > asked.elapsedMs + TIMING_SLACK_MS) return bad('timings longer than the request was out')
  const check = asked.request.check
  const web = check === undefined || check.type === 'http'
  if (web ? !(finalUrl === null || webUrl(finalUrl)) : finalUrl !== null) return bad('final_url')
  if (web && status === 'up' && finalUrl === null) return bad('final_url')
  const expires = r.tls_expires_at
  let expiresAt: string | null = null
  if (expires !== null) {
    const at = typeof expires === 'string' ? parseIsoInstant(expires) : null
    if (at === null || at.getTime() < asked.now - CLOCK_SKEW_MS) return bad('tls_expires_at')
    // A handshake happened: an https hop, or a TLS (or TCP over TLS) check.
    const secure = web
      ? typeof finalUrl === 'string' && finalUrl.startsWith('https:')
      : check.type === 'tls' || (check.type === 'tcp' && check.tls)
    if (!secure) return bad('tls_expires_at without a handshake')
    expiresAt = at.toISOString()
  }
  const issuer = r.tls_issuer
  if (!(issuer === null || (text(issuer, 512) && expiresAt !== null))) return bad('tls_issuer')
  const { answers, assertion } = r
  if (
    answers !== undefined &&
    (check?.type !== 'dns' || !(Array.isArray(answers) && answers.length <= 50 && answers.every((a) => text(a, 512))))
  )
    return bad('answers')
  const asserted = code === 'assertion_failed'
  if (asserted !== (assertion !== undefined)) return bad('assertion')
  const listed = check?.assertions.length ?? 0
  if (
    assertion !== undefined &&
    !(Number.isInteger(assertion) && (assertion as number) >= 0 && (assertion as number) < Math.min(listed, MAX_ASSERTIONS))
  )
    return bad('assertion')
  return {
    ok: true,
    result: {
      status: status as LocationVerdict,
      http_code: httpCode,
      response_ms: times.total,
      error: error,
      code: code as ProbeErrorCode | null,
      final_url: finalUrl as string | null,
      tls_expires_at: expiresAt,
      tls_issuer: issuer,
      timings: { dns: times.dns, connect: times.connect, tls: times.tls, first_byte: times.first_byte, total: times.total },
      ...(answers === undefined ? {} : { answers: answers }),
      ...(assertion === undefined ? {} : { assertion: assertion as number })
    }
  }
}

/** Why a verdict, its code and its HTTP status do not fit each other and the request; null when they do. */
function judgedConsistently(
  status: LocationVerdict,
  code: ProbeErrorCode | null,
  error: unknown,
  httpCode: number,
  request: AgentProbeRequest
): string | null {
  const expected = request.expect?.status ?? null
  if (status === 'up') {
    if (code !== null || error !== null) return 'up with an error'
    if (httpCode < 100) return 'up without an HTTP status'
    // The probe's own rule, or the request's list, must pass the status an `up` reports.
    if (expected !== null) return statusExpected(expected, httpCode) === true ? null : 'up with a status the request does not expect'
    return httpCode >= 500 || httpCode === 403 || httpCode === 429 ? 'up with a failing status' : null
  }
  if (code === null || error === null) return `${status} without a code and an error`
  if (!CODE_VERDICTS[code].includes(status)) return `${status} with code ${code}`
  if (code === 'unexpected_status' && expected === null) return 'unexpected_status without a status list'
  if (code === 'body_mismatch' && request.expect?.body_contains === undefined) return 'body_mismatch without body_contains'
  if (code === 'http_5xx' && httpCode < 500) return 'http_5xx without a 5xx'
  if (code === 'assertion_failed' && (request.check?.assertions.length ?? 0) === 0) return 'assertion_failed without assertions'
  if (KIND_CODES[code] !== undefined) return `${code} from an http check`
  return null
}

/** The codes only a kind of check other than `http` reports. */
const KIND_CODES: Readonly<Partial<Record<ProbeErrorCode, CheckSpec['type']>>> = {
  reply_mismatch: 'tcp',
  dns_rcode: 'dns',
  dns_answer_mismatch: 'dns'
}

/** As {@link judgedConsistently}, for a `tcp`, `tls` or `dns` check: no HTTP status, and its kind's codes. */
function judgedOtherKind(
  status: LocationVerdict,
  code: ProbeErrorCode | null,
  error: unknown,
  httpCode: number,
  check: Exclude<CheckSpec, { type: 'http' }>
): string | null {
  if (httpCode !== 0) return `an HTTP status from a ${check.type} check`
  if (status === 'up') return code !== null || error !== null ? 'up with an error' : null
  if (code === null || error === null) return `${status} without a code and an error`
  if (!CODE_VERDICTS[code].includes(status)) return `${status} with code ${code}`
  const only = KIND_CODES[code]
  if (only !== undefined && only !== check.type) return `${code} from a ${check.type} check`
  if (code === 'assertion_failed' && check.assertions.length === 0) return 'assertion_failed without assertions'
  const http = [
    'unexpected_status',
    'body_mismatch',
    'http_5xx',
    'http_empty_reply',
    'http_protocol',
    'too_many_redirects',
    'blocked_challenge',
    'blocked_status'
  ]
  if (http.includes(code)) return `${code} from a ${check.type} check`
  return null
}

/** Whether `value` is a URL a probe's redirect chain may end on. */
function webUrl(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 4096) return false
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return false
  }
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' && WEB_PORTS.has(url.port)
}
