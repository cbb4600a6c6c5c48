import { RE2JS } from 're2js'
import { evaluateJsonPath, parseJsonPath, type JsonPath } from './json-path.js'

/**
 * Assertions on a check's answer, in Checkly's shape: `{source, property?, comparison, target}`. A
 * location judges its own answer by the list (the first that fails says why: `assertion_failed`),
 * and the quorum counts it as any other failure. Regular expressions run on RE2JS, linear in the
 * text whatever the pattern (no backtracking, so no ReDoS); JSONPath is a bounded subset
 * (./json-path.ts); every text compared is bounded.
 */

export const ASSERTION_SOURCES = ['status_code', 'header', 'json_body', 'text_body', 'response_time', 'certificate_days'] as const
export const COMPARISONS = [
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'less_than',
  'greater_than',
  'is_empty',
  'not_empty',
  'matches'
] as const
export type AssertionSource = (typeof ASSERTION_SOURCES)[number]
export type Comparison = (typeof COMPARISONS)[number]

/** One assertion in its normal form: `property` only for `header` and `json_body`, `target` a text (null for the emptiness tests). */
export interface Assertion {
  source: AssertionSource
  property: string | null
  comparison: Comparison
  target: string | null
}

/** Assertions a check may have. */
export const MAX_ASSERTIONS = 20
/** The longest target (and pattern). */
export const MAX_TARGET_LENGTH = 256
/** How much of a text an assertion reads: a body's first 64 KiB, as `body_contains` does. */
export const ASSERTED_TEXT_BYTES = 64 * 1024
/** The largest body parsed for `json_body`. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024

/** What an answer offers the assertions. */
export interface Answered {
  status: number
  headers: Readonly<Record<string, string | string[] | undefined>>
  body: Uint8Array
  responseMs: number
  /** Whole days the certificate has left; null without a TLS handshake. */
  certificateDays: number | null
}

/** The first assertion that failed: its place in the list, and the short text a location result carries. */
export interface AssertionFailure {
  index: number
  error: string
}

const patterns = new Map<string, RE2JS>()

/** A pattern compiled once (at most 1,000 kept); null when RE2 does not take it. */
export function compilePattern(pattern: string): RE2JS | null {
  let re = patterns.get(pattern)
  if (re !== undefined) return re
  try {
    re = RE2JS.compile(pattern)
  } catch {
    return null
  }
  if (patterns.size >= 1000) patterns.clear()
  patterns.set(pattern, re)
  return re
}

const paths = new Map<string, JsonPath | null>()
function pathOf(text: string): JsonPath | null {
  let path = paths.get(text)
  if (path === undefined) {
    path = parseJsonPath(text)
    if (paths.size >= 1000) paths.clear()
    paths.set(text, path)
  }
  return path
}

/** The text of a value as assertions compare it: a string as it is, anything else as JSON. */
function textOf(value: unknown): string {
  // JSON.stringify answers undefined for undefined (and functions), whatever its type says.
  const json = JSON.stringify(value) as string | undefined
  return typeof value === 'string' ? value : (json ?? '')
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true
  if (Array.isArray(value)) return value.length === 0
  return typeof value === 'object' && Object.keys(value).length === 0
}

/** Whether `actual` passes `comparison` with `target`. */
export function compare(actual: unknown, comparison: Comparison, target: string | null): boolean {
  const t = target ?? ''
  switch (comparison) {
    case 'is_empty':
      return isEmpty(actual)
    case 'not_empty':
      return !isEmpty(actual)
    case 'equals':
      return actual !== undefined && (typeof actual === 'number' ? actual === Number(t) && t.trim() !== '' : textOf(actual) === t)
    case 'not_equals':
      return !compare(actual, 'equals', target)
    case 'contains':
      if (Array.isArray(actual)) return actual.some((v) => textOf(v) === t)
      return actual !== undefined && textOf(actual).slice(0, ASSERTED_TEXT_BYTES).includes(t)
    case 'not_contains':
      return !compare(actual, 'contains', target)
    case 'less_than':
    case 'greater_than': {
      const a = typeof actual === 'number' ? actual : typeof actual === 'string' && actual.trim() !== '' ? Number(actual) : Number.NaN
      const b = t.trim() === '' ? Number.NaN : Number(t)
      if (Number.isNaN(a) || Number.isNaN(b)) return false
      return comparison === 'less_than' ? a < b : a > b
    }
    case 'matches':
      return actual !== undefined && (compilePattern(t)?.matcher(textOf(actual).slice(0, ASSERTED_TEXT_BYTES)).find() ?? false)
  }
}

/** The value an assertion reads from an answer; `json` parses the body once for all its assertions. */
function actualOf(a: Assertion, answered: Answered, json: () => { ok: boolean; value: unknown }): unknown {
  switch (a.source) {
    case 'status_code':
      return answered.status
    case 'response_time':
      return answered.responseMs
    case 'certificate_days':
      return answered.certificateDays ?? undefined
    case 'header': {
      const value = answered.headers[(a.property ?? '').toLowerCase()]
      return Array.isArray(value) ? value.join(', ') : value
    }
    case 'text_body':
      return new TextDecoder().decode(answered.body.subarray(0, ASSERTED_TEXT_BYTES))
    case 'json_body': {
      const parsed = json()
      const path = pathOf(a.property ?? '$')
      if (!parsed.ok || path === null) return undefined
      return evaluateJsonPath(path, parsed.value)[0]
    }
  }
}

const shown = (value: unknown): string => {
  if (value === undefined) return 'nothing'
  const text = (JSON.stringify(value) as string | undefined) ?? 'nothing'
  return text.length > 100 ? `${text.slice(0, 99)}…` : text
}

/** The first assertion the answer fails, or null when it passes them all. */
export function failedAssertion(assertions: readonly Assertion[], answered: Answered): AssertionFailure | null {
  let parsed: { ok: boolean; value: unknown } | null = null
  const json = (): { ok: boolean; value: unknown } => {
    if (parsed !== null) return parsed
    try {
      const bytes = answered.body.subarray(0, MAX_JSON_BODY_BYTES)
      parsed = { ok: true, value: JSON.parse(new TextDecoder().decode(bytes)) as unknown }
    } catch {
      parsed = { ok: false, value: undefined }
    }
    return parsed
  }
  for (const [index, a] of assertions.entries()) {
    const actual = actualOf(a, answered, json)
    if (compare(actual, a.comparison, a.target)) continue
    const what = [a.source, a.property, a.comparison, a.target === null ? null : JSON.stringify(a.target)]
      .filter((p) => p !== null)
      .join(' ')
    const got = a.source === 'json_body' && !json().ok ? 'a body that is not JSON' : shown(actual)
    return { index, error: `assert: ${what} (got ${got})` }
  }
  return null
}

/** Whether an answer's body must be kept (and how much of it) for these assertions. */
export function bodyNeeded(assertions: readonly Assertion[]): number {
  let bytes = 0
  for (const a of assertions) {
    if (a.source === 'json_body') bytes = Math.max(bytes, MAX_JSON_BODY_BYTES)
    else if (a.source === 'text_body') bytes = Math.max(bytes, ASSERTED_TEXT_BYTES)
  }
  return bytes
}
