import t from 'tap'
import { addSite, addSites } from '../../../lib/monitoring/add-sites.js'
import { removeSite } from '../../../lib/monitoring/remove-site.js'
import type { Db } from '../../../lib/store/db.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')

async function eventsAfter(db: Db, id: number): Promise<Array<{ id: number; type: string; site_id: number; data: unknown }>> {
  const rows = await db('events').where('id', '>', id).orderBy('id').select('id', 'type', 'site_id', 'data')
  return rows.map((r) => ({ id: Number(r.id), type: String(r.type), site_id: Number(r.site_id), data: JSON.parse(r.data) }))
}

const lastId = async (db: Db): Promise<number> => Number((await db('event_sequence').first('last_id')).last_id)
const siteId = async (db: Db, domain: string): Promise<number> => Number((await db('sites').where({ domain }).first('id')).id)

for (const engine of engines()) {
  t.test(`adding a site announces site.added with its domain and name, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    t.equal(await addSite({ db, entry: { domain: 'shop.example.com', name: 'The Shop' }, now: new Date(T0) }), 'added')
    const id = await siteId(db, 'shop.example.com')
    t.same(await eventsAfter(db, 0), [
      {
        id: 1,
        type: 'site.added',
        site_id: id,
        data: { site: { domain: 'shop.example.com', name: 'The Shop' }, at: new Date(T0).toISOString() }
      }
    ])

    t.equal(await addSite({ db, entry: { domain: 'shop.example.com', name: 'Renamed' }, now: new Date(T0 + 1000) }), 'already')
    t.equal(await lastId(db), 1, 'an already tracked site is not announced, renamed or not')

    await removeSite({ db, domain: 'shop.example.com', now: new Date(T0 + 2000) })
    t.equal(await addSite({ db, entry: { domain: 'shop.example.com', name: null }, now: new Date(T0 + 3000) }), 'resumed')
    t.same(
      (await eventsAfter(db, 1)).map((e) => [e.type, e.site_id, e.data]),
      [
        ['site.removed', id, { site: { domain: 'shop.example.com', name: 'Renamed' }, at: new Date(T0 + 2000).toISOString() }],
        ['site.added', id, { site: { domain: 'shop.example.com', name: 'Renamed' }, at: new Date(T0 + 3000).toISOString() }]
      ],
      'a site tracked again is announced as added, under its kept name'
    )
  })

  t.test(`a batch announces its added and resumed sites in one transaction, in order, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSites({
      db,
      entries: [
        { domain: 'old.example.com', name: null },
        { domain: 'kept.example.com', name: null }
      ],
      now: new Date(T0)
    })
    await removeSite({ db, domain: 'old.example.com', now: new Date(T0) })
    const before = await lastId(db)
    const entries = [
      ...Array.from({ length: 450 }, (_, i) => ({ domain: `s${i}.example.com`, name: null })),
      { domain: 'old.example.com', name: 'Old' },
      { domain: 'kept.example.com', name: null }
    ]
    const outcomes = await addSites({ db, entries, now: new Date(T0 + 1000) })
    t.same(outcomes.slice(-3), ['added', 'resumed', 'already'])
    const events = await eventsAfter(db, before)
    t.equal(events.length, 451, 'one event per added or resumed site, none for the already tracked one')
    t.same(
      events.map((e) => (e.data as { site: { domain: string } }).site.domain),
      entries.slice(0, 451).map((e) => e.domain),
      'in the order of the entries'
    )
    t.same(
      events.map((e) => e.id),
      events.map((_, i) => before + 1 + i),
      'ids without gaps'
    )
  })

  t.test(`a batch rolled back announces nothing, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await t.rejects(
      db.transaction(async (trx) => {
        await addSites({ db: trx, entries: [{ domain: 'a.example.com', name: null }], now: new Date(T0) })
        throw new Error('rolled back')
      })
    )
    t.equal(await lastId(db), 0)
    t.same(await db('events'), [])
    t.same(await db('sites'), [])
  })
}
