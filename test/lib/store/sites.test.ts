import t from 'tap'
import { toDate } from '../../../lib/store/db.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { listTrackedSites, lockSites, lockTrackedSite, markSiteRemoved } from '../../../lib/store/sites.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000

for (const engine of engines()) {
  t.test(`a removed site is kept but no longer tracked, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSites({
      db,
      entries: [
        { domain: 'gone.example.com', name: null },
        { domain: 'kept.example.com', name: null }
      ],
      now: new Date(T0 - MIN)
    })
    const site = await lockTrackedSite({ db, domain: 'gone.example.com' })
    t.ok(site, 'a tracked site is found by domain')
    await markSiteRemoved({ db, id: site?.id as number, now: new Date(T0) })
    t.same(
      (await listTrackedSites({ db })).map((s) => s.domain),
      ['kept.example.com']
    )
    t.equal(await lockTrackedSite({ db, domain: 'gone.example.com' }), null, 'and no longer as a tracked one')
    t.equal(await lockTrackedSite({ db, domain: 'never.example.com' }), null)
    const row = await db('sites').where({ domain: 'gone.example.com' }).first('removed_at', 'changed_at')
    t.equal(toDate(row.removed_at)?.getTime(), T0)
    t.equal(toDate(row.changed_at)?.getTime(), T0, 'a change the tracked list notices')
  })

  t.test(`locking sites reads what a write needs, removed ones too, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSites({
      db,
      entries: [
        { domain: 'a.example.com', name: null },
        { domain: 'b.example.com', name: null }
      ],
      now: new Date(T0 - MIN)
    })
    const [a, b] = (await db('sites').orderBy('id').pluck('id')).map(Number) as [number, number]
    await db('sites')
      .where({ id: a })
      .update({ checked_at: new Date(T0), max_response_ms: 2000, slow: true, slow_streak: 1, maintenance_until: new Date(T0 + 10 * MIN) })
    await markSiteRemoved({ db, id: b, now: new Date(T0 + MIN) })
    const locked = await db.transaction((trx) => lockSites({ db: trx, ids: [b, a, a, b + 100] }))
    t.same(
      [...locked.values()],
      [
        {
          id: a,
          domain: 'a.example.com',
          name: 'a.example.com',
          added_at: new Date(T0 - MIN),
          removed_at: null,
          checked_at: new Date(T0),
          tls_notice: null,
          max_response_ms: 2000,
          slow: { slow: true, streak: 1 },
          maintenance_until: new Date(T0 + 10 * MIN)
        },
        {
          id: b,
          domain: 'b.example.com',
          name: 'b.example.com',
          added_at: new Date(T0 - MIN),
          removed_at: new Date(T0 + MIN),
          checked_at: null,
          tls_notice: null,
          max_response_ms: null,
          slow: { slow: false, streak: 0 },
          maintenance_until: null
        }
      ],
      'in id order, once each; a site whose row is gone is missing'
    )
  })
}
