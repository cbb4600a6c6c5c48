import t from 'tap'
import type { AgentProbeRequest } from '../../../lib/net/agent-protocol.js'
import { readProbeReply, type AskedProbe } from '../../../lib/net/agent-reply.js'

const NOW = Date.parse('2026-11-29T12:00:00.000Z')
const request: AgentProbeRequest = { v: 1, domain: 'shop.example.com', class: 'demand', user_agent: 'test' }
const asked = (over: Partial<AskedProbe> = {}): AskedProbe => ({ location: 'fra1', request, elapsedMs: 500, now: NOW, ...over })
const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value))

type Reply = { v: unknown; location: unknown; domain: unknown; result: Record<string, unknown> } & Record<string, unknown>
function reply(result: Record<string, unknown> = {}, top: Record<string, unknown> = {}): Reply {
  return {
    v: 1,
    location: 'fra1',
    domain: 'shop.example.com',
    result: {
      status: 'up',
      http_code: 200,
      response_ms: 120.5,
      error: null,
      code: null,
      final_url: 'https://shop.example.com/',
      tls_expires_at: '2027-01-01T00:00:00.000Z',
      tls_issuer: "CN=R11, O=Let's Encrypt, C=US",
      timings: { dns: 10, connect: 20, tls: 30, first_byte: 50.5, total: 120.5 },
      ...result
    },
    ...top
  }
}

t.test('an honest answer is read whole', async (t) => {
  const read = readProbeReply(bytes(reply()), asked())
  t.same(read, { ok: true, result: reply().result })
  const down = reply({
    status: 'down',
    http_code: 503,
    error: 'http: 503',
    code: 'http_5xx',
    final_url: 'http://shop.example.com/',
    tls_expires_at: null,
    tls_issuer: null
  })
  t.match(readProbeReply(bytes(down), asked()), { ok: true, result: { status: 'down', code: 'http_5xx' } })
  const blocked = reply({ status: 'blocked', http_code: 403, error: 'blocked: http 403', code: 'blocked_status' })
  t.match(readProbeReply(bytes(blocked), asked()), { ok: true })
  const refused = reply({
    status: 'down',
    http_code: 0,
    error: 'dns: NXDOMAIN',
    code: 'dns_nxdomain',
    final_url: null,
    tls_expires_at: null,
    tls_issuer: null
  })
  t.match(readProbeReply(bytes(refused), asked()), { ok: true }, 'a failure before any answer has no final URL')
  const policy = reply({
    status: 'down',
    http_code: 0,
    error: 'policy: x',
    code: 'policy_non_public',
    final_url: null,
    tls_expires_at: null,
    tls_issuer: null
  })
  t.match(readProbeReply(bytes(policy), asked()), { ok: true }, "the agent's own policy refusal is its to report (the location maps it)")
})

t.test('every rule refuses what breaks it, and says which', async (t) => {
  const withExpect = (expect: AgentProbeRequest['expect']): AskedProbe => asked({ request: { ...request, expect } })
  const rows: Array<[string, Uint8Array, AskedProbe, RegExp]> = [
    ['not JSON', bytes('{"v": 1,'), asked(), /^not JSON$/],
    ['JSON null', bytes('null'), asked(), /^not an object$/],
    ['a list', bytes('[]'), asked(), /^not an object$/],
    ['over 16 KiB', bytes({ ...reply(), pad: 'x'.repeat(17_000) }), asked(), /^over 16384 bytes$/],
    ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0x7d]), asked(), /^not JSON$/],
    ['a field missing', bytes({ v: 1, location: 'fra1', domain: 'shop.example.com' }), asked(), /missing "result"/],
    ['an extra field', bytes(reply({}, { note: 'x' })), asked(), /unknown "note"/],
    ['an extra result field', bytes(reply({ admin: true })), asked(), /result: unknown "admin"/],
    ['another version', bytes(reply({}, { v: 2 })), asked(), /protocol version/],
    ['another location', bytes(reply({}, { location: 'ams1' })), asked(), /another location/],
    ['another domain', bytes(reply({}, { domain: 'evil.example.com' })), asked(), /another domain/],
    ['an unknown verdict', bytes(reply({ status: 'great' })), asked(), /^status$/],
    ['an unknown code', bytes(reply({ status: 'down', code: 'made_up', error: 'x' })), asked(), /^code$/],
    ...(
      ['location_cancelled', 'location_stopping', 'location_failed', 'location_no_answer', 'agent_none', 'agent_bad_answer'] as const
    ).map((code): [string, Uint8Array, AskedProbe, RegExp] => [
      `the central's own ${code}`,
      bytes(reply({ status: 'error', code, error: 'x' })),
      asked(),
      /^code$/
    ]),
    ['up with an error code', bytes(reply({ code: 'tls', error: 'tls: X' })), asked(), /up with an error/],
    ['up with an error text', bytes(reply({ error: 'fine really' })), asked(), /up with an error/],
    ['up without a status', bytes(reply({ http_code: 0 })), asked(), /up without an HTTP status/],
    ['up with a 503', bytes(reply({ http_code: 503 })), asked(), /up with a failing status/],
    ['up with a 403 (blocked by the rule)', bytes(reply({ http_code: 403 })), asked(), /up with a failing status/],
    ['up with a status the request does not list', bytes(reply({ http_code: 200 })), withExpect({ status: [204] }), /does not expect/],
    ['down without a code', bytes(reply({ status: 'down', error: 'x' })), asked(), /without a code/],
    ['down with an error-only code', bytes(reply({ status: 'down', code: 'internal', error: 'x' })), asked(), /down with code internal/],
    ['blocked with a down code', bytes(reply({ status: 'blocked', code: 'tls', error: 'x' })), asked(), /blocked with code tls/],
    [
      'unexpected_status with no list asked',
      bytes(reply({ status: 'down', code: 'unexpected_status', error: 'x' })),
      asked(),
      /without a status list/
    ],
    [
      'body_mismatch with no text asked',
      bytes(reply({ status: 'down', code: 'body_mismatch', error: 'x' })),
      asked(),
      /without body_contains/
    ],
    ['http_5xx with a 200', bytes(reply({ status: 'down', code: 'http_5xx', error: 'x', http_code: 200 })), asked(), /without a 5xx/],
    ['an HTTP status over 999', bytes(reply({ http_code: 1000 })), asked(), /^http_code$/],
    ['a fractional HTTP status', bytes(reply({ http_code: 200.5 })), asked(), /^http_code$/],
    ['an error over 1,000 characters', bytes(reply({ status: 'down', code: 'tls', error: 'x'.repeat(1001) })), asked(), /^error$/],
    ['an error with a control character', bytes(reply({ status: 'down', code: 'tls', error: 'a\u0000b' })), asked(), /^error$/],
    ['negative timings', bytes(reply({ timings: { dns: -1, connect: 0, tls: 0, first_byte: 0, total: 120.5 } })), asked(), /^timings$/],
    [
      'a timing that is text',
      bytes(reply({ timings: { dns: '1', connect: 0, tls: 0, first_byte: 0, total: 120.5 } })),
      asked(),
      /^timings$/
    ],
    ['a missing timing', bytes(reply({ timings: { dns: 1, connect: 0, tls: 0, total: 120.5 } })), asked(), /^timings$/],
    ['total and response_ms apart', bytes(reply({ response_ms: 99 })), asked(), /do not add up/],
    [
      'phases longer than the total',
      bytes(reply({ timings: { dns: 100, connect: 100, tls: 0, first_byte: 0, total: 120.5 } })),
      asked(),
      /do not add up/
    ],
    ['longer than the request was out', bytes(reply()), asked({ elapsedMs: 50 }), /longer than the request was out/],
    ['a final URL on another port', bytes(reply({ final_url: 'https://shop.example.com:6379/' })), asked(), /^final_url$/],
    ['a final URL with credentials', bytes(reply({ final_url: 'https://u:p@shop.example.com/' })), asked(), /^final_url$/],
    ['a final URL of another scheme', bytes(reply({ final_url: 'ftp://shop.example.com/' })), asked(), /^final_url$/],
    ['up without a final URL', bytes(reply({ final_url: null, tls_expires_at: null, tls_issuer: null })), asked(), /^final_url$/],
    ['an expiry long past', bytes(reply({ tls_expires_at: '2001-01-01T00:00:00.000Z' })), asked(), /^tls_expires_at$/],
    ['an expiry past year 9999', bytes(reply({ tls_expires_at: '+275760-09-13T00:00:00.000Z' })), asked(), /^tls_expires_at$/],
    ['an expiry that is no time', bytes(reply({ tls_expires_at: 'soon' })), asked(), /^tls_expires_at$/],
    ['an expiry over plain http', bytes(reply({ final_url: 'http://shop.example.com/' })), asked(), /without a handshake/],
    ['an issuer over 512 characters', bytes(reply({ tls_issuer: 'x'.repeat(513) })), asked(), /^tls_issuer$/],
    ['an issuer without an expiry', bytes(reply({ tls_expires_at: null })), asked(), /^tls_issuer$/]
  ]
  for (const [what, data, ask, reason] of rows) {
    const read = readProbeReply(data, ask)
    t.equal(read.ok, false, `${what}: refused`)
    if (!read.ok) t.match(read.reason, reason, `${what}: ${read.reason}`)
  }
})

t.test('expectations the request carried are what an answer is held to', async (t) => {
  const listed = asked({ request: { ...request, expect: { status: ['200-299', 401] } } })
  t.match(readProbeReply(bytes(reply({ http_code: 401 })), listed), { ok: true }, 'a listed 401 is up')
  t.match(
    readProbeReply(bytes(reply({ status: 'down', code: 'unexpected_status', error: 'expect: status 500', http_code: 500 })), listed),
    {
      ok: true
    }
  )
  const texted = asked({ request: { ...request, expect: { body_contains: 'Sign in' } } })
  t.match(readProbeReply(bytes(reply({ status: 'down', code: 'body_mismatch', error: 'expect: body_contains not found' })), texted), {
    ok: true
  })
  t.match(
    readProbeReply(bytes(reply({ tls_expires_at: new Date(NOW - 3_600_000).toISOString() })), asked()),
    { ok: true },
    'an hour past: clocks differ'
  )
})
