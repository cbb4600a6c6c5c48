import t from 'tap'
import { classify, judge, laterStage, type Stage } from '../../workers/probe-errors.js'
import { isTlsErrorCode, X509_ERROR_CODES } from '../../workers/tls-errors.js'
import { RESOLVER_FAILED } from '../../lib/net/resolver.js'

const coded = (code: string, extra: Record<string, unknown> = {}, message = 'boom'): Error =>
  Object.assign(new Error(message), { code, ...extra })

// [what, error, through a proxy, expected code, status, text, stage, http fallback]
const cases: Array<[string, unknown, boolean, string, string, string, Stage, boolean]> = [
  ['a name that does not exist', coded('ENOTFOUND'), false, 'dns_nxdomain', 'down', 'dns: NXDOMAIN', 'dns', true],
  ['a name without addresses', coded('ENODATA'), false, 'dns_nodata', 'down', 'dns: NODATA', 'dns', true],
  ['a resolver that times out', coded('ETIMEOUT'), false, 'dns_timeout', 'down', 'dns: TIMEOUT', 'dns', false],
  ['a resolver that fails', coded('ESERVFAIL'), false, 'dns_servfail', 'down', 'dns: SERVFAIL', 'dns', false],
  ['a resolver that refuses', coded('EREFUSED'), false, 'dns_refused', 'down', 'dns: REFUSED', 'dns', false],
  ['another getaddrinfo failure', coded('EAI_AGAIN'), false, 'dns_failed', 'down', 'dns: EAI_AGAIN', 'dns', true],
  [
    'a proxied location that cannot resolve the site',
    coded('ERR_SITE_DNS', { dns: 'ENOTFOUND' }),
    true,
    'dns_nxdomain',
    'error',
    'dns: NXDOMAIN',
    'dns',
    true
  ],
  ['a refused port', coded('ECONNREFUSED'), false, 'connect_refused', 'down', 'connect: ECONNREFUSED', 'connect', true],
  ['an unreachable host', coded('EHOSTUNREACH'), false, 'connect_unreachable', 'down', 'connect: EHOSTUNREACH', 'connect', true],
  ['another dial error', coded('EADDRNOTAVAIL'), false, 'connect_failed', 'down', 'connect: EADDRNOTAVAIL', 'connect', true],
  ['a dial past its deadline', coded('UND_ERR_CONNECT_TIMEOUT'), false, 'connect_timeout', 'down', 'connect: timeout', 'connect', true],
  ['a reset', coded('ECONNRESET'), false, 'connect_reset', 'down', 'connect: ECONNRESET', 'response', true],
  ['a closed socket', coded('UND_ERR_SOCKET'), false, 'http_empty_reply', 'down', 'http: empty reply', 'response', true],
  ['a garbled response', coded('HPE_INVALID_CONSTANT'), false, 'http_protocol', 'down', 'http: HPE_INVALID_CONSTANT', 'response', true],
  ['an untrusted certificate', coded('DEPTH_ZERO_SELF_SIGNED_CERT'), false, 'tls', 'down', 'tls: DEPTH_ZERO_SELF_SIGNED_CERT', 'tls', true],
  ['a TLS protocol error', coded('ERR_SSL_WRONG_VERSION_NUMBER'), false, 'tls', 'down', 'tls: ERR_SSL_WRONG_VERSION_NUMBER', 'tls', true],
  [
    'headers that never came',
    coded('UND_ERR_HEADERS_TIMEOUT'),
    false,
    'timeout',
    'down',
    'timeout: no response in 5000 ms',
    'deadline',
    false
  ],
  [
    'the policy refusing the address',
    coded('ERR_TARGET_POLICY'),
    false,
    'policy_non_public',
    'down',
    'policy: domain resolves to a non-public address',
    'response',
    false
  ],
  [
    'a proxy refusing the CONNECT',
    coded('UND_ERR_ABORTED', {}, 'Proxy response (502) !== 200 when HTTP Tunneling'),
    true,
    'proxy_refused',
    'down',
    'proxy: 502',
    'connect',
    true
  ],
  [
    'a proxy wanting credentials',
    coded('UND_ERR_ABORTED', {}, 'Proxy response (407) !== 200 when HTTP Tunneling'),
    true,
    'proxy_auth',
    'error',
    'proxy: 407',
    'connect',
    false
  ],
  ['a proxy that cannot be reached', coded('ECONNREFUSED'), true, 'location_egress', 'error', 'location: egress unreachable', 'dns', false],
  ['an error without a code', new Error('odd'), false, 'internal', 'error', 'internal: odd', 'dns', false],
  ['an unknown code', coded('WHATEVER'), false, 'internal', 'error', 'internal: WHATEVER', 'dns', false]
]

t.test('each error is classified by its code', async (t) => {
  for (const [what, err, viaProxy, code, status, error, stage, fallback] of cases) {
    t.same(classify(err, 5000, viaProxy, false), { kind: 'fail', status, code, error, stage, fallback }, what)
  }
})

t.test('only an aborted tunnel is read for the proxy status: the same words under another code are not', async (t) => {
  t.match(classify(coded('ECONNRESET', {}, 'Proxy response (502) !== 200'), 5000, false, false), { code: 'connect_reset' })
  t.match(classify(coded('UND_ERR_ABORTED', {}, 'Request aborted'), 5000, false, false), { code: 'http_protocol' })
})

t.test('once the deadline has passed, whatever failed is a timeout', async (t) => {
  t.match(classify(coded('ECONNREFUSED'), 300, false, true), {
    code: 'timeout',
    error: 'timeout: no response in 300 ms',
    stage: 'deadline'
  })
})

t.test('stages are ordered from the look-up to the deadline', async (t) => {
  const order: Stage[] = ['dns', 'connect', 'tls', 'response', 'deadline']
  for (const [i, a] of order.entries()) {
    for (const [j, b] of order.entries()) t.equal(laterStage(a, b), i > j, `${a} ${i > j ? 'after' : 'not after'} ${b}`)
  }
})

t.test('a final answer is judged by its status and body', async (t) => {
  const none = Buffer.alloc(0)
  t.same(judge(200, {}, none), { status: 'up', code: null, error: null })
  t.same(judge(503, {}, none), { status: 'down', code: 'http_5xx', error: 'http: 503' })
  t.same(judge(429, {}, none), { status: 'blocked', code: 'blocked_status', error: 'blocked: http 429' })
  t.same(judge(403, { 'cf-mitigated': 'challenge' }, none), {
    status: 'blocked',
    code: 'blocked_challenge',
    error: 'blocked: challenge (cloudflare)'
  })
})

t.test("a check's expectations judge the final answer after the probe's own rule, or instead of it", async (t) => {
  const page = Buffer.from('<h1>Welcome</h1> Sign in')
  const none = Buffer.alloc(0)
  const up = { status: 'up', code: null, error: null }
  const expect = (e: { status?: Array<number | string>; body_contains?: string }) => ({
    status: e.status ?? null,
    body_contains: e.body_contains ?? null
  })
  // [what, status, headers, body, expectations, judgement]
  const rows: Array<[string, number, Record<string, string>, Buffer, ReturnType<typeof expect>, object]> = [
    ['the keyword present', 200, {}, page, expect({ body_contains: 'Sign in' }), up],
    [
      'the keyword missing',
      200,
      {},
      page,
      expect({ body_contains: 'Sign out' }),
      { status: 'down', code: 'body_mismatch', error: 'expect: body_contains not found' }
    ],
    ['a 5xx stays down whatever the body', 503, {}, page, expect({ body_contains: 'Sign in' }), { status: 'down', code: 'http_5xx' }],
    [
      'a 429 stays blocked without a list',
      429,
      {},
      page,
      expect({ body_contains: 'Sign in' }),
      { status: 'blocked', code: 'blocked_status' }
    ],
    ['a listed 401 is up', 401, {}, none, expect({ status: [401] }), up],
    [
      'an unlisted 401 is down',
      401,
      {},
      none,
      expect({ status: ['200-299'] }),
      { status: 'down', code: 'unexpected_status', error: 'expect: status 401' }
    ],
    ['a listed 503 is up: the list decides', 503, {}, page, expect({ status: [503] }), up],
    [
      'a recognised challenge page stays blocked, listed status or not',
      403,
      { 'cf-mitigated': 'challenge' },
      none,
      expect({ status: [403] }),
      { status: 'blocked', code: 'blocked_challenge' }
    ],
    ['a listed 403 that is no challenge is up', 403, {}, none, expect({ status: [403] }), up],
    [
      'a listed status with the keyword missing',
      200,
      {},
      none,
      expect({ status: ['200-299'], body_contains: 'Sign in' }),
      { status: 'down', code: 'body_mismatch' }
    ]
  ]
  for (const [what, status, headers, body, e, want] of rows) t.match(judge(status, headers, body, e), want, what)
  t.same(judge(401, {}, none), up, 'without expectations, the probe rule alone: a 401 is up')
})

/** Node's own TLS codes and OpenSSL library errors as Node names them, beside every X.509 verification code. */
const TLS_CODES: readonly string[] = [
  ...X509_ERROR_CODES,
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_CERT_ALTNAME_FORMAT',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
  'ERR_TLS_DH_PARAM_SIZE',
  'ERR_TLS_RENEGOTIATION_DISABLED',
  'ERR_TLS_SESSION_ATTACK',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
  'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
  'ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR',
  'ERR_SSL_UNSUPPORTED_PROTOCOL',
  'ERR_SSL_NO_PROTOCOLS_AVAILABLE',
  'ERR_SSL_DH_KEY_TOO_SMALL',
  'ERR_SSL_UNSAFE_LEGACY_RENEGOTIATION_DISABLED',
  'ERR_OSSL_EVP_UNSUPPORTED',
  'EPROTO'
]

t.test('every TLS and X.509 error Node and OpenSSL raise is a down with the tls code', async (t) => {
  for (const code of TLS_CODES) {
    t.match(classify(coded(code), 5000, false, false), { status: 'down', code: 'tls', error: `tls: ${code}`, stage: 'tls' }, code)
  }
  t.notOk(isTlsErrorCode('ECONNREFUSED'), 'a dial error is not a TLS one')
  t.notOk(isTlsErrorCode('CERTAINLY_NOT'), 'nor a code that merely contains CERT')
})

t.test("the location's own resolver failing is its error, never the site's down", async (t) => {
  const ours = (code: string) => Object.assign(coded(code), { [RESOLVER_FAILED]: true })
  for (const [code, name] of [
    ['EREFUSED', 'REFUSED'],
    ['ETIMEOUT', 'TIMEOUT'],
    ['ESERVFAIL', 'SERVFAIL']
  ] as const) {
    t.match(
      classify(ours(code), 5000, false, false),
      { status: 'error', error: `dns: ${name} (this location's resolver)`, stage: 'dns' },
      code
    )
  }
  t.match(
    classify(coded('ESERVFAIL'), 5000, false, false),
    { status: 'down', error: 'dns: SERVFAIL' },
    "the name's own SERVFAIL is the site's"
  )
  t.match(classify(coded('ENOTFOUND'), 5000, false, false), { status: 'down', code: 'dns_nxdomain' }, 'NXDOMAIN stays the site')
})
