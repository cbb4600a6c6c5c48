import t, { type Test } from 'tap'
import { gunzipSync } from 'node:zlib'
import { makeBadge } from 'badge-maker'
import { BADGE_CACHE_CONTROL, BadgeRenderer } from '../../../lib/badge/renderer.js'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer } from '../../helpers/server.js'
import { MIN, trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const STYLES = ['flat', 'flat-square', 'plastic', 'for-the-badge'] as const
const SITES = [
  { domain: 'up.example.com', name: 'Up Shop' },
  { domain: 'down.example.com', name: 'Down Shop' },
  { domain: 'lonely.example.com', name: 'Lonely' },
  { domain: 'never.example.com', name: 'Never' },
  { domain: 'blocked.example.com', name: 'Blocked' },
  { domain: 'partial.example.com', name: 'Partial' }
]

async function server(t: Test, engine: 'sqlite' | 'mysql' = 'sqlite') {
  const s = await trackedServer(t, { engine, sites: SITES, start: T0 })
  await s.feed('up.example.com', 'up', T0 - 1000)
  await s.feed('down.example.com', 'down', T0 - 1000)
  await s.feed('lonely.example.com', 'unconfirmed', T0 - 1000)
  await s.feed('blocked.example.com', 'up', T0 - 1000, { blocked: true })
  await s.feed('partial.example.com', 'down', T0 - 1000, { partial: true })
  return s
}

for (const engine of engines()) {
  t.test(`a badge per status and style, drawn by badge-maker, on ${engine}`, async (t) => {
    const s = await server(t, engine)
    const expected: Array<[string, string, string, string]> = [
      ['up.example.com', 'Up Shop', 'up', 'green'],
      ['down.example.com', 'Down Shop', 'down', 'red'],
      ['lonely.example.com', 'Lonely', 'unconfirmed', 'yellow'],
      ['never.example.com', 'Never', 'pending', 'lightgrey'],
      ['blocked.example.com', 'Blocked', 'up (blocked)', 'green'],
      ['partial.example.com', 'Partial', 'down (partial)', 'red'],
      ['untracked.example.com', 'status', 'not tracked', 'lightgrey']
    ]
    for (const [domain, label, message, color] of expected) {
      for (const style of STYLES) {
        const res = await s.server.inject(`/api/badge/${domain}?style=${style}`)
        t.equal(res.statusCode, 200, `${domain} ${style}`)
        t.equal(res.headers['content-type'], 'image/svg+xml')
        t.equal(res.payload, makeBadge({ label, message, color, style }), `${domain} ${style}: "${label} | ${message}" in ${color}`)
        matchesOpenApi(t, res)
      }
    }
    const flat = await s.server.inject('/api/badge/up.example.com')
    t.equal(flat.payload, makeBadge({ label: 'Up Shop', message: 'up', color: 'green', style: 'flat' }), 'flat by default')
  })
}

t.test('badge headers: cacheable by anyone, embeddable anywhere, no key', async (t) => {
  const s = await server(t)
  const res = await s.server.inject('/api/badge/up.example.com')
  t.match(res.headers, {
    'cache-control': 'public, max-age=20, stale-while-revalidate=30',
    'access-control-allow-origin': '*',
    'cross-origin-resource-policy': 'cross-origin',
    'x-content-type-options': 'nosniff',
    etag: /^"[A-Za-z0-9_-]{32}"$/
  })
  t.notOk(res.headers['set-cookie'])
  t.notOk(res.headers['content-security-policy'], 'no page policy on an image')
  const key = await s.issueKey({ limit: 5 })
  for (let i = 0; i < 20; i++) {
    const keyed = await s.server.inject({ url: '/api/badge/up.example.com', headers: bearer(key) })
    t.equal(keyed.statusCode, 200)
    t.notOk(keyed.headers['ratelimit-limit'], 'not counted against any key')
  }
  const budget = await s.server.inject({ url: '/api/v1/rate_limit', headers: bearer(key) })
  t.equal(JSON.parse(budget.payload).remaining, 5, "the key's budget is untouched")
  t.notOk(
    s.logs.lines.some((l) => l.includes('/api/badge/')),
    'badge hits are not access-logged'
  )
  await s.server.inject('/sites/up.example.com')
  t.ok(
    s.logs.lines.some((l) => l.includes('/sites/up.example.com')),
    'pages are'
  )
})

t.test('ETag and If-None-Match', async (t) => {
  const s = await server(t)
  const first = await s.server.inject('/api/badge/up.example.com')
  const etag = first.headers.etag as string
  const again = await s.server.inject({ url: '/api/badge/up.example.com', headers: { 'if-none-match': etag } })
  t.equal(again.statusCode, 304)
  t.equal(again.payload, '', 'no body')
  t.equal(again.headers.etag, etag)
  t.equal(again.headers['cache-control'], BADGE_CACHE_CONTROL)
  t.equal(again.headers['access-control-allow-origin'], '*')
  matchesOpenApi(t, again)
  t.equal(
    (await s.server.inject({ url: '/api/badge/up.example.com', headers: { 'if-none-match': `"nope", ${etag}` } })).statusCode,
    304,
    'in a list'
  )
  t.equal(
    (await s.server.inject({ url: '/api/badge/up.example.com', headers: { 'if-none-match': '"other"' } })).statusCode,
    200,
    'another tag gets the badge'
  )
  t.equal(
    (await s.server.inject({ url: '/api/badge/up.example.com?style=plastic', headers: { 'if-none-match': etag } })).statusCode,
    200,
    'another style is another badge'
  )

  const gz = await s.server.inject({ url: '/api/badge/up.example.com', headers: { 'accept-encoding': 'gzip' } })
  t.equal(gz.headers['content-encoding'], 'gzip')
  t.equal(gz.headers.vary, 'accept-encoding')
  t.equal(gunzipSync(gz.rawPayload).toString(), first.payload, 'the same badge, gzipped')
  t.equal(gz.headers.etag, `${etag.slice(0, -1)}-gzip"`, 'the gzipped body has its own strong ETag')
  t.equal(
    (
      await s.server.inject({
        url: '/api/badge/up.example.com',
        headers: { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag as string }
      })
    ).statusCode,
    304
  )

  const deflate = await s.server.inject({ url: '/api/badge/up.example.com', headers: { 'accept-encoding': 'deflate' } })
  t.equal(deflate.headers['content-encoding'], 'deflate', 'other codings are applied by hapi')
  t.equal(deflate.headers.etag, `${etag.slice(0, -1)}-deflate"`, 'with their own strong ETag')

  const head = await s.server.inject({ method: 'HEAD', url: '/api/badge/up.example.com' })
  t.equal(head.statusCode, 200, 'HEAD works')
  t.equal(head.payload, '')
  t.equal(head.headers.etag, etag)
  t.equal(head.headers['content-type'], 'image/svg+xml')
})

t.test('a badge is drawn once per state change, not once per hit', async (t) => {
  const s = await server(t)
  const first = await s.server.inject('/api/badge/up.example.com')
  const drawn = s.badges.renders
  for (let i = 0; i < 200; i++) await s.server.inject('/api/badge/up.example.com')
  t.equal(s.badges.renders, drawn, 'two hundred hits drew nothing new')

  await s.feed('up.example.com', 'down', T0)
  const down = await s.server.inject({ url: '/api/badge/up.example.com', headers: { 'if-none-match': first.headers.etag as string } })
  t.equal(down.statusCode, 200, 'the old ETag no longer matches')
  t.match(down.payload, /<title>Up Shop: down<\/title>/)
  t.not(down.headers.etag, first.headers.etag)
  t.equal(s.badges.renders, drawn + 1, 'the change drew one badge')
  for (let i = 0; i < 50; i++) await s.server.inject('/api/badge/up.example.com')
  t.equal(s.badges.renders, drawn + 1)

  s.clock.now = T0 + 3 * MIN + 1
  t.match(
    (await s.server.inject('/api/badge/up.example.com')).payload,
    /<title>Up Shop: unavailable<\/title>/,
    'no fresh check: unavailable'
  )
  await s.db('sites').where({ domain: 'up.example.com' }).update({ name: 'Renamed' })
  await s.states.refresh(s.db, new Date(s.clock.now))
  t.match((await s.server.inject('/api/badge/up.example.com')).payload, /<title>Renamed: unavailable<\/title>/, 'a new name is a new label')
})

t.test('options and domains', async (t) => {
  const s = await server(t)
  const label = await s.server.inject('/api/badge/up.example.com?label=uptime&v=3')
  t.equal(
    label.payload,
    makeBadge({ label: 'uptime', message: 'up', color: 'green', style: 'flat' }),
    'label override; unknown parameters ignored'
  )
  const bare = await s.server.inject('/api/badge/up.example.com?label=')
  t.equal(bare.payload, makeBadge({ label: '', message: 'up', color: 'green', style: 'flat' }), 'an empty label draws the message alone')
  const escaped = await s.server.inject(`/api/badge/up.example.com?label=${encodeURIComponent('<b>&')}`)
  t.match(escaped.payload, /&lt;b&gt;&amp;/)
  const plain = (await s.server.inject('/api/badge/up.example.com')).payload
  t.equal((await s.server.inject('/api/badge/UP.Example.COM.')).payload, plain, 'the domain is normalised')
  t.equal((await s.server.inject(`/api/badge/${encodeURIComponent('https://Up.Example.com/')}`)).payload, plain, 'a pasted URL too')
  t.match((await s.server.inject('/api/badge/b%C3%BCcher.example')).payload, /not tracked/, 'an untracked IDN gets the grey badge')

  const bad: Array<[string, RegExp]> = [
    ['/api/badge/up.example.com?style=social', /"style" must be one of/],
    ['/api/badge/up.example.com?style=FLAT', /"style"/],
    ['/api/badge/up.example.com?style=flat&style=plastic', /"style"/],
    [`/api/badge/up.example.com?label=${'x'.repeat(65)}`, /"label" must be at most 64/],
    ['/api/badge/up.example.com?label=a%0Ab', /control characters/],
    ['/api/badge/localhost', /fully qualified/],
    ['/api/badge/127.0.0.1', /IP address/],
    ['/api/badge/bad_domain.com', /letters, digits/],
    ['/api/badge/up.example.com/endpoint?style=round', /"style"/]
  ]
  for (const [url, message] of bad) {
    const res = await s.server.inject(url)
    t.equal(res.statusCode, 400, url)
    t.match(res.headers['content-type'], /^application\/json/, url)
    t.same(Object.keys(JSON.parse(res.payload)), ['error'], url)
    t.match(JSON.parse(res.payload).error, message, url)
    matchesOpenApi(t, res, url)
  }
  const post = await s.server.inject({ method: 'POST', url: '/api/badge/up.example.com' })
  t.equal(post.statusCode, 405)
  matchesOpenApi(t, post)
})

t.test("the endpoint form: shields.io's JSON", async (t) => {
  const s = await server(t)
  const cases: Array<[string, Record<string, unknown>]> = [
    ['up.example.com', { label: 'Up Shop', message: 'up', color: 'green' }],
    ['down.example.com', { label: 'Down Shop', message: 'down', color: 'red' }],
    ['lonely.example.com', { label: 'Lonely', message: 'unconfirmed', color: 'yellow' }],
    ['never.example.com', { label: 'Never', message: 'pending', color: 'lightgrey' }],
    ['blocked.example.com', { label: 'Blocked', message: 'up (blocked)', color: 'green' }],
    ['untracked.example.com', { label: 'status', message: 'not tracked', color: 'lightgrey' }]
  ]
  for (const [domain, fields] of cases) {
    const res = await s.server.inject(`/api/badge/${domain}/endpoint`)
    t.equal(res.statusCode, 200)
    t.same(JSON.parse(res.payload), { schemaVersion: 1, ...fields, cacheSeconds: 300 }, domain)
    t.match(res.headers, {
      'content-type': /^application\/json/,
      'cache-control': domain.startsWith('untracked') ? 'no-store' : BADGE_CACHE_CONTROL,
      'access-control-allow-origin': '*',
      etag: /^"/
    })
    matchesOpenApi(t, res)
  }
  const styled = await s.server.inject('/api/badge/up.example.com/endpoint?style=for-the-badge&label=web')
  t.same(JSON.parse(styled.payload), {
    schemaVersion: 1,
    label: 'web',
    message: 'up',
    color: 'green',
    cacheSeconds: 300,
    style: 'for-the-badge'
  })
  const etag = styled.headers.etag as string
  const again = await s.server.inject({
    url: '/api/badge/up.example.com/endpoint?style=for-the-badge&label=web',
    headers: { 'if-none-match': etag }
  })
  t.equal(again.statusCode, 304)
  matchesOpenApi(t, again)
})

t.test('made-up labels cannot evict the badges people embed', async (t) => {
  // A small cache, so that the flood below would fill it many times over if labels shared it.
  const badges = new BadgeRenderer({ maxBytes: 64 * 1024 })
  const s = await trackedServer(t, { sites: SITES, start: T0, badges })
  const embedded = ['up.example.com', 'down.example.com', 'lonely.example.com']
  for (const domain of embedded) t.equal((await s.server.inject(`/api/badge/${domain}`)).statusCode, 200)
  const drawn = badges.renders
  const bytes = badges.bytes
  for (let i = 0; i < 5000; i++) {
    const res = await s.server.inject(`/api/badge/up.example.com?label=flood-${i}`)
    if (res.statusCode !== 200) t.fail(`label ${i}: ${res.statusCode}`)
  }
  t.equal(badges.renders, drawn + 5000, 'each made-up label was drawn once')
  t.equal(badges.bytes, bytes, 'and none of them went into the shared cache')
  for (const domain of embedded) await s.server.inject(`/api/badge/${domain}`)
  t.equal(badges.renders, drawn + 5000, 'the embedded badges were still there: nothing was drawn again')
})
