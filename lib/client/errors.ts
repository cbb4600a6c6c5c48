/**
 * The client's one error. The server's error body is `{"error": text}` alone, so the stable code a
 * caller branches on comes from the status (docs/decisions.md, Client); `malformed_answer` is the
 * client's own, for an answer it cannot read.
 */

/** What a failed call was, stable across server versions; match on this, not on the message. */
export type SiteStatusErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'unavailable'
  | 'client_error'
  | 'server_error'
  | 'network_error'
  | 'malformed_answer'

const CODES: Readonly<Record<number, SiteStatusErrorCode>> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'unavailable'
}

/** The code of an HTTP status; 0 stands for no answer at all. */
export function codeOf(status: number): SiteStatusErrorCode {
  if (status === 0) return 'network_error'
  return CODES[status] ?? (status < 500 ? 'client_error' : 'server_error')
}

/**
 * A call that failed after its retries: the server's status (0 when no answer came, or it broke
 * off), a stable `code`, the server's error text as `message`, and `retryAfterS` when the server
 * (or the key's spent budget) said how long to wait. An answer the client cannot read (a stream
 * line that is not the document's JSON) keeps its status, with the code `malformed_answer`. Never
 * holds the key.
 */
export class SiteStatusError extends Error {
  readonly status: number
  readonly code: SiteStatusErrorCode
  /** Seconds to wait before trying again, from Retry-After; undefined when not given. */
  readonly retryAfterS: number | undefined
  /** The error's JSON body as the server sent it (a 429 of a batch says how many domains `fits`). */
  readonly body: unknown

  constructor({
    status,
    code,
    message,
    retryAfterS,
    body,
    cause
  }: {
    status: number
    /** The code when it is not the status's own (`malformed_answer`). */
    code?: SiteStatusErrorCode
    message: string
    retryAfterS?: number
    body?: unknown
    cause?: unknown
  }) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'SiteStatusError'
    this.status = status
    this.code = code ?? codeOf(status)
    this.retryAfterS = retryAfterS
    this.body = body
  }
}

/**
 * Retry-After in whole seconds, in either of its forms (RFC 9110): delta-seconds, as this server
 * sends it, or an HTTP-date (as a proxy in front of it may), counted from `nowMs` and rounded up
 * (a date past is 0). Undefined when absent or neither.
 */
export function retryAfterOf(headers: Headers, nowMs: number = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim()
  if (value === undefined || value === '') return undefined
  if (/^\d+$/.test(value)) return Number(value)
  // Every HTTP-date form names its day or month in letters; a bare number is no date.
  const at = /[a-z]/i.test(value) ? Date.parse(value) : NaN
  if (!Number.isFinite(at)) return undefined
  return Math.max(0, Math.ceil((at - nowMs) / 1000))
}

/** The error an answer with a 4xx/5xx status stands for, its body read; `nowMs` dates Retry-After. */
export async function errorFromResponse(res: Response, nowMs?: number): Promise<SiteStatusError> {
  const text = await res.text().catch(() => '')
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  const error = (body as { error?: unknown } | undefined)?.error
  const message = typeof error === 'string' && error !== '' ? error : `${res.status} ${res.statusText}`.trim()
  return new SiteStatusError({ status: res.status, message, retryAfterS: retryAfterOf(res.headers, nowMs), body })
}
