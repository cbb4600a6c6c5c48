import t from 'tap'
import { CAUSE_MAX_CHARS, causeText, causeWords, downCause, parseCause, publicCause } from '../../../lib/rules/down-cause.js'

const at = (location: string, status: string, code: string | null, error: string | null, http_code = 0) => ({
  location,
  status,
  code,
  error,
  http_code,
  response_ms: 10
})

t.test('the words of one failure', async (t) => {
  const cases: Array<[Parameters<typeof causeWords>[0], string]> = [
    [{ code: 'http_5xx', error: 'http: 500', http_code: 500 }, 'HTTP 500'],
    [{ code: 'unexpected_status', error: 'http: 404 (expected 200)', http_code: 404 }, 'HTTP 404'],
    [{ code: 'connect_refused', error: 'connect: ECONNREFUSED', http_code: 0 }, 'connection refused'],
    [{ code: 'dns_nxdomain', error: 'dns: NXDOMAIN', http_code: 0 }, 'domain does not exist (NXDOMAIN)'],
    [{ code: 'timeout', error: 'timeout: no response in 10000 ms', http_code: 0 }, 'no answer in time'],
    [{ code: null, error: 'something odd', http_code: 0 }, 'something odd'],
    [{ code: 'dns_rcode', error: 'dns: SERVFAIL (expected NOERROR)', http_code: 0 }, 'dns: SERVFAIL (expected NOERROR)']
  ]
  for (const [cause, words] of cases) t.equal(causeWords(cause), words, words)
})

t.test('a check with every location up has no cause', async (t) => {
  t.equal(downCause([at('A', 'up', null, null, 200), at('B', 'up', null, null, 200)]), null)
  t.equal(downCause([]), null)
})

t.test('the summary names the most common failure and how many of all locations saw it', async (t) => {
  const all500 = downCause([1, 2, 3].map((i) => at(`Local ${i}`, 'down', 'http_5xx', 'http: 500', 500)))
  t.equal(all500?.summary, 'HTTP 500 from 3 of 3 locations')
  t.same(all500?.locations[0], { location: 'Local 1', status: 'down', code: 'http_5xx', error: 'http: 500', http_code: 500 })

  const mixed = downCause([
    at('A', 'up', null, null, 200),
    at('B', 'down', 'connect_refused', 'connect: ECONNREFUSED'),
    at('C', 'down', 'connect_refused', 'connect: ECONNREFUSED'),
    at('D', 'error', 'dns_refused', "dns: REFUSED (this location's resolver)")
  ])
  t.equal(mixed?.summary, 'connection refused from 2 of 4 locations')
  t.same(
    mixed?.locations.map((l) => l.location),
    ['B', 'C', 'D'],
    'only the failing locations, errors of the location itself included'
  )
  t.equal(downCause([at('A', 'down', 'tls', 'tls: CERT_HAS_EXPIRED')])?.summary, 'TLS handshake failed from 1 of 1 location')
})

t.test('untrusted answers are bounded and odd fields dropped', async (t) => {
  const huge = 'x'.repeat(10_000)
  const many = Array.from({ length: 50 }, (_, i) => ({ location: `${huge}${i}`, status: 'down', code: huge, error: huge, http_code: 1e9 }))
  const cause = downCause([...many, null, 'nonsense', { status: 'sideways' }])
  t.equal(cause?.locations.length, 8)
  t.equal(cause?.locations[0]?.http_code, 0, 'an impossible HTTP status reads as none')
  const text = causeText(cause) as string
  t.ok(text.length <= CAUSE_MAX_CHARS, `stored text ${text.length} chars`)
  t.same(parseCause(text), cause, 'read back as written')
})

t.test('a stored cause that is not one reads as none', async (t) => {
  for (const bad of [null, undefined, '', '{', '[]', '{"summary":1}', 42]) t.equal(parseCause(bad), null, String(bad))
})

t.test('the public cause keeps plain error texts only', async (t) => {
  const cause = downCause([
    at('A', 'down', 'http_5xx', 'http: 500', 500),
    at('B', 'down', 'http_5xx', 'http: 500', 500),
    at('C', 'error', 'internal', 'internal: getaddrinfo failed for secret.example.com')
  ])
  t.same(publicCause(cause), { summary: 'HTTP 500 from 2 of 3 locations', errors: ['http: 500'] })
  t.equal(publicCause(null), null)
})
