import t, { type Test } from 'tap'
import type { Db } from '../../../lib/store/db.js'
import { listOutages } from '../../../lib/store/outages.js'
import { addSite } from '../../../lib/monitoring/add-sites.js'
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
  await db('outages').insert({
    site_id: siteId,
    started_at: new Date(start),
    ended_at: end === null ? null : new Date(end),
    open_site_id: end === null ? siteId : null
  })
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
    t.same(
      all.body,
      {
        outages: [
          {
            domain: 'blog.example.com',
            name: 'Blog',
            started_at: '2026-11-01T15:00:00.000Z',
            ended_at: null,
            duration_seconds: 6000,
            cause: null
          },
          {
            domain: 'shop.example.com',
            name: 'Shop',
            started_at: '2026-11-01T00:20:00.000Z',
            ended_at: '2026-11-01T00:25:00.000Z',
            duration_seconds: 300,
            cause: null
          },
          {
            domain: 'blog.example.com',
            name: 'Blog',
            started_at: '2026-11-01T00:20:00.000Z',
            ended_at: '2026-11-01T00:21:00.000Z',
            duration_seconds: 60,
            cause: null
          },
          {
            domain: 'shop.example.com',
            name: 'Shop',
            started_at: '2026-11-01T00:10:00.123Z',
            ended_at: '2026-11-01T00:12:00.623Z',
            duration_seconds: 120,
            cause: null
          }
        ],
        next_cursor: null
      },
      'newest first, ties by id, exact fields and formats'
    )
    now += 5000
    t.equal((await get('?ongoing=1')).body.outages[0].duration_seconds, 6005, 'an ongoing outage grows with the clock')
    t.same(
      (await get('?ongoing=1')).body.outages.map((o: { domain: string }) => o.domain),
      ['blog.example.com'],
      'ongoing=1 lists only open ones'
    )
    t.equal((await get('?ongoing=0')).body.outages.length, 4, 'ongoing=0 lists all')
    t.same(
      (await get('?domain=HTTPS://Shop.Example.com/')).body.outages.map((o: { started_at: string }) => o.started_at),
      ['2026-11-01T00:20:00.000Z', '2026-11-01T00:10:00.123Z'],
      'the domain filter normalises its input'
    )
    t.same((await get('?domain=untracked.example.com')).body, { outages: [], next_cursor: null }, 'an untracked domain gives an empty list')
    t.equal((await get('?limit=1')).body.outages.length, 1)
    const before = (await get('')).remaining
    t.equal((await get('')).remaining, before - 1, 'a listing costs 1')
  })
}

for (const engine of engines()) {
  t.test(`paging with next_cursor visits every outage once, in order, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
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
    t.ok(
      starts.every((s, i) => i === 0 || (starts[i - 1] as string) >= s),
      'newest first throughout'
    )
    t.ok(
      seen.indexOf(`${rows[1]!.started_at.toISOString()} b.example.com`) <
        seen.indexOf(`${rows[0]!.started_at.toISOString()} a.example.com`),
      'within a tie, the later id comes first'
    )
  })

  t.test(`bad parameters get 400 JSON on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url } })
    const key = await issueKey({ limit: 10_000 })
    const cases: Array<[string, RegExp]> = [
      ['limit=0', /limit/],
      ['limit=201', /limit/],
      ['limit=abc', /limit/],
      ['limit=1.5', /limit/],
      ['limit=', /limit/],
      ['ongoing=2', /ongoing/],
      ['ongoing=true', /ongoing/],
      ['ongoing=', /ongoing/],
      ['domain=localhost', /fully qualified/],
      ['domain=127.0.0.1', /IP address/],
      ['domain=example.com:8080', /port/],
      ['cursor=nonsense', /cursor/],
      ['cursor=' + Buffer.from('1.2.3').toString('base64url'), /cursor/],
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

  t.test(`the default limit is 50 on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url }, now: () => new Date(T0 + 10_000 * MIN) })
    const key = await issueKey({ limit: 10_000 })
    const a = await site(db, 'a.example.com', 'A')
    await db('outages').insert(
      Array.from({ length: 60 }, (_, i) => ({
        site_id: a,
        started_at: new Date(T0 + i * MIN),
        ended_at: new Date(T0 + i * MIN + 1000),
        open_site_id: null
      }))
    )
    const get = async (query: string) => JSON.parse((await server.inject({ url: `/api/v1/outages${query}`, headers: bearer(key) })).payload)
    const first = await get('')
    t.equal(first.outages.length, 50, 'without limit a page holds 50')
    t.equal(first.outages[0].started_at, new Date(T0 + 59 * MIN).toISOString(), 'the newest 50')
    t.type(first.next_cursor, 'string', 'with a cursor to the rest')
    const rest = await get(`?cursor=${first.next_cursor}`)
    t.equal(rest.outages.length, 10, 'the next page keeps the default and holds the other 10')
    t.equal(rest.next_cursor, null)
    t.equal((await get('?limit=200')).outages.length, 60, 'a larger limit is honoured')
  })
}

t.test(
  'the listing query uses an outages index on MySQL',
  { skip: process.env.TEST_MYSQL_URL ? false : 'needs TEST_MYSQL_URL' },
  async (t) => {
    const { db } = await migratedDb('mysql', t)
    const [plan] = await db.raw(
      'EXPLAIN SELECT o.id FROM outages o JOIN sites s ON s.id = o.site_id ORDER BY o.started_at DESC, o.id DESC LIMIT 51'
    )
    const outagesRow = (plan as Array<{ table: string; key: string | null; Extra: string | null }>).find((r) => r.table === 'o')
    t.ok(outagesRow, 'the plan reads outages')
    t.notMatch(outagesRow?.Extra ?? '', /filesort/, 'no filesort: the order comes from an index')
  }
)

type PlanRow = { table: string; type: string; key: string | null; rows: number; Extra: string | null }

/** `sites` sites and `count` outages, bulk inserted; the newest outage of every other site is still open. */
async function fillOutages(db: Db, sites: number, count: number): Promise<void> {
  for (let i = 0; i < sites; i += 1000) {
    await db('sites').insert(
      Array.from({ length: Math.min(1000, sites - i) }, (_, j) => ({
        domain: `site${i + j}.example.com`,
        name: `Site ${i + j}`,
        added_at: new Date(T0 - 1000 * MIN)
      }))
    )
  }
  const ids = (await db('sites').orderBy('id').pluck('id')) as number[]
  const rows = Array.from({ length: count }, (_, i) => {
    const siteId = ids[i % sites] as number
    const open = i >= count - sites && i % 2 === 0
    return {
      site_id: siteId,
      started_at: new Date(T0 + i * MIN),
      ended_at: open ? null : new Date(T0 + i * MIN + 30_000),
      open_site_id: open ? siteId : null
    }
  })
  for (let i = 0; i < rows.length; i += 2000) await db('outages').insert(rows.slice(i, i + 2000))
  await db.raw('ANALYZE TABLE outages, sites')
}

/** Runs the real listing and returns its page and MySQL's plan for the very query it sent. */
async function listingPlan(t: Test, db: Db, args: { domain?: string; ongoing: boolean; before?: { startedAt: number; id: number } }) {
  const seen: Array<{ sql: string; bindings: unknown[] }> = []
  const listener = (q: { sql: string; bindings: unknown[] }) => seen.push(q)
  db.on('query', listener)
  const page = await listOutages({ db, limit: 51, ...args })
  db.off('query', listener)
  t.equal(seen.length, 1, 'one query per page')
  const [plan] = await db.raw(`EXPLAIN ${seen[0]!.sql}`, seen[0]!.bindings as never)
  return { page, plan: plan as PlanRow[] }
}

const mysqlOnly = { skip: process.env.TEST_MYSQL_URL ? false : 'needs TEST_MYSQL_URL' }

t.test('the domain and ongoing listings use indexes on MySQL with thousands of outages stored', mysqlOnly, async (t) => {
  const { db } = await migratedDb('mysql', t)
  await fillOutages(db, 200, 5000)
  const shapes: Array<[string, Parameters<typeof listingPlan>[2], number]> = [
    ['domain=', { domain: 'site7.example.com', ongoing: false }, 25],
    ['ongoing=1', { ongoing: true }, 51],
    ['domain= and ongoing=1', { domain: 'site6.example.com', ongoing: true }, 1],
    ['domain= with a cursor', { domain: 'site7.example.com', ongoing: false, before: { startedAt: T0 + 2000 * MIN, id: 2001 } }, 10]
  ]
  for (const [shape, args, expected] of shapes) {
    const { page, plan } = await listingPlan(t, db, args)
    t.equal(page.outages.length, expected, `${shape}: the page is right`)
    for (const row of plan) {
      if (row.table.startsWith('<derived')) {
        // The page itself, at most limit + 1 rows, is what gets joined and ordered.
        t.ok(row.rows <= 52, `${shape}: the page of ${row.rows} outages is joined to the sites`)
        continue
      }
      t.not(row.type, 'ALL', `${shape}: ${row.table} is not read by a full scan`)
      t.ok(row.key, `${shape}: ${row.table} is read through an index (${row.key})`)
    }
    const o = plan.find((r) => r.table === 'outages')
    t.ok(o, `${shape}: the plan reads outages`)
    t.notMatch(o?.Extra ?? '', /filesort/, `${shape}: no filesort, the order comes from an index`)
    t.ok(Number(o?.rows) < 1000, `${shape}: the optimizer expects to read ${o?.rows} of 5,000 outage rows`)
  }
})

t.test('the unfiltered listing reads outages in index order and joins only the page on MySQL, at 10,000 sites', mysqlOnly, async (t) => {
  const { db } = await migratedDb('mysql', t)
  // At this size, a plain join made MySQL read every site, join all their outages and sort them.
  await fillOutages(db, 10_000, 100_000)
  const { page, plan } = await listingPlan(t, db, { ongoing: false })
  t.equal(page.outages[0]?.started_at.toISOString(), new Date(T0 + 99_999 * MIN).toISOString(), 'the newest outage comes first')
  const o = plan.find((r) => r.table === 'outages')
  t.match(o, { key: 'outages_started_at_id' }, 'outages are read through the (started_at, id) index')
  t.notMatch(o?.Extra ?? '', /filesort|temporary/, 'in its order, without sorting them')
  t.match(
    plan.find((r) => r.table === 's'),
    { type: 'eq_ref', key: 'PRIMARY' },
    'each listed outage finds its site by primary key'
  )
  const derived = plan.find((r) => r.table.startsWith('<derived'))
  t.ok(derived && derived.rows <= 52, 'only the page is joined and ordered')
})
