import { ASSERTION_SOURCES, COMPARISONS, MAX_ASSERTIONS, MAX_TARGET_LENGTH } from '../../rules/assertions.js'
import {
  MAX_BODY_BYTES,
  MAX_DNS_EXPECT,
  MAX_HEADERS,
  MAX_PATH_LENGTH,
  METHODS,
  RCODES,
  RECORD_TYPES,
  SECRET_MASK,
  SOURCES_BY_TYPE
} from '../../rules/check-spec.js'
import { LOCATION_FAILURE_CODES } from '../../probing/locations/location.js'
import { CODE_VERDICTS } from '../../rules/probe-result.js'
import { nullable, ref, type Json } from '../parts.js'

/** Every code a location result may carry: a probe's outcome, or why the location gave none. */
export const LOCATION_CODES = [...Object.keys(CODE_VERDICTS), ...LOCATION_FAILURE_CODES]

const assertions: Json = {
  type: 'array',
  maxItems: MAX_ASSERTIONS,
  items: ref('schemas', 'Assertion'),
  description: 'Judged at each location in order: the first that fails makes that location `down` with `assertion_failed`.'
}
const port: Json = { type: 'integer', minimum: 1, maximum: 65535 }

/** What a check does at each location (lib/rules/check-spec.ts), and the codes of its results. */
export const checkSpecSchemas: Json = {
  Assertion: {
    type: 'object',
    description:
      "Checkly's shape. `property`: a header's name (`header`) or a JSONPath (`json_body`: `$`, `.name`, `['name']`, `[0]`, `[-1]`, `*`, `..name`). `matches` runs an RE2 regular expression (linear time: no ReDoS). Texts are read up to their first 64 KiB, a JSON body up to 1 MiB. Without a `target`: `is_empty`, `not_empty`.",
    required: ['source', 'comparison'],
    properties: {
      source: { type: 'string', enum: [...ASSERTION_SOURCES] },
      property: { type: 'string', maxLength: 256 },
      comparison: { type: 'string', enum: [...COMPARISONS] },
      target: { oneOf: [{ type: 'string', maxLength: MAX_TARGET_LENGTH }, { type: 'number' }] }
    },
    additionalProperties: false,
    examples: [{ source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' }]
  },
  HttpCheck: {
    type: 'object',
    description: `The request each location sends (https first, then http, as the web check) and assertions on the answer. Headers \`Host\`, \`Content-Length\` and hop-by-hop ones are refused; \`Authorization\`, \`Cookie\` and any named in \`secret_headers\` are secrets: stored sealed, shown as \`${SECRET_MASK}\`, never logged. A GET or HEAD sends no body.`,
    required: ['type'],
    properties: {
      type: { const: 'http' },
      method: { type: 'string', enum: [...METHODS], default: 'GET' },
      path: { type: 'string', maxLength: MAX_PATH_LENGTH, pattern: '^/', default: '/', description: 'Path and query.' },
      headers: {
        type: 'object',
        maxProperties: MAX_HEADERS,
        additionalProperties: { type: 'string', maxLength: 4096 },
        examples: [{ authorization: 'Bearer TOKEN', accept: 'application/json' }]
      },
      secret_headers: { type: 'array', maxItems: MAX_HEADERS, items: { type: 'string' } },
      body: { ...nullable({ type: 'string' }), description: `At most ${MAX_BODY_BYTES} bytes.` },
      assertions
    },
    additionalProperties: false
  },
  TcpCheck: {
    type: 'object',
    description: 'A connection to `port` (TLS on connect when `tls`), `send` written, the reply expected to start with `expect_prefix`.',
    required: ['type', 'port'],
    properties: {
      type: { const: 'tcp' },
      port,
      send: nullable({ type: 'string', maxLength: 4096 }),
      expect_prefix: nullable({ type: 'string', maxLength: 1024 }),
      tls: { type: 'boolean', default: false },
      assertions: { ...assertions, description: `Sources: ${SOURCES_BY_TYPE.tcp.join(', ')} (text_body: the reply, up to 64 KiB).` }
    },
    additionalProperties: false
  },
  TlsCheck: {
    type: 'object',
    description:
      "A TLS handshake on `port`, verified (chain and host name): the certificate's expiry is reported and notified as a web site's.",
    required: ['type'],
    properties: {
      type: { const: 'tls' },
      port: { ...port, default: 443 },
      assertions: { ...assertions, description: `Sources: ${SOURCES_BY_TYPE.tls.join(', ')}.` }
    },
    additionalProperties: false
  },
  DnsCheck: {
    type: 'object',
    description:
      "A record asked of the location's own resolvers. `expect`: the records expected, as a set, in dig's data form (`10 mail.example.com` for MX); `rcode`: the answer's expected rcode. A resolver that refuses or does not answer is the location's failure (`error`), never the name's.",
    required: ['type', 'record'],
    properties: {
      type: { const: 'dns' },
      record: { type: 'string', enum: [...RECORD_TYPES] },
      expect: nullable({ type: 'array', minItems: 1, maxItems: MAX_DNS_EXPECT, items: { type: 'string', minLength: 1 } }),
      rcode: { type: 'string', enum: [...RCODES], default: 'NOERROR' },
      assertions: { ...assertions, description: `Sources: ${SOURCES_BY_TYPE.dns.join(', ')} (text_body: the records, one a line).` }
    },
    additionalProperties: false
  },
  Check: {
    description: 'What each location does, by its `type`; absent: the web check (GET / over https, then http).',
    oneOf: [ref('schemas', 'HttpCheck'), ref('schemas', 'TcpCheck'), ref('schemas', 'TlsCheck'), ref('schemas', 'DnsCheck')]
  },
  LocationCode: {
    type: 'string',
    enum: LOCATION_CODES,
    description:
      "A location result's stable code, beside its `error` text (null when up). Site codes: `dns_*`, `connect_*`, `tls`, `timeout`, `http_*`, `blocked_*`, `too_many_redirects`, `unexpected_status`, `body_mismatch`, `assertion_failed`, `reply_mismatch`, `dns_rcode`, `dns_answer_mismatch`, `policy_*`; the location's own: `internal`, `proxy_auth`, `location_*`, `agent_*`."
  }
}
