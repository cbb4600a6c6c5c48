import t from 'tap'
import { checkDigest, checkSchema, isPlainWebCheck, SECRET_MASK, shownCheck, type CheckSpec } from '../../../lib/rules/check-spec.js'

const read = (value: unknown): { value?: CheckSpec; error?: string } => {
  const { value: v, error } = checkSchema.validate(value) as { value: CheckSpec; error?: { message: string } }
  return error === undefined ? { value: v } : { error: error.message }
}

t.test('each kind in its normal form, defaults filled', async (t) => {
  t.same(read({ type: 'http' }).value, {
    type: 'http',
    method: 'GET',
    path: '/',
    headers: {},
    secret_headers: [],
    body: null,
    assertions: []
  })
  t.same(read({ type: 'tcp', port: 5432 }).value, { type: 'tcp', port: 5432, send: null, expect_prefix: null, tls: false, assertions: [] })
  t.same(read({ type: 'tls' }).value, { type: 'tls', port: 443, assertions: [] })
  t.same(read({ type: 'dns', record: 'MX' }).value, { type: 'dns', record: 'MX', expect: null, rcode: 'NOERROR', assertions: [] })
  const http = read({
    type: 'http',
    method: 'POST',
    path: '/login?next=%2F',
    headers: { Authorization: 'Bearer t', 'X-Api-Key': 'k', Accept: 'application/json' },
    secret_headers: ['X-API-KEY'],
    body: '{"user":"u"}',
    assertions: [
      { source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' },
      { source: 'header', property: 'Content-Type', comparison: 'contains', target: 'json' },
      { source: 'status_code', comparison: 'less_than', target: 300 }
    ]
  }).value
  t.same(http, {
    type: 'http',
    method: 'POST',
    path: '/login?next=%2F',
    headers: { authorization: 'Bearer t', 'x-api-key': 'k', accept: 'application/json' },
    secret_headers: ['authorization', 'x-api-key'],
    body: '{"user":"u"}',
    assertions: [
      { source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' },
      { source: 'header', property: 'content-type', comparison: 'contains', target: 'json' },
      { source: 'status_code', property: null, comparison: 'less_than', target: '300' }
    ]
  })
  const shown = shownCheck(http!)
  t.same(shown.type === 'http' && shown.headers, { authorization: SECRET_MASK, 'x-api-key': SECRET_MASK, accept: 'application/json' })
  t.notMatch(checkDigest(http!), /Bearer/, 'the digest a result is kept under holds no secret')
  t.not(checkDigest(http!), checkDigest({ ...http!, path: '/' } as CheckSpec), 'and tells checks apart')
  t.ok(isPlainWebCheck(read({ type: 'http' }).value!), 'a bare http check is the web check')
  t.notOk(isPlainWebCheck(http!))
})

t.test('what a check may not hold is refused, saying why', async (t) => {
  const rows: Array<[string, unknown, RegExp]> = [
    ['no type', {}, /"type" is required/],
    ['an unknown type', { type: 'icmp' }, /must be one of http, tcp, tls, dns/],
    ['an unknown field', { type: 'tls', host: 'x' }, /"check.host"/],
    ['an unknown method', { type: 'http', method: 'TRACE' }, /"check.method"/],
    ['a path without its slash', { type: 'http', path: 'health' }, /"check.path"/],
    ['a path with a space', { type: 'http', path: '/a b' }, /"check.path"/],
    ['a Host header', { type: 'http', headers: { Host: 'evil' } }, /Host is set by the check itself/],
    ['a Content-Length', { type: 'http', headers: { 'content-length': '1' } }, /set by the check itself/],
    ['a hop-by-hop header', { type: 'http', headers: { Connection: 'keep-alive' } }, /set by the check itself/],
    ['Transfer-Encoding', { type: 'http', headers: { 'Transfer-Encoding': 'chunked' } }, /set by the check itself/],
    ['a header name with a space', { type: 'http', headers: { 'x y': '1' } }, /not a header name/],
    ['a header value with a line break', { type: 'http', headers: { 'x-a': '1\r\nx-b: 2' } }, /line break/],
    ['the same header twice', { type: 'http', headers: { 'X-A': '1', 'x-a': '2' } }, /given twice/],
    ['21 headers', { type: 'http', headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-${i}`, 'v'])) }, /at most 20/],
    ['a secret that is not a header', { type: 'http', secret_headers: ['x-key'] }, /not one of the headers/],
    ['the mask sent back', { type: 'http', headers: { authorization: SECRET_MASK } }, /send the secret itself/],
    ['a body over 16 KiB', { type: 'http', method: 'POST', body: 'x'.repeat(16 * 1024 + 1) }, /at most 16384 bytes/],
    ['a GET with a body', { type: 'http', body: 'x' }, /a GET sends no body/],
    ['a port out of range', { type: 'tcp', port: 70000 }, /"check.port"/],
    ['a tcp check without a port', { type: 'tcp' }, /"check.port" is required/],
    ['an unknown record type', { type: 'dns', record: 'PTR' }, /"check.record"/],
    ['an unknown rcode', { type: 'dns', record: 'A', rcode: 'YXDOMAIN' }, /"check.rcode"/],
    [
      'an assertion source of another kind',
      { type: 'dns', record: 'A', assertions: [{ source: 'status_code', comparison: 'equals', target: 200 }] },
      /cannot assert on status_code/
    ],
    [
      'a header assertion without its name',
      { type: 'http', assertions: [{ source: 'header', comparison: 'equals', target: 'x' }] },
      /header name/
    ],
    [
      'a JSONPath that is not one',
      { type: 'http', assertions: [{ source: 'json_body', property: 'status', comparison: 'equals', target: 'ok' }] },
      /JSONPath/
    ],
    [
      'a property where none is read',
      { type: 'http', assertions: [{ source: 'status_code', property: 'x', comparison: 'equals', target: 1 }] },
      /only for header and json_body/
    ],
    [
      'a target for is_empty',
      { type: 'http', assertions: [{ source: 'text_body', comparison: 'is_empty', target: 'x' }] },
      /not taken by is_empty/
    ],
    ['no target', { type: 'http', assertions: [{ source: 'text_body', comparison: 'contains' }] }, /"target" is required/],
    [
      'a number comparison with text',
      { type: 'http', assertions: [{ source: 'response_time', comparison: 'less_than', target: 'fast' }] },
      /must be a number/
    ],
    [
      'a pattern RE2 refuses',
      { type: 'http', assertions: [{ source: 'text_body', comparison: 'matches', target: '(?<=a)b' }] },
      /RE2 accepts/
    ],
    [
      '21 assertions',
      { type: 'http', assertions: Array.from({ length: 21 }, () => ({ source: 'text_body', comparison: 'not_empty' })) },
      /"check.assertions"/
    ]
  ]
  for (const [what, value, message] of rows) {
    const { error } = read(value)
    t.match(error, message, what)
  }
})

t.test('a check in its normal form reads back as itself (what an agent is sent)', async (t) => {
  const checks: unknown[] = [
    {
      type: 'http',
      method: 'POST',
      body: 'x',
      headers: { Authorization: 'a' },
      assertions: [
        { source: 'text_body', comparison: 'is_empty' },
        { source: 'status_code', comparison: 'equals', target: 200 }
      ]
    },
    { type: 'tcp', port: 25, expect_prefix: '220', assertions: [{ source: 'response_time', comparison: 'less_than', target: '500' }] },
    { type: 'tls' },
    { type: 'dns', record: 'TXT', expect: ['v=spf1 -all'] }
  ]
  for (const check of checks) {
    const once = read(check).value
    t.same(read(once).value, once, JSON.stringify(check))
  }
})
