import { createHash } from 'node:crypto'
import Joi from 'joi'
import {
  ASSERTION_SOURCES,
  COMPARISONS,
  compilePattern,
  MAX_ASSERTIONS,
  MAX_TARGET_LENGTH,
  type Assertion,
  type AssertionSource
} from './assertions.js'
import { parseJsonPath } from './json-path.js'

/**
 * What a check does at each location, one shape for every kind (docs/decisions.md, "Checks beyond
 * a GET"): `http` (today's web check, with the request it sends and assertions on the answer),
 * `tcp` (a connection to a port, optionally TLS, a line sent and a reply's start expected), `tls`
 * (a handshake on a port: chain, host name, days left) and `dns` (a record asked of the location's
 * own resolvers). Without one, a check is the web check as it always was: `GET /` over https, then
 * http. The same rule reads on-demand checks, tracked monitors and what the agents are sent.
 */

export const CHECK_TYPES = ['http', 'tcp', 'tls', 'dns'] as const
export type CheckType = (typeof CHECK_TYPES)[number]
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const
export type Method = (typeof METHODS)[number]
export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'CAA', 'SRV'] as const
export type RecordType = (typeof RECORD_TYPES)[number]
/** The answers a DNS check may expect: the rcodes a resolver's answer is read as. */
export const RCODES = ['NOERROR', 'NXDOMAIN', 'SERVFAIL', 'REFUSED'] as const
export type Rcode = (typeof RCODES)[number]

export const MAX_HEADERS = 20
export const MAX_BODY_BYTES = 16 * 1024
export const MAX_PATH_LENGTH = 2048
export const MAX_SEND_BYTES = 4096
export const MAX_EXPECT_PREFIX_BYTES = 1024
export const MAX_DNS_EXPECT = 20

/** Headers whose values are always secrets: stored sealed, never shown back, never logged. */
export const ALWAYS_SECRET = ['authorization', 'cookie'] as const
/** What shows instead of a secret header's value. */
export const SECRET_MASK = '********'
/** Headers a check may not set: the connection's own (hop-by-hop), its length, and its host. */
const REFUSED_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade'
])
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

export interface HttpCheck {
  type: 'http'
  method: Method
  /** Path and query, from `/`. */
  path: string
  /** Header names in lower case. */
  headers: Record<string, string>
  /** The headers (lower case) whose values are secrets: `authorization` and `cookie` always, when set. */
  secret_headers: string[]
  body: string | null
  assertions: Assertion[]
}
export interface TcpCheck {
  type: 'tcp'
  port: number
  send: string | null
  expect_prefix: string | null
  tls: boolean
  assertions: Assertion[]
}
export interface TlsCheck {
  type: 'tls'
  port: number
  assertions: Assertion[]
}
export interface DnsCheck {
  type: 'dns'
  record: RecordType
  /** The answers expected (as a set, in the record's text form); null: any answer. */
  expect: string[] | null
  rcode: Rcode
  assertions: Assertion[]
}
export type CheckSpec = HttpCheck | TcpCheck | TlsCheck | DnsCheck

/** The sources each kind's assertions may read. */
export const SOURCES_BY_TYPE: Readonly<Record<CheckType, readonly AssertionSource[]>> = {
  http: ASSERTION_SOURCES,
  tcp: ['response_time', 'text_body', 'certificate_days'],
  tls: ['response_time', 'certificate_days'],
  dns: ['response_time', 'text_body']
}

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8')

const assertionSchema = Joi.object({
  source: Joi.string()
    .valid(...ASSERTION_SOURCES)
    .required(),
  // null as absent: the normal form says null, and it must read back as itself.
  property: Joi.string().max(256).allow(null),
  comparison: Joi.string()
    .valid(...COMPARISONS)
    .required(),
  target: Joi.alternatives(Joi.string().max(MAX_TARGET_LENGTH).allow(''), Joi.number()).allow(null)
})
  .unknown(false)
  .custom(
    (
      value: { source: AssertionSource; property?: string | null; comparison: Assertion['comparison']; target?: string | number | null },
      helpers
    ) => {
      const { source, comparison } = value
      const property = value.property ?? null
      const target = value.target === undefined || value.target === null ? null : String(value.target)
      if (source === 'header' && (property === null || !TOKEN.test(property))) return helpers.error('assertion.header')
      if (source === 'json_body' && (property === null || parseJsonPath(property) === null)) return helpers.error('assertion.path')
      if (source !== 'header' && source !== 'json_body' && property !== null) return helpers.error('assertion.property')
      const empty = comparison === 'is_empty' || comparison === 'not_empty'
      if (empty !== (target === null)) return helpers.error(empty ? 'assertion.noTarget' : 'assertion.target')
      if (
        (comparison === 'less_than' || comparison === 'greater_than') &&
        (target === null || target.trim() === '' || Number.isNaN(Number(target)))
      )
        return helpers.error('assertion.number')
      if (comparison === 'matches' && (target === null || compilePattern(target) === null)) return helpers.error('assertion.pattern')
      return {
        source,
        property: source === 'header' ? (property?.toLowerCase() ?? null) : property,
        comparison,
        target
      } satisfies Assertion
    }
  )
  .messages({
    'assertion.header': '"property" of a header assertion must be a header name',
    'assertion.path': '"property" of a json_body assertion must be a JSONPath such as $.status or $.items[0].id',
    'assertion.property': '"property" is only for header and json_body assertions',
    'assertion.noTarget': '"target" is not taken by is_empty and not_empty',
    'assertion.target': '"target" is required',
    'assertion.number': '"target" of less_than and greater_than must be a number',
    'assertion.pattern': '"target" of matches must be a regular expression RE2 accepts'
  })

const assertionsSchema = Joi.array().items(assertionSchema).max(MAX_ASSERTIONS).default([])

const port = Joi.number().integer().min(1).max(65535)

const httpSchema = Joi.object({
  type: Joi.string().valid('http').required(),
  method: Joi.string()
    .valid(...METHODS)
    .default('GET'),
  path: Joi.string()
    .max(MAX_PATH_LENGTH)
    .pattern(/^\/[\x21-\x7e]*$/)
    .default('/')
    .messages({ 'string.pattern.base': '"path" must start with / and hold printable characters without spaces (encode them)' }),
  headers: Joi.object().pattern(Joi.string(), Joi.string().max(4096).allow('')).default({}),
  secret_headers: Joi.array().items(Joi.string().max(256)).max(MAX_HEADERS).default([]),
  body: Joi.string().allow('').allow(null).default(null),
  assertions: assertionsSchema
}).unknown(false)

const tcpSchema = Joi.object({
  type: Joi.string().valid('tcp').required(),
  port: port.required(),
  send: Joi.string().allow(null).default(null),
  expect_prefix: Joi.string().allow(null).default(null),
  tls: Joi.boolean().default(false),
  assertions: assertionsSchema
}).unknown(false)

const tlsSchema = Joi.object({
  type: Joi.string().valid('tls').required(),
  port: port.default(443),
  assertions: assertionsSchema
}).unknown(false)

const dnsSchema = Joi.object({
  type: Joi.string().valid('dns').required(),
  record: Joi.string()
    .valid(...RECORD_TYPES)
    .required(),
  expect: Joi.array().items(Joi.string().min(1).max(1024)).min(1).max(MAX_DNS_EXPECT).allow(null).default(null),
  rcode: Joi.string()
    .valid(...RCODES)
    .default('NOERROR'),
  assertions: assertionsSchema
}).unknown(false)

/** The `check` object of a request, any kind; `.validate` gives the normal form or the first problem. */
export const checkSchema = Joi.object({
  type: Joi.string()
    .valid(...CHECK_TYPES)
    .required()
})
  .unknown(true)
  .custom((value: { type: CheckType }, helpers) => {
    const schema = { http: httpSchema, tcp: tcpSchema, tls: tlsSchema, dns: dnsSchema }[value.type]
    const checked = schema.validate(value, { abortEarly: true, convert: false })
    if (checked.error !== undefined) {
      const detail = checked.error.details[0]
      const where = `"check.${detail?.path.join('.') ?? ''}"`
      const message = detail?.message ?? 'is invalid'
      // Joi names the field by its own label; the answer names it from the body: "check.port".
      const label = `"${detail?.context?.label ?? ''}"`
      return helpers.error('check.invalid', {
        message: message.startsWith(label) ? where + message.slice(label.length) : `${where}: ${message}`
      })
    }
    const problem = crossFieldProblem(checked.value as CheckSpec)
    if (problem !== null) return helpers.error('check.invalid', { message: problem })
    return normalised(checked.value as CheckSpec)
  })
  .messages({ 'check.invalid': '{{#message}}', 'any.only': '"check.type" must be one of http, tcp, tls, dns' })

/** What a kind's fields must also hold together; null when they do. */
function crossFieldProblem(spec: CheckSpec): string | null {
  const allowed = SOURCES_BY_TYPE[spec.type]
  const wrong = spec.assertions.find((a) => !allowed.includes(a.source))
  if (wrong !== undefined) return `"check.assertions": a ${spec.type} check cannot assert on ${wrong.source} (only ${allowed.join(', ')})`
  if (spec.type === 'http') {
    const names = Object.keys(spec.headers)
    if (names.length > MAX_HEADERS) return `"check.headers": at most ${MAX_HEADERS} headers`
    for (const name of names) {
      if (!TOKEN.test(name)) return `"check.headers": "${name.slice(0, 40)}" is not a header name`
      if (REFUSED_HEADERS.has(name.toLowerCase())) return `"check.headers": ${name} is set by the check itself and may not be given`
      if (!HEADER_VALUE.test(spec.headers[name] ?? ''))
        return `"check.headers": the value of ${name} holds a line break or a control character`
    }
    const lower = new Set(names.map((n) => n.toLowerCase()))
    if (lower.size !== names.length) return '"check.headers": a header is given twice'
    const missing = spec.secret_headers.find((n) => !lower.has(n.toLowerCase()))
    if (missing !== undefined) return `"check.secret_headers": ${missing.slice(0, 40)} is not one of the headers`
    if (Object.values(spec.headers).includes(SECRET_MASK))
      return `"check.headers": ${SECRET_MASK} stands for a stored secret; send the secret itself`
    if (spec.body !== null && bytes(spec.body) > MAX_BODY_BYTES) return `"check.body": at most ${MAX_BODY_BYTES} bytes`
    if (spec.body !== null && (spec.method === 'GET' || spec.method === 'HEAD')) return `"check.body": a ${spec.method} sends no body`
  }
  if (spec.type === 'tcp') {
    if (spec.send !== null && bytes(spec.send) > MAX_SEND_BYTES) return `"check.send": at most ${MAX_SEND_BYTES} bytes`
    if (spec.expect_prefix !== null && bytes(spec.expect_prefix) > MAX_EXPECT_PREFIX_BYTES)
      return `"check.expect_prefix": at most ${MAX_EXPECT_PREFIX_BYTES} bytes`
  }
  return null
}

/** A check in its normal form: header names in lower case, secret header names sorted and complete. */
function normalised(spec: CheckSpec): CheckSpec {
  if (spec.type !== 'http') return spec
  const headers = Object.fromEntries(Object.entries(spec.headers).map(([name, value]) => [name.toLowerCase(), value]))
  const secret = new Set([...spec.secret_headers.map((n) => n.toLowerCase()), ...ALWAYS_SECRET.filter((n) => n in headers)])
  return { ...spec, headers, secret_headers: [...secret].sort() }
}

/** Whether a check is the plain web check (`GET /`, nothing more), which a check without `check` is. */
export function isPlainWebCheck(spec: CheckSpec | null): boolean {
  return (
    spec === null ||
    (spec.type === 'http' &&
      spec.method === 'GET' &&
      spec.path === '/' &&
      Object.keys(spec.headers).length === 0 &&
      spec.body === null &&
      spec.assertions.length === 0)
  )
}

/**
 * A short digest naming a check's normal form: the key its results are kept and its runs shared
 * under (here and in Redis), which must never hold a secret header's value.
 */
export function checkDigest(spec: CheckSpec): string {
  return createHash('sha256').update(JSON.stringify(spec)).digest('base64url').slice(0, 22)
}

/** The check as an answer shows it: secret header values masked. */
export function shownCheck(spec: CheckSpec): CheckSpec {
  if (spec.type !== 'http' || spec.secret_headers.length === 0) return spec
  const headers = { ...spec.headers }
  for (const name of spec.secret_headers) if (name in headers) headers[name] = SECRET_MASK
  return { ...spec, headers }
}
