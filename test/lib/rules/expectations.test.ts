import t from 'tap'
import {
  applyExpectations,
  BODY_SEARCH_BYTES,
  expectSchema,
  expectationVerdict,
  NO_EXPECTATIONS,
  normaliseStatusList,
  parseExpectations,
  parseStatusList,
  type ExpectationFailure,
  type Expectations
} from '../../../lib/rules/expectations.js'

const expect = (e: Partial<Expectations>): Expectations => ({ ...NO_EXPECTATIONS, ...e })
const page = (text: string): Buffer => Buffer.from(text, 'utf8')
const wrongStatus = (code: number): ExpectationFailure => ({ code: 'unexpected_status', error: `expect: status ${code}` })
const noText: ExpectationFailure = { code: 'body_mismatch', error: 'expect: body_contains not found' }

t.test('the verdict on one answer', async (t) => {
  const padded = (before: number, text: string) => Buffer.concat([Buffer.alloc(before, 0x20), page(text)])
  const rows: Array<[string, Expectations, { status: number; body: Buffer }, ExpectationFailure | null]> = [
    ['nothing set: any answer meets it (the probe rule judges the status)', NO_EXPECTATIONS, { status: 404, body: page('') }, null],
    ['nothing set: a 5xx is left to the probe rule too', NO_EXPECTATIONS, { status: 503, body: page('') }, null],
    ['a listed code', expect({ status: [401] }), { status: 401, body: page('') }, null],
    ['a code outside the list, a 200 included', expect({ status: [401] }), { status: 200, body: page('') }, wrongStatus(200)],
    ['the low end of a range', expect({ status: ['200-299'] }), { status: 200, body: page('') }, null],
    ['the high end of a range', expect({ status: ['200-299'] }), { status: 299, body: page('') }, null],
    ['just past a range', expect({ status: ['200-299'] }), { status: 300, body: page('') }, wrongStatus(300)],
    ['a code among several ranges', expect({ status: ['200-204', 301, '500-503'] }), { status: 503, body: page('') }, null],
    ['between ranges', expect({ status: ['200-204', 301, '500-503'] }), { status: 302, body: page('') }, wrongStatus(302)],
    ['the text found', expect({ body_contains: 'Sign in' }), { status: 200, body: page('<a>Sign in</a>') }, null],
    ['the text missing', expect({ body_contains: 'Sign in' }), { status: 200, body: page('<a>Log in</a>') }, noText],
    ['case counts', expect({ body_contains: 'Sign in' }), { status: 200, body: page('<a>SIGN IN</a>') }, noText],
    ['a pattern is a literal, not a regular expression', expect({ body_contains: 'a.c' }), { status: 200, body: page('abc') }, noText],
    ['the literal text of a pattern is found', expect({ body_contains: '(a+)+$' }), { status: 200, body: page('x(a+)+$y') }, null],
    ['multi-byte UTF-8 found', expect({ body_contains: 'Grüße 日本' }), { status: 200, body: page('<p>Grüße 日本</p>') }, null],
    [
      'multi-byte UTF-8 in another encoding is not found',
      expect({ body_contains: 'Grüße' }),
      { status: 200, body: Buffer.from('Grüße', 'latin1') },
      noText
    ],
    ['an empty body', expect({ body_contains: 'ok' }), { status: 200, body: Buffer.alloc(0) }, noText],
    [
      'the text ending exactly at 64 KiB',
      expect({ body_contains: 'END' }),
      { status: 200, body: padded(BODY_SEARCH_BYTES - 3, 'END') },
      null
    ],
    [
      'the text crossing 64 KiB is not found',
      expect({ body_contains: 'END' }),
      { status: 200, body: padded(BODY_SEARCH_BYTES - 2, 'END') },
      noText
    ],
    [
      'the text after 64 KiB is not found',
      expect({ body_contains: 'END' }),
      { status: 200, body: padded(BODY_SEARCH_BYTES, 'END') },
      noText
    ],
    [
      'a multi-byte character cut by 64 KiB is not found',
      expect({ body_contains: '日' }),
      { status: 200, body: padded(BODY_SEARCH_BYTES - 1, '日') },
      noText
    ],
    [
      'status before body: a wrong status is the failure named',
      expect({ status: [200], body_contains: 'ok' }),
      { status: 500, body: page('') },
      wrongStatus(500)
    ],
    ['both met', expect({ status: [200], body_contains: 'ok', max_response_ms: 1 }), { status: 200, body: page('ok') }, null]
  ]
  for (const [name, e, answer, want] of rows) t.same(expectationVerdict(e, answer), want, name)
})

t.test('the body is searched in a slice of a larger buffer as given', async (t) => {
  const pool = page('xxxxSign inyyyy')
  t.equal(expectationVerdict(expect({ body_contains: 'Sign in' }), { status: 200, body: pool.subarray(4, 11) }), null)
  t.same(expectationVerdict(expect({ body_contains: 'Sign in' }), { status: 200, body: pool.subarray(5, 15) }), noText)
})

t.test('validation: accepted values in their normal form', async (t) => {
  const rows: Array<[string, unknown, unknown]> = [
    ['an empty object changes nothing', {}, {}],
    ['codes and ranges, sorted and merged', { status: [404, '200-299', 300, 201] }, { status: ['200-300', 404] }],
    ['a one-code range is the code', { status: ['401-401'] }, { status: [401] }],
    ['adjacent ranges join', { status: ['200-249', '250-299'] }, { status: ['200-299'] }],
    ['the ends of the code space', { status: [100, 599] }, { status: [100, 599] }],
    [
      'null clears each',
      { status: null, body_contains: null, max_response_ms: null },
      { status: null, body_contains: null, max_response_ms: null }
    ],
    ['256 bytes of text', { body_contains: 'é'.repeat(128) }, { body_contains: 'é'.repeat(128) }],
    ['spaces are kept: the match is literal', { body_contains: ' ok ' }, { body_contains: ' ok ' }],
    ['the threshold bounds', { max_response_ms: 1 }, { max_response_ms: 1 }],
    ['the threshold bounds', { max_response_ms: 120_000 }, { max_response_ms: 120_000 }]
  ]
  for (const [name, input, want] of rows) t.same(parseExpectations(input), { ok: true, value: want }, name)
})

t.test('validation: refusals name the field and the rule', async (t) => {
  const status = '"expect.status" must list status codes 100-599 and ranges such as "200-299"'
  const bytes = '"expect.body_contains" must be at most 256 bytes in UTF-8'
  const ms = '"expect.max_response_ms" must be a whole number of milliseconds from 1 to 120000'
  const rows: Array<[string, unknown, string]> = [
    ['not an object', 'status=200', '"expect" must be an object with "status", "body_contains" or "max_response_ms"'],
    ['a list', [200], '"expect" must be an object with "status", "body_contains" or "max_response_ms"'],
    ['an unknown key', { regex: 'a+' }, '"expect" may hold only "status", "body_contains" and "max_response_ms", not "regex"'],
    ['status not a list', { status: 200 }, status],
    ['an empty status list', { status: [] }, '"expect.status" must list at least one status code or range (null clears it)'],
    ['a code below 100', { status: [99] }, status],
    ['a code above 599', { status: [600] }, status],
    ['a fractional code', { status: [200.5] }, status],
    ['a code as text', { status: ['200'] }, status],
    ['a reversed range', { status: ['299-200'] }, status],
    ['a range past 599', { status: ['500-600'] }, status],
    ['a wildcard', { status: ['2xx'] }, status],
    ['a null entry', { status: [null] }, status],
    ['too many entries', { status: Array.from({ length: 51 }, (_, i) => 100 + i) }, '"expect.status" may have at most 50 entries'],
    ['empty text', { body_contains: '' }, '"expect.body_contains" must not be empty (null clears it)'],
    ['257 ASCII bytes', { body_contains: 'a'.repeat(257) }, bytes],
    ['129 two-byte characters: 258 bytes though 129 characters', { body_contains: 'é'.repeat(129) }, bytes],
    ['text that is not a string', { body_contains: 42 }, '"expect.body_contains" must be a string'],
    ['a zero threshold', { max_response_ms: 0 }, ms],
    ['a fractional threshold', { max_response_ms: 1.5 }, ms],
    ['a threshold over two minutes', { max_response_ms: 120_001 }, ms],
    ['a threshold as text', { max_response_ms: '100' }, ms]
  ]
  for (const [name, input, error] of rows) t.same(parseExpectations(input), { ok: false, error }, name)
})

t.test('the status list the operator tool types', async (t) => {
  t.same(parseStatusList('200, 300-399,401'), [200, '300-399', 401])
  t.same(parseExpectations({ status: parseStatusList('2xx') }), {
    ok: false,
    error: '"expect.status" must list status codes 100-599 and ranges such as "200-299"'
  })
  t.same(normaliseStatusList([503, '200-299', 200]), ['200-299', 503])
})

t.test('a change keeps absent keys and clears null ones', async (t) => {
  const current = expect({ status: [401], body_contains: 'ok', max_response_ms: 2000 })
  t.same(applyExpectations(current, {}), current, 'nothing sent: nothing changes')
  t.same(applyExpectations(current, { body_contains: null }), { status: [401], body_contains: null, max_response_ms: 2000 })
  t.same(applyExpectations(current, { max_response_ms: 500, status: null }), { status: null, body_contains: 'ok', max_response_ms: 500 })
})

t.test('the schema is strict wherever it is used: a route converting types does not loosen it', async (t) => {
  t.match(expectSchema.validate({ max_response_ms: '2000' }, { convert: true }).error?.message, /max_response_ms/)
  t.same(expectSchema.validate({ status: ['500-503', 200] }, { convert: true }).value, { status: [200, '500-503'] })
})
