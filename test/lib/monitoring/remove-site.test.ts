import t from 'tap'
import { recordCheck } from '../../../lib/monitoring/record/record-check.js'
import { removeSite } from '../../../lib/monitoring/remove-site.js'
import { outageRecord } from '../../../lib/routes/outages.js'
import { toDate } from '../../../lib/store/db.js'
import { listOutages } from '../../../lib/store/outages.js'
import { addSite } from '../../../lib/monitoring/add-sites.js'
import { scheduledCheck } from '../../helpers/checks.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000

const check = scheduledCheck

for (const engine of engines()) {
  t.test(`removing a site ends its ongoing outage at the removal, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'gone.example.com', name: null }, now: new Date(T0 - MIN) })
    await addSite({ db, entry: { domain: 'other.example.com', name: null }, now: new Date(T0 - MIN) })
    const id = async (domain: string) => Number((await db('sites').where({ domain }).first('id')).id)
    const gone = await id('gone.example.com')
    const other = await id('other.example.com')
    await recordCheck({ db, check: check(gone, 'down', T0) })
    await recordCheck({ db, check: check(other, 'down', T0 + 500) })

    t.ok(await removeSite({ db, domain: 'gone.example.com', now: new Date(T0 + 10 * MIN + 250) }))
    const rows = await db('outages').orderBy('id').select('site_id', 'started_at', 'ended_at', 'open_site_id')
    t.equal(rows.length, 2, 'the outage is kept')
    t.same(toDate(rows[0].ended_at)?.toISOString(), '2026-11-22T06:10:00.250Z', 'ended at the removal')
    t.equal(rows[0].open_site_id, null, 'and no longer open')
    t.equal(rows[1].ended_at, null, "another site's outage stays open")
    t.equal(Number(rows[1].open_site_id), other)
    const listed = await listOutages({ db, domain: 'gone.example.com', ongoing: false, limit: 10 })
    t.match(
      listed.outages.map((o) => outageRecord(o, new Date(T0 + 60 * MIN))),
      [{ ended_at: '2026-11-22T06:10:00.250Z', duration_seconds: 600 }],
      'listed with the duration it was watched for'
    )
    t.same(
      (await listOutages({ db, ongoing: true, limit: 10 })).outages.map((o) => o.domain),
      ['other.example.com'],
      'not listed as ongoing'
    )

    const late = await recordCheck({ db, check: check(gone, 'down', T0 + 11 * MIN) })
    t.same(
      late,
      { current: false, step: 'none', outage: null, slow: false, slowEvent: null },
      'a check finishing after the removal changes nothing'
    )
    t.equal((await db('outages').where({ site_id: gone })).length, 1, 'it opens no outage')
    t.equal((await db('checks').where({ site_id: gone })).length, 1, 'and is not stored')

    t.notOk(
      await removeSite({ db, domain: 'gone.example.com', now: new Date(T0 + 20 * MIN) }),
      'removing it again reports it was not tracked'
    )
    t.same(
      toDate((await db('outages').where({ site_id: gone }).first('ended_at')).ended_at)?.toISOString(),
      '2026-11-22T06:10:00.250Z',
      'and leaves the outage as it was'
    )

    await addSite({ db, entry: { domain: 'gone.example.com', name: null }, now: new Date(T0 + 30 * MIN) })
    const again = await recordCheck({ db, check: check(gone, 'down', T0 + 31 * MIN) })
    t.equal(again.step, 'open', 'tracked again, a down check opens a new outage')
    t.equal((await db('outages').where({ site_id: gone })).length, 2)
  })

  t.test(`removing a site without an ongoing outage touches no outage, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'fine.example.com', name: null }, now: new Date(T0 - MIN) })
    const id = Number((await db('sites').first('id')).id)
    await recordCheck({ db, check: check(id, 'down', T0) })
    await recordCheck({ db, check: check(id, 'up', T0 + MIN) })
    t.ok(await removeSite({ db, domain: 'fine.example.com', now: new Date(T0 + 5 * MIN) }))
    t.same(
      toDate((await db('outages').first('ended_at')).ended_at)?.toISOString(),
      new Date(T0 + MIN).toISOString(),
      'the closed outage keeps its end'
    )
    t.same(toDate((await db('sites').first('removed_at')).removed_at)?.toISOString(), new Date(T0 + 5 * MIN).toISOString())
  })
}

for (const engine of engines()) {
  t.test(`removing a site with an ongoing outage announces outage.closed, then site.removed, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'gone.example.com', name: 'Gone' }, now: new Date(T0 - MIN) })
    const id = Number((await db('sites').first('id')).id)
    await recordCheck({ db, check: check(id, 'down', T0) })
    const before = Number((await db('event_sequence').first('last_id')).last_id)
    t.ok(await removeSite({ db, domain: 'gone.example.com', now: new Date(T0 + 10 * MIN) }))
    const events = (await db('events').where('id', '>', before).orderBy('id').select('id', 'type', 'site_id', 'data')).map((e) => ({
      id: Number(e.id),
      type: e.type,
      site_id: Number(e.site_id),
      data: JSON.parse(e.data)
    }))
    const site = { domain: 'gone.example.com', name: 'Gone' }
    t.same(events, [
      {
        id: before + 1,
        type: 'outage.closed',
        site_id: id,
        data: {
          ...site,
          started_at: new Date(T0).toISOString(),
          ended_at: new Date(T0 + 10 * MIN).toISOString(),
          duration_seconds: 600,
          site
        }
      },
      { id: before + 2, type: 'site.removed', site_id: id, data: { site, at: new Date(T0 + 10 * MIN).toISOString() } }
    ])
    t.notOk(await removeSite({ db, domain: 'gone.example.com', now: new Date(T0 + 20 * MIN) }))
    t.equal((await db('events').where('id', '>', before)).length, 2, 'removing an untracked site announces nothing')
  })

  t.test(`removing a site without an outage announces site.removed alone; a rollback announces nothing, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'fine.example.com', name: null }, now: new Date(T0 - MIN) })
    const before = Number((await db('event_sequence').first('last_id')).last_id)
    await t.rejects(
      db.transaction(async (trx) => {
        await removeSite({ db: trx, domain: 'fine.example.com', now: new Date(T0) })
        throw new Error('rolled back')
      })
    )
    t.equal((await db('events').where('id', '>', before)).length, 0, 'a removal rolled back announces nothing')
    t.equal((await db('sites').whereNull('removed_at')).length, 1, 'and removes nothing')
    t.ok(await removeSite({ db, domain: 'fine.example.com', now: new Date(T0) }))
    t.same(
      (await db('events').where('id', '>', before).select('type')).map((e) => e.type),
      ['site.removed']
    )
  })
}
