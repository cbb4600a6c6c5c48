import t from 'tap'
import type { Db } from '../../../lib/store/db.js'
import { addSite } from '../../../lib/store/sites.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer, testServer } from '../../helpers/server.js'

const T0 = Date.parse('2026-11-01T00:00:00.000Z')
const MIN = 60_000

async function site(db: Db, domain: string, name: string): Promise<number> {
  await addSite({ db, entry: { domain, name }, now: new Date(T0 - 1000 * MIN) })
  return Number((await db('sites').where({ domain }).first('id')).id)
}

async function outage(db: Db, siteId: number, start: number, end: number | null): Promise<void> {
  await db('outages').insert({ site_id: siteId, started_at: new Date(start), ended_at: end === null ? null : new Date(end), open_site_id: end === null ? siteId : null })
}

for (const engine of engines()) {
  t.test(`the outages list on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    let now = T0 + 1000 * MIN
    const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url }, now: () => new Date(now) })
    const key = await issueKey({ limit: 10_000 })
    const get = async (query: string) => {
      const res = await server.inject({ url: `/api/v1/outages${query}`, headers: bearer(key) })
      matchesOpenApi(t, res)
      return { code: res.statusCode, body: JSON.parse(res.payload), remaining: Number(res.headers['ratelimit-remaining']) }
    }
    const shop = await site(db, 'shop.example.com', 'Shop')
    const blog = await site(db, 'blog.example.com', 'Blog')
    await outage(db, shop, T0 + 10 * MIN + 123, T0 + 12 * MIN + 623)
    await outage(db, blog, T0 + 20 * MIN, T0 + 21 * MIN)
    await outage(db, shop, T0 + 20 * MIN, T0 + 25 * MIN) // same start as blog's: the higher id comes first
    await outage(db, blog, T0 + 900 * MIN, null)

    const all = await get('')
    t.equal(all.code, 200)
    t.same(all.body, {
      outages: [
        { domain: 'blog.example.com', name: 'Blog', started_at: '2026-11-01T15:00:00.000Z', ended_at: null, duration_seconds: 6000 },
        { domain: 'shop.example.com', name: 'Shop', started_at: '2026-11-01T00:20:00.000Z', ended_at: '2026-11-01T00:25:00.000Z', duration_seconds: 300 },
        { domain: 'blog.example.com', name: 'Blog', started_at: '2026-11-01T00:20:00.000Z', ended_at: '2026-11-01T00:21:00.000Z', duration_seconds: 60 },
        { domain: 'shop.example.com', name: 'Shop', started_at: '2026-11-01T00:10:00.123Z', ended_at: '2026-11-01T00:12:00.623Z', duration_seconds: 120 }
      ],
      next_cursor: null
    }, 'newest first, ties by id, exact fields and formats')
    now += 5000
    t.equal((await get('?ongoing=1')).body.outages[0].duration_seconds, 6005, 'an ongoing outage grows with the clock')
    t.same((await get('?ongoing=1')).body.outages.map((o: { domain: string }) => o.domain), ['blog.example.com'], 'ongoing=1 lists only open ones')
    t.equal((await get('?ongoing=0')).body.outages.length, 4, 'ongoing=0 lists all')
    t.same((await get('?domain=HTTPS://Shop.Example.com/')).body.outages.map((o: { started_at: string }) => o.started_at),
      ['2026-11-01T00:20:00.000Z', '2026-11-01T00:10:00.123Z'], 'the domain filter normalises its input')
    t.same((await get('?domain=untracked.example.com')).body, { outages: [], next_cursor: null }, 'an untracked domain gives an empty list')
    t.equal((await get('?limit=1')).body.outages.length, 1)
    const before = (await get('')).remaining
    t.equal((await get('')).remaining, before - 1, 'a listing costs 1')
  })
}

t.test('paging with next_cursor visits every outage once, in order', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url }, now: () => new Date(T0 + 10_000 * MIN) })
  const key = await issueKey({ limit: 10_000 })
  const a = await site(db, 'a.example.com', 'A')
  const b = await site(db, 'b.example.com', 'B')
  const rows = Array.from({ length: 250 }, (_, i) => ({
    site_id: i % 2 === 0 ? a : b,
    // Pairs share a start time so the id tie-break is exercised across page boundaries.
    started_at: new Date(T0 + Math.floor(i / 2) * MIN),
    ended_at: new Date(T0 + Math.floor(i / 2) * MIN + 30_000),
    open_site_id: null
  }))
  for (let i = 0; i < rows.length; i += 50) await db('outages').insert(rows.slice(i, i + 50))
  const seen: string[] = []
  let cursor: string | null = ''
  let pages = 0
  while (cursor !== null && pages < 10) {
    const res = await server.inject({ url: `/api/v1/outages?limit=100${cursor ? `&cursor=${cursor}` : ''}`, headers: bearer(key) })
    const body = JSON.parse(res.payload) as { outages: Array<{ domain: string; started_at: string }>; next_cursor: string | null }
    seen.push(...body.outages.map((o) => `${o.started_at} ${o.domain}`))
    cursor = body.next_cursor
    pages++
  }
  t.equal(pages, 3, 'three pages of at most 100')
  t.equal(seen.length, 250, 'every outage')
  t.equal(new Set(seen).size, 250, 'exactly once')
  const starts = seen.map((s) => s.slice(0, 24))
  t.ok(starts.every((s, i) => i === 0 || (starts[i - 1] as string) >= s), 'newest first throughout')
  t.ok(seen.indexOf(`${rows[1]!.started_at.toISOString()} b.example.com`) < seen.indexOf(`${rows[0]!.started_at.toISOString()} a.example.com`),
    'within a tie, the later id comes first')
})

t.test('bad parameters get 400 JSON', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url } })
  const key = await issueKey({ limit: 10_000 })
  const cases: Array<[string, RegExp]> = [
    ['limit=0', /limit/], ['limit=201', /limit/], ['limit=abc', /limit/], ['limit=1.5', /limit/], ['limit=', /limit/],
    ['ongoing=2', /ongoing/], ['ongoing=true', /ongoing/], ['ongoing=', /ongoing/],
    ['domain=localhost', /fully qualified/], ['domain=127.0.0.1', /IP address/], ['domain=example.com:8080', /port/],
    ['cursor=nonsense', /cursor/], ['cursor=' + Buffer.from('1.2.3').toString('base64url'), /cursor/],
    ['page=2', /"page" is not allowed/]
  ]
  for (const [query, message] of cases) {
    const res = await server.inject({ url: `/api/v1/outages?${query}`, headers: bearer(key) })
    t.equal(res.statusCode, 400, query)
    matchesOpenApi(t, res, query)
    t.match(JSON.parse(res.payload), { error: message }, query)
  }
  const noKey = await server.inject({ url: '/api/v1/outages' })
  t.equal(noKey.statusCode, 401)
  matchesOpenApi(t, noKey)
  const ok = await server.inject({ url: '/api/v1/outages?limit=200&ongoing=1', headers: bearer(key) })
  t.equal(ok.statusCode, 200, 'the largest limit is accepted')
})

t.test('the listing query uses an outages index on MySQL', { skip: process.env.TEST_MYSQL_URL ? false : 'needs TEST_MYSQL_URL' }, async (t) => {
  const { db } = await migratedDb('mysql', t)
  const [plan] = await db.raw("EXPLAIN SELECT o.id FROM outages o JOIN sites s ON s.id = o.site_id ORDER BY o.started_at DESC, o.id DESC LIMIT 51")
  const outagesRow = (plan as Array<{ table: string; key: string | null; Extra: string | null }>).find((r) => r.table === 'o')
  t.ok(outagesRow, 'the plan reads outages')
  t.notMatch(String(outagesRow?.Extra ?? ''), /filesort/, 'no filesort: the order comes from an index')
})
