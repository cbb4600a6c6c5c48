import t from 'tap'
import { closeOutage, findOutageAt, insertOutage, listOpenOutages, listOutages } from '../../../lib/store/outages.js'
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
