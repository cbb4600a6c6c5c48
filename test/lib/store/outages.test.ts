import t from 'tap'
import { closeOutage, findOutageAt, insertOutage, listOpenOutages, listOutages, listOutageTimes } from '../../../lib/store/outages.js'
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
    const again = await insertOutage({ db, siteId: a, startedAt: new Date(T0 + 6 * MIN) })
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
        { domain: 'a.example.com', name: 'A', started_at: new Date(T0 + 6 * MIN), ended_at: null },
        { domain: 'b.example.com', name: 'B', started_at: new Date(T0 + MIN), ended_at: null },
        { domain: 'a.example.com', name: 'A', started_at: new Date(T0), ended_at: new Date(T0 + 5 * MIN) }
      ],
      'listed newest first, as dates'
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
