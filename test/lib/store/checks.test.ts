import t from 'tap'
import { checkKey, findStoredChecks, insertChecks, newestCheckTime, updateSiteStates, type CheckRecord } from '../../../lib/store/checks.js'
import { toDate } from '../../../lib/store/db.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000

function check(siteId: number, status: CheckRecord['status'], at: number, source: CheckRecord['source'] = 'schedule'): CheckRecord {
  return {
    siteId,
    checkedAt: new Date(at),
    status,
    blocked: false,
    partial: status === 'down',
    responseMs: status === 'up' ? 42.5 : null,
    locationsAnswered: 3,
    locationsTotal: 3,
    source,
    locations: [{ location: 'a', status }]
  }
}

for (const engine of engines()) {
  t.test(`checks are stored in multi-row inserts of any size, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSites({ db, entries: [{ domain: 'a.example.com', name: null }], now: new Date(T0 - MIN) })
    const id = Number((await db('sites').first('id')).id)
    // More than one insert's worth of rows.
    const checks = Array.from({ length: 1203 }, (_, i) => check(id, i % 2 === 0 ? 'up' : 'down', T0 + i * 1000))
    await insertChecks({ db, checks })
    const rows = await db('checks').orderBy('checked_at').select('site_id', 'checked_at', 'status', 'partial', 'response_ms', 'locations')
    t.equal(rows.length, 1203, 'every check, once')
    t.same(
      rows.slice(0, 2).map((r) => ({
        site_id: Number(r.site_id),
        checked_at: toDate(r.checked_at)?.getTime(),
        status: r.status,
        partial: Boolean(r.partial),
        response_ms: r.response_ms === null ? null : Number(r.response_ms),
        locations: typeof r.locations === 'string' ? JSON.parse(r.locations) : r.locations
      })),
      [
        { site_id: id, checked_at: T0, status: 'up', partial: false, response_ms: 42.5, locations: [{ location: 'a', status: 'up' }] },
        {
          site_id: id,
          checked_at: T0 + 1000,
          status: 'down',
          partial: true,
          response_ms: null,
          locations: [{ location: 'a', status: 'down' }]
        }
      ],
      'with their columns'
    )
    await insertChecks({ db, checks: [] })
    t.equal((await db('checks')).length, 1203, 'an empty list stores nothing')
  })

  t.test(`stored checks are found by site, time and source, on ${engine}`, async (t) => {
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
    const storedA = check(a, 'up', T0)
    const storedB = check(b, 'down', T0 + MIN)
    await insertChecks({ db, checks: [storedA, storedB, check(a, 'up', T0 + 2 * MIN)] })
    const asked = [storedA, storedB, check(a, 'up', T0 + MIN), check(a, 'up', T0, 'demand'), check(b, 'down', T0)]
    const found = await findStoredChecks({ db, checks: asked })
    t.same(
      [...found.keys()].sort(),
      [checkKey(storedA), checkKey(storedB)].sort(),
      'only the checks stored with that site, time and source'
    )
    const ids = (await db('checks').orderBy('id').pluck('id')).map(Number)
    t.equal(found.get(checkKey(storedA)), ids[0], 'with their row ids')
    t.equal(found.get(checkKey(storedB)), ids[1])
  })

  t.test(`the newest stored check of a site since a time, leaving some rows out, on ${engine}`, async (t) => {
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
    await insertChecks({
      db,
      checks: [check(a, 'up', T0 - 2 * MIN), check(a, 'up', T0 + MIN), check(a, 'up', T0 + 3 * MIN), check(b, 'up', T0 + 9 * MIN)]
    })
    const ids = (await db('checks').orderBy('id').pluck('id')).map(Number)
    t.equal((await newestCheckTime({ db, siteId: a, since: new Date(T0) }))?.getTime(), T0 + 3 * MIN, 'the newest of the site')
    t.equal(
      (await newestCheckTime({ db, siteId: a, since: new Date(T0), exceptIds: [ids[2] as number] }))?.getTime(),
      T0 + MIN,
      'the newest not left out'
    )
    t.equal(await newestCheckTime({ db, siteId: a, since: new Date(T0 + 4 * MIN) }), null, 'none since then')
  })

  t.test(`sites take their current state from the check given for each, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSites({
      db,
      entries: ['a', 'b', 'c'].map((n) => ({ domain: `${n}.example.com`, name: null })),
      now: new Date(T0 - MIN)
    })
    const [a, b] = (await db('sites').orderBy('id').pluck('id')).map(Number) as [number, number]
    await updateSiteStates({ db, checks: [check(a, 'up', T0), { ...check(b, 'down', T0 + MIN), blocked: true }] })
    const rows = (await db('sites').orderBy('id').select('status', 'blocked', 'partial', 'response_ms', 'checked_at')).map((r) => ({
      status: r.status,
      blocked: Boolean(r.blocked),
      partial: Boolean(r.partial),
      response_ms: r.response_ms === null ? null : Number(r.response_ms),
      checked_at: toDate(r.checked_at)?.getTime() ?? null
    }))
    t.same(rows, [
      { status: 'up', blocked: false, partial: false, response_ms: 42.5, checked_at: T0 },
      { status: 'down', blocked: true, partial: true, response_ms: null, checked_at: T0 + MIN },
      { status: 'unavailable', blocked: false, partial: false, response_ms: null, checked_at: null }
    ])
  })
}
