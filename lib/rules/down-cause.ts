/**
 * Why a check was not clean, from its locations' answers: each failing location's error text, code
 * and HTTP status, and one line of words over them ("HTTP 500 from 3 of 3 locations"); null when
 * every location saw the site up. Bounded, as it is stored with the site's state and its outages.
 */
import type { LocationVerdict } from './consensus.js'

/** One location's failure as the status record and the outages keep it. */
export interface LocationCause {
  location: string
  status: Exclude<LocationVerdict, 'up'>
  /** The probe's code (lib/rules/probe-result.ts), null when the prober gave none. */
  code: string | null
  /** The probe's error text (`http: 500`, `connect: ECONNREFUSED`). */
  error: string
  /** The last HTTP status the location got; 0 when none. */
  http_code: number
}

/** A check's cause: its failing locations and the words they add up to. */
export interface DownCause {
  /** "HTTP 500 from 3 of 3 locations", "connection refused from 2 of 3 locations". */
  summary: string
  locations: LocationCause[]
}

/** Bounds: the stored text stays well under {@link CAUSE_MAX_CHARS}. */
const MAX_LOCATIONS = 8
const MAX_LABEL = 100
const MAX_ERROR = 160
/** The stored JSON's column width. */
export const CAUSE_MAX_CHARS = 4096

const VERDICTS = new Set<LocationVerdict>(['down', 'blocked', 'error'])

const WORDS: Readonly<Record<string, string>> = {
  connect_refused: 'connection refused',
  connect_reset: 'connection reset',
  connect_unreachable: 'network unreachable',
  connect_timeout: 'connection timed out',
  connect_failed: 'connection failed',
  timeout: 'no answer in time',
  tls: 'TLS handshake failed',
  dns_nxdomain: 'domain does not exist (NXDOMAIN)',
  dns_nodata: 'no address for the name',
  dns_timeout: 'resolver did not answer',
  dns_servfail: 'resolver failure (SERVFAIL)',
  dns_refused: 'resolver refused (REFUSED)',
  http_empty_reply: 'empty reply',
  http_protocol: 'broken HTTP answer',
  too_many_redirects: 'too many redirects',
  blocked_challenge: 'bot challenge',
  body_mismatch: 'expected text missing',
  location_egress: "location's egress unreachable",
  proxy_auth: "location's proxy refused its credentials",
  policy_non_public: 'address not public',
  policy_port: 'port not allowed',
  internal: 'probe failed'
}

const HTTP_CODES = new Set(['http_5xx', 'unexpected_status', 'blocked_status'])

/** One location's failure in a few words: "HTTP 500", "connection refused", or its own error text. */
export function causeWords(cause: Pick<LocationCause, 'code' | 'error' | 'http_code'>): string {
  if (cause.code !== null && HTTP_CODES.has(cause.code) && cause.http_code > 0) return `HTTP ${cause.http_code}`
  return (cause.code === null ? undefined : WORDS[cause.code]) ?? cause.error
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

function locationCause(raw: unknown): LocationCause | null {
  if (typeof raw !== 'object' || raw === null) return null
  const r = raw as Record<string, unknown>
  const status = r.status as LocationVerdict
  if (!VERDICTS.has(status)) return null
  return {
    location: clip(typeof r.location === 'string' ? r.location : '?', MAX_LABEL),
    status: status as LocationCause['status'],
    code: typeof r.code === 'string' ? clip(r.code, 40) : null,
    error: clip(typeof r.error === 'string' && r.error !== '' ? r.error : status, MAX_ERROR),
    http_code: typeof r.http_code === 'number' && Number.isInteger(r.http_code) && r.http_code >= 0 && r.http_code < 1000 ? r.http_code : 0
  }
}

/**
 * The cause of a check from its locations' answers (read as untrusted: an agent's answer is one),
 * or null when no location failed. The summary names the most common failure, ties to the first.
 */
export function downCause(locations: readonly unknown[]): DownCause | null {
  const failing = locations.map(locationCause).filter((c): c is LocationCause => c !== null)
  if (failing.length === 0) return null
  const counts = new Map<string, number>()
  for (const c of failing) {
    const words = causeWords(c)
    counts.set(words, (counts.get(words) ?? 0) + 1)
  }
  let [top, n] = ['', 0]
  for (const [words, count] of counts) if (count > n) [top, n] = [words, count]
  const total = locations.length
  return {
    summary: `${clip(top, MAX_ERROR)} from ${n} of ${total} location${total === 1 ? '' : 's'}`,
    locations: failing.slice(0, MAX_LOCATIONS)
  }
}

/** The cause as stored: JSON text, null for none. */
export function causeText(cause: DownCause | null): string | null {
  return cause === null ? null : JSON.stringify(cause)
}

/** A stored cause read back; null when absent or not one (never throws on a bad row). */
export function parseCause(text: unknown): DownCause | null {
  if (typeof text !== 'string' || text === '') return null
  try {
    const v = JSON.parse(text) as { summary?: unknown; locations?: unknown }
    if (typeof v.summary !== 'string' || !Array.isArray(v.locations)) return null
    return { summary: v.summary, locations: v.locations.map(locationCause).filter((c): c is LocationCause => c !== null) }
  } catch {
    return null
  }
}

/** Codes whose error text is made of fixed words and numbers only: safe to show on a public page. */
const PLAIN_TEXT_CODES = new Set([
  'http_5xx',
  'blocked_status',
  'connect_refused',
  'connect_reset',
  'connect_unreachable',
  'connect_timeout',
  'connect_failed',
  'timeout',
  'tls',
  'dns_nxdomain',
  'dns_nodata',
  'dns_timeout',
  'dns_servfail',
  'dns_refused',
  'http_empty_reply',
  'http_protocol',
  'too_many_redirects'
])

/** A cause as a public status page shows it: no location names, no text that may name the site. */
export interface PublicCause {
  summary: string
  /** The failing locations' distinct error texts (`http: 500`), for codes whose text is plain. */
  errors: string[]
}

/**
 * The public part of a cause. Error texts that may carry the site's name (an internal error's
 * message, DNS answers) are left out, so a page that shows a display name never reveals the domain.
 */
export function publicCause(cause: DownCause | null): PublicCause | null {
  if (cause === null) return null
  const errors = new Set<string>()
  for (const l of cause.locations) if (l.code !== null && PLAIN_TEXT_CODES.has(l.code)) errors.add(l.error)
  return { summary: cause.summary, errors: [...errors] }
}
