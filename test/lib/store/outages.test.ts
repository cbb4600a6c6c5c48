import t from 'tap'
import {
  closeOutage,
  findOutageAt,
  insertOutage,
  listOpenOutages,
  listOutages,
  listOutageTimes,
  listSitesOutageTimes
} from '../../../lib/store/outages.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000

for (const engine of engines()) {
  t.test(`outages are opened, found and closed, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSites({
      db,
      entries: [
        { domain: 'a.example.com', name: 'A' },
        { domain: 'b.example.com', name: 'B' }
      ],
      now: new Date(T0 - MIN)
    })
    const [a, b] = (await db('sites').orderBy('id').pluck('id')).map(Number) as [number, number]
    const first = await insertOutage({ db, siteId: a, startedAt: new Date(T0) })
    const other = await insertOutage({ db, siteId: b, startedAt: new Date(T0 + MIN) })
    await t.rejects(insertOutage({ db, siteId: a, startedAt: new Date(T0 + MIN) }), 'a site has one open outage at most')

    t.same(
      [...(await listOpenOutages({ db, siteIds: [a, b] })).entries()],
      [
        [a, { id: first, site_id: a, started_at: new Date(T0), ended_at: null }],
        [b, { id: other, site_id: b, started_at: new Date(T0 + MIN), ended_at: null }]
      ]
    )
    await closeOutage({ db, id: first, endedAt: new Date(T0 + 5 * MIN) })
    t.same([...(await listOpenOutages({ db, siteIds: [a, b] })).keys()], [b], 'a closed outage is no longer open')
    const cause = {
      summary: 'HTTP 500 from 3 of 3 locations',
      locations: [{ location: 'L1', status: 'down' as const, code: 'http_5xx', error: 'http: 500', http_code: 500 }]
    }
    const again = await insertOutage({ db, siteId: a, startedAt: new Date(T0 + 6 * MIN), cause: JSON.stringify(cause) })
    t.ok(again > first, 'and the site may open another')

    const closed = { id: first, site_id: a, started_at: new Date(T0), ended_at: new Date(T0 + 5 * MIN) }
    t.same(await findOutageAt({ db, siteId: a, at: new Date(T0) }), closed, 'found by its start')
    t.same(await findOutageAt({ db, siteId: a, at: new Date(T0 + 5 * MIN) }), closed, 'and by its end')
    t.equal(await findOutageAt({ db, siteId: a, at: new Date(T0 + MIN) }), null, 'not by a time inside it')
    t.equal(await findOutageAt({ db, siteId: b, at: new Date(T0) }), null, "nor by another site's time")

    const listed = await listOutages({ db, ongoing: false, limit: 10 })
    t.same(
      listed.outages,
      [
        { domain: 'a.example.com', name: 'A', started_at: new Date(T0 + 6 * MIN), ended_at: null, cause },
        { domain: 'b.example.com', name: 'B', started_at: new Date(T0 + MIN), ended_at: null, cause: null },
        { domain: 'a.example.com', name: 'A', started_at: new Date(T0), ended_at: new Date(T0 + 5 * MIN), cause: null }
      ],
      'listed newest first, as dates, with the cause each opened with'
    )
  })
}

for (const engine of engines()) {
  t.test(`a site's outages overlapping a window, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSites({
      db,
      entries: [
        { domain: 'sla.example.com', name: 'SLA' },
        { domain: 'other.example.com', name: 'Other' }
      ],
      now: new Date(T0 - MIN)
    })
    const [site, other] = (await db('sites').orderBy('id').pluck('id')).map(Number) as [number, number]
    // Closed outages at [0, 10), [20, 30), [40, 50) minutes and an open one from 60.
    const spans: Array<[number, number | null]> = [
      [0, 10],
      [20, 30],
      [40, 50],
      [60, null]
    ]
    for (const [start, end] of spans) {
      const id = await insertOutage({ db, siteId: site, startedAt: new Date(T0 + start * MIN) })
      if (end !== null) await closeOutage({ db, id, endedAt: new Date(T0 + end * MIN) })
    }
    const otherId = await insertOutage({ db, siteId: other, startedAt: new Date(T0 + 5 * MIN) })
    await closeOutage({ db, id: otherId, endedAt: new Date(T0 + 45 * MIN) })

    const starts = async (from: number, to: number) =>
      (await listOutageTimes({ db, siteId: site, from: new Date(T0 + from * MIN), to: new Date(T0 + to * MIN) })).map(
        (o) => (o.started - T0) / MIN
      )
    const rows: Array<[string, number, number, number[]]> = [
      ['the whole history', -60, 120, [0, 20, 40, 60]],
      ['a window cutting outages at both ends', 5, 45, [0, 20, 40]],
      ['a window inside one outage', 22, 28, [20]],
      ['a window between outages', 10, 20, []],
      ['an outage ending at the start is out, one starting at the end is out', 30, 40, []],
      ['the open outage reaches every later window', 100, 200, [60]],
      ['before any outage', -60, 0, []]
    ]
    for (const [name, from, to, want] of rows) t.same(await starts(from, to), want, name)
    const [open] = await listOutageTimes({ db, siteId: site, from: new Date(T0 + 100 * MIN), to: new Date(T0 + 200 * MIN) })
    t.match(open, { id: Number, started: T0 + 60 * MIN, ended: null }, 'an open outage comes with no end')
    const [cut] = await listOutageTimes({ db, siteId: site, from: new Date(T0 + 25 * MIN), to: new Date(T0 + 26 * MIN) })
    t.match(cut, { id: Number, started: T0 + 20 * MIN, ended: T0 + 30 * MIN }, 'times in milliseconds')
  })
}

for (const engine of engines()) {
  t.test(`several sites' outages overlapping a window, in one query, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const day = 86_400_000
    const at = Date.parse('2026-11-28T12:00:00.000Z')
    await addSites({
      db,
      entries: ['a.example.com', 'b.example.com', 'c.example.com', 'd.example.com'].map((domain) => ({ domain, name: domain })),
      now: new Date(at - 400 * day)
    })
    const ids = new Map<string, number>()
    for (const r of await db('sites').select('id', 'domain')) ids.set(String(r.domain), Number(r.id))
    const id = (d: string) => ids.get(`${d}.example.com`) as number
    const from = new Date(at - 90 * day)
    const outage = async (site: string, start: number, end: number | null) => {
      const o = await insertOutage({ db, siteId: id(site), startedAt: new Date(start) })
      if (end !== null) await closeOutage({ db, id: o, endedAt: new Date(end) })
    }
    // a: a year of history before the window, the newest reaching into it, then one inside.
    for (let s = at - 365 * day; s < from.getTime() - 2 * day; s += 3 * day) await outage('a', s, s + 3_600_000)
    await outage('a', from.getTime() - day, from.getTime() + 3_600_000)
    await outage('a', at - day, at - day + 60_000)
    // b: ongoing since before the window. c: its newest before the window ended exactly at its start.
    await outage('b', at - 200 * day, null)
    await outage('c', from.getTime() - 2 * day, from.getTime())
    await outage('c', from.getTime(), from.getTime() + 1000)
    // d: on no list asked for.
    await outage('d', at - day, null)

    const got = await listSitesOutageTimes({ db, siteIds: [id('c'), id('a'), id('b'), id('a')], from, to: new Date(at) })
    t.same(
      got.map((o) => [o.site_id, o.started, o.ended]),
      [
        [id('a'), from.getTime() - day, from.getTime() + 3_600_000],
        [id('a'), at - day, at - day + 60_000],
        [id('b'), at - 200 * day, null],
        [id('c'), from.getTime(), from.getTime() + 1000]
      ].sort((x, y) => (x[0] as number) - (y[0] as number)),
      'by site, oldest first: what reaches into the window, never what ended at its start, never another site'
    )
    t.same(await listSitesOutageTimes({ db, siteIds: [], from, to: new Date(at) }), [], 'no sites: none, no query')
  })
}
