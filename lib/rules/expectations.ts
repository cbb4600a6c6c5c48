import Joi from 'joi'
import { validated, type Validated } from './validated.js'

/**
 * A site's `expect` setting: the status codes a healthy answer has, a literal text its body holds,
 * and the response time over which it is slow. One location's final answer meets it or fails it
 * with a stable code; the quorum then counts that location as down like any other failure.
 */

/** How much of the body `body_contains` is searched in; the probe reads no more. */
export const BODY_SEARCH_BYTES = 64 * 1024
/** The longest `body_contains`, in UTF-8 bytes. */
export const MAX_BODY_CONTAINS_BYTES = 256
/** The largest `max_response_ms`: two minutes, beyond any probe's deadline. */
export const MAX_RESPONSE_MS_LIMIT = 120_000
/** The most entries a status list may have; ranges make a longer one unnecessary. */
export const MAX_STATUS_ENTRIES = 50

/** One entry of a status list: a code (`401`) or an inclusive range (`"200-299"`). */
export type StatusEntry = number | string

/**
 * The setting in its normal form; null means not set. `status` is sorted, with overlapping and
 * adjacent entries merged, a one-code range written as the code (`["200-299", 401]`).
 */
export interface Expectations {
  status: StatusEntry[] | null
  body_contains: string | null
  max_response_ms: number | null
}

/** The part of the setting a location judges: response time is the site's, read from the consensus. */
export type LocationExpectations = Pick<Expectations, 'status' | 'body_contains'>

/** What a request may send: any of the keys, each null to clear it. */
export type ExpectationsPatch = Partial<Expectations>

export const NO_EXPECTATIONS: Readonly<Expectations> = Object.freeze({ status: null, body_contains: null, max_response_ms: null })

/** Whether two settings in normal form are the same. */
export function sameExpectations(a: Readonly<Expectations>, b: Readonly<Expectations>): boolean {
  return (
    a.body_contains === b.body_contains && a.max_response_ms === b.max_response_ms && JSON.stringify(a.status) === JSON.stringify(b.status)
  )
}

/** Why an answer fails the setting; `error` is the short stable text a location result carries. */
export interface ExpectationFailure {
  code: 'unexpected_status' | 'body_mismatch'
  error: string
}

const RANGE = /^([1-5]\d\d)-([1-5]\d\d)$/
const STATUS_MESSAGE = '"expect.status" must list status codes 100-599 and ranges such as "200-299"'

/** An entry as an inclusive range; null when it is not one a list may hold. */
function entryRange(entry: unknown): [number, number] | null {
  if (typeof entry === 'number') return Number.isInteger(entry) && entry >= 100 && entry <= 599 ? [entry, entry] : null
  if (typeof entry !== 'string') return null
  const m = RANGE.exec(entry)
  if (!m) return null
  const lo = Number(m[1])
  const hi = Number(m[2])
  return lo <= hi ? [lo, hi] : null
}

/** Sorted, merged ranges of a list whose entries are valid. */
function mergedRanges(entries: readonly StatusEntry[]): Array<[number, number]> {
  const ranges = entries.map(entryRange).filter((r): r is [number, number] => r !== null)
  ranges.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const merged: Array<[number, number]> = []
  for (const [lo, hi] of ranges) {
    const last = merged[merged.length - 1]
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi)
    else merged.push([lo, hi])
  }
  return merged
}

/** A status list in its normal form: sorted and merged, `[200, "201-299"]` as `["200-299"]`. */
export function normaliseStatusList(entries: readonly StatusEntry[]): StatusEntry[] {
  return mergedRanges(entries).map(([lo, hi]) => (lo === hi ? lo : `${lo}-${hi}`))
}

/** A status list as the operator tool takes it (`200,300-399`): entries split on commas, codes as numbers. */
export function parseStatusList(text: string): StatusEntry[] {
  return text.split(',').map((part) => {
    const entry = part.trim()
    return /^\d+$/.test(entry) ? Number(entry) : entry
  })
}

const statusEntry = Joi.any()
  .custom((value: unknown, helpers) => (entryRange(value) === null ? helpers.error('any.invalid') : value))
  .messages({ 'any.invalid': STATUS_MESSAGE })

/**
 * The `expect` object of `POST`/`PATCH /api/v1/sites` and the operator tool; each key may be null
 * (clear it), unknown keys are refused. Validated values are in their normal form.
 */
export const expectSchema = Joi.object({
  status: Joi.array()
    .items(statusEntry)
    .min(1)
    .max(MAX_STATUS_ENTRIES)
    .allow(null)
    .custom((value: StatusEntry[]) => normaliseStatusList(value))
    .messages({
      'array.base': STATUS_MESSAGE,
      'array.min': '"expect.status" must list at least one status code or range (null clears it)',
      'array.max': `"expect.status" may have at most ${MAX_STATUS_ENTRIES} entries`
    }),
  body_contains: Joi.string()
    .allow(null)
    .custom((value: string, helpers) =>
      Buffer.byteLength(value, 'utf8') > MAX_BODY_CONTAINS_BYTES ? helpers.error('string.bytes') : value
    )
    .messages({
      'string.base': '"expect.body_contains" must be a string',
      'string.empty': '"expect.body_contains" must not be empty (null clears it)',
      'string.bytes': `"expect.body_contains" must be at most ${MAX_BODY_CONTAINS_BYTES} bytes in UTF-8`
    }),
  max_response_ms: Joi.number()
    .integer()
    .min(1)
    .max(MAX_RESPONSE_MS_LIMIT)
    .allow(null)
    .messages({
      'number.base': `"expect.max_response_ms" must be a whole number of milliseconds from 1 to ${MAX_RESPONSE_MS_LIMIT}`,
      'number.integer': `"expect.max_response_ms" must be a whole number of milliseconds from 1 to ${MAX_RESPONSE_MS_LIMIT}`,
      'number.min': `"expect.max_response_ms" must be a whole number of milliseconds from 1 to ${MAX_RESPONSE_MS_LIMIT}`,
      'number.max': `"expect.max_response_ms" must be a whole number of milliseconds from 1 to ${MAX_RESPONSE_MS_LIMIT}`
    })
})
  .unknown(false)
  // Strict in routes too: "2000" for a number is refused, as the operator tool refuses it.
  .prefs({ convert: false })
  .messages({
    'object.base': '"expect" must be an object with "status", "body_contains" or "max_response_ms"',
    'object.unknown': '"expect" may hold only "status", "body_contains" and "max_response_ms", not "{{#child}}"'
  })

export type ParsedExpectations = Validated<ExpectationsPatch>

/** Validates a value outside a route (the operator tool): its normal form, or the 400 message. */
export function parseExpectations(input: unknown): ParsedExpectations {
  return validated<ExpectationsPatch>(expectSchema, input)
}

/** What a check asks for when it sends `expect`: the setting from nothing, null when it sets no key. */
export function checkExpectations(patch: ExpectationsPatch | undefined): Expectations | null {
  if (patch === undefined) return null
  const expect = applyExpectations(NO_EXPECTATIONS, patch)
  return expect.status === null && expect.body_contains === null && expect.max_response_ms === null ? null : expect
}

/** The setting after a change: keys absent keep their value, null clears one. */
export function applyExpectations(current: Readonly<Expectations>, patch: ExpectationsPatch): Expectations {
  return {
    status: patch.status === undefined ? current.status : patch.status,
    body_contains: patch.body_contains === undefined ? current.body_contains : patch.body_contains,
    max_response_ms: patch.max_response_ms === undefined ? current.max_response_ms : patch.max_response_ms
  }
}

/**
 * Whether a final status is one the list allows. Null when no list is set: the probe's own rule
 * decides then, as before the setting existed (below 500 up, 403/429 and challenge pages blocked).
 */
export function statusExpected(status: readonly StatusEntry[] | null, code: number): boolean | null {
  if (status === null) return null
  // Entries are read as they are: a list in its normal form needs no sorting or merging again.
  return status.some((entry) => {
    const range = entryRange(entry)
    return range !== null && code >= range[0] && code <= range[1]
  })
}

/** Whether the first 64 KiB of a body hold the text's UTF-8 bytes, whole. */
export function bodyContains(body: Uint8Array, text: string): boolean {
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, BODY_SEARCH_BYTES))
  return head.indexOf(Buffer.from(text, 'utf8')) !== -1
}

/**
 * One location's final answer (status after redirects, the body's first 64 KiB) against the
 * setting: null when it meets it, else the first expectation it fails, status before body.
 * Response time is not judged here: slowness is the site's, read from the consensus (slow.ts).
 */
export function expectationVerdict(
  expect: Readonly<LocationExpectations>,
  answer: { status: number; body: Uint8Array }
): ExpectationFailure | null {
  if (statusExpected(expect.status, answer.status) === false) {
    return { code: 'unexpected_status', error: `expect: status ${answer.status}` }
  }
  if (expect.body_contains !== null && !bodyContains(answer.body, expect.body_contains)) {
    return { code: 'body_mismatch', error: 'expect: body_contains not found' }
  }
  return null
}
