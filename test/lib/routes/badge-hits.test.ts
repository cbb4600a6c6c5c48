/**
 * lib/routes/badge-hits.ts over real HTTP (inject never reaches the listener): a badge URL asked
 * again within the second gets the very answer hapi sent (headers and bytes), per Accept-Encoding;
 * a change of the sites' states or the second's end sends the next ask through hapi; conditional
 * asks, HEAD, codings hapi applies per request, errors and badges of nothing known always go
 * through hapi. Every other route is untouched.
 */
import t, { type Test } from 'tap'
import { gunzipSync } from 'node:zlib'
import { request } from 'undici'
import { BadgeHits } from '../../../lib/routes/badge-hits.js'
import { trackedServer, type TrackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const SITES = [
  { domain: 'up.example.com', name: 'Up Shop' },
  { domain: 'flaky.example.com', name: 'Flaky' }
]

interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
}

async function listening(
  t: Test,
  max?: number
): Promise<{
  s: TrackedServer
  hits: BadgeHits
  clock: { ms: number }
  get: (path: string, headers?: Record<string, string>, method?: 'GET' | 'HEAD') => Promise<Answer>
}> {
  const clock = { ms: 0 }
  let hits: BadgeHits | undefined
  const s = await trackedServer(t, {
    sites: SITES,
    start: T0,
    badgeHits: (states) => {
      hits = new BadgeHits({ changes: () => states.changes, now: () => clock.ms, ...(max === undefined ? {} : { max }) })
      return hits
    }
  })
  await s.feed('up.example.com', 'up', T0 - 1000)
  await s.feed('flaky.example.com', 'up', T0 - 1000)
  await s.server.start()
  t.teardown(() => s.server.stop())
  const get = async (path: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET'): Promise<Answer> => {
    const res = await request(`${s.server.info.uri}${path}`, { method, headers })
    const body = Buffer.from(await res.body.arrayBuffer())
    const { date: _date, ...rest } = res.headers
    return { status: res.statusCode, headers: rest, body }
  }
  return { s, hits: hits as BadgeHits, clock, get }
}

t.test('a badge asked again within the second is the answer hapi sent, without hapi', async (t) => {
  const { hits, get } = await listening(t)
  for (const path of ['/api/badge/up.example.com', '/api/badge/up.example.com/endpoint', '/api/badge/up.example.com?style=flat-square']) {
    const sentBefore = hits.sent
    const first = await get(path)
    t.equal(hits.sent, sentBefore, `${path}: the first ask goes through hapi`)
    const again = await get(path)
    t.equal(hits.sent, sentBefore + 1, `${path}: the second does not`)
    t.same(again, first, `${path}: status, headers and bytes alike`)
    t.match(again.headers, {
      'cache-control': 'public, max-age=20, stale-while-revalidate=30',
      etag: /^"[\w-]+"$/,
      vary: 'accept-encoding',
      'access-control-allow-origin': '*',
      'x-content-type-options': 'nosniff',
      'content-length': String(first.body.length)
    })
  }
  const flat = await get('/api/badge/up.example.com')
  const square = await get('/api/badge/up.example.com?style=flat-square')
  t.not(flat.body.toString(), square.body.toString(), 'each URL its own answer')
})

t.test('gzip is kept apart from identity; a coding hapi applies per request is never kept', async (t) => {
  const { hits, get } = await listening(t)
  const plain = await get('/api/badge/up.example.com')
  const gz = { 'accept-encoding': 'gzip, deflate, br' }
  const first = await get('/api/badge/up.example.com', gz)
  const sent = hits.sent
  const again = await get('/api/badge/up.example.com', gz)
  t.equal(hits.sent, sent + 1, 'the gzip answer is sent again')
  t.same(again, first)
  t.equal(again.headers['content-encoding'], 'gzip')
  t.same(gunzipSync(again.body), plain.body, 'the same badge, compressed')
  t.not(again.headers.etag, plain.headers.etag, 'with its own ETag')
  const identityAgain = await get('/api/badge/up.example.com')
  t.same(identityAgain, plain, 'and identity still gets identity')

  const deflate = { 'accept-encoding': 'deflate' }
  await get('/api/badge/up.example.com', deflate)
  const before = hits.sent
  const deflated = await get('/api/badge/up.example.com', deflate)
  t.equal(hits.sent, before, 'deflate, which hapi applies per request, goes through hapi each time')
  t.equal(deflated.headers['content-encoding'], 'deflate')
})

t.test('conditional asks, HEAD, errors and badges of nothing known go through hapi', async (t) => {
  const { hits, get } = await listening(t)
  const first = await get('/api/badge/up.example.com')
  await get('/api/badge/up.example.com')
  const sent = hits.sent
  const notModified = await get('/api/badge/up.example.com', { 'if-none-match': first.headers.etag as string })
  t.equal(notModified.status, 304, 'a matching If-None-Match is a 304')
  t.equal(notModified.body.length, 0)
  const head = await get('/api/badge/up.example.com', {}, 'HEAD')
  t.equal(head.status, 200)
  t.equal(head.body.length, 0, 'HEAD has no body')
  t.equal(head.headers.etag, first.headers.etag)
  for (const path of ['/api/badge/untracked.example.com', '/api/badge/up.example.com?style=wavy']) {
    const one = await get(path)
    const two = await get(path)
    t.equal(two.headers['cache-control'], 'no-store', `${path}: ${one.status}, no-store`)
    t.same(two, one)
  }
  t.equal(hits.sent, sent, 'none of them was answered without hapi')
  const health = await get('/healthz')
  t.equal(health.status, 200, 'other routes are hapi’s as before')
})

t.test('a change of the states, or the second past, sends the next ask through hapi', async (t) => {
  const { s, hits, clock, get } = await listening(t)
  const path = '/api/badge/flaky.example.com/endpoint'
  const up = await get(path)
  t.match(JSON.parse(up.body.toString()), { message: 'up' })
  await get(path)
  const sent = hits.sent
  await s.feed('flaky.example.com', 'down', T0)
  const down = await get(path)
  t.equal(hits.sent, sent, 'after a check is applied, through hapi')
  t.match(JSON.parse(down.body.toString()), { message: 'down' }, 'which says what the site is now')
  t.same(await get(path), down, 'then sent again')
  t.equal(hits.sent, sent + 1)
  await s.feed('up.example.com', 'down', T0)
  await get(path)
  t.equal(hits.sent, sent + 2, "another site's change leaves a status badge as it is")
  clock.ms += 999
  await get(path)
  t.equal(hits.sent, sent + 3, 'within the second')
  clock.ms += 1
  await get(path)
  t.equal(hits.sent, sent + 3, 'and not past it')
})

t.test('the answers kept are bounded: past the bound the table starts over', async (t) => {
  const { hits, get } = await listening(t, 2)
  await get('/api/badge/up.example.com')
  await get('/api/badge/flaky.example.com')
  t.equal(hits.size, 2)
  await get('/api/badge/up.example.com?label=third')
  t.equal(hits.size, 1, 'the third starts it over')
  const sent = hits.sent
  await get('/api/badge/up.example.com')
  t.equal(hits.sent, sent, 'so the first goes through hapi again')
  await get('/api/badge/up.example.com?label=third')
  t.equal(hits.sent, sent + 1, 'while the third is still kept')
})

t.test('a badge drawn from figures follows every change of the states', async (t) => {
  const { s, hits, get } = await listening(t)
  const path = '/api/badge/flaky.example.com/uptime?window=24h'
  const first = await get(path)
  t.equal(first.status, 200)
  await get(path)
  const sent = hits.sent
  t.equal(sent, 1, 'kept')
  await s.feed('up.example.com', 'down', T0)
  await get(path)
  t.equal(hits.sent, sent, "another site's change sends it through hapi")
  await get(path)
  t.equal(hits.sent, sent + 1, 'then it is kept again')
})
