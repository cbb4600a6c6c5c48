import t from 'tap'
import { recordCheck, type CheckRecord } from '../../../lib/store/checks.js'
import { toDate } from '../../../lib/store/db.js'
import { addSite } from '../../../lib/store/sites.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')

function check(siteId: number, status: CheckRecord['status'], at: number): CheckRecord {
  return {
    siteId,
    checkedAt: new Date(at),
    status,
    blocked: false,
    partial: false,
    responseMs: status === 'up' ? 42.5 : null,
    locationsAnswered: 3,
    locationsTotal: 3,
    source: 'schedule',
    locations: []
  }
}

for (const engine of engines()) {
  t.test(`a retried write whose first attempt was committed is not stored twice, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'retry.example.com', name: null }, now: new Date(T0 - 60_000) })
    const siteId = Number((await db('sites').first('id')).id)

    const opened = await recordCheck({ db, check: check(siteId, 'down', T0) })
    t.equal(opened.step, 'open')
    // The connection was lost after the commit: the recorder cannot tell, and writes it again.
    const again = await recordCheck({ db, check: check(siteId, 'down', T0), retried: true })
    t.same(again, opened, 'the retry reports the outage the first attempt opened')
    t.equal((await db('checks')).length, 1, 'one check row')

    const closed = await recordCheck({ db, check: check(siteId, 'up', T0 + 60_000) })
    t.equal(closed.step, 'close')
    t.same(await recordCheck({ db, check: check(siteId, 'up', T0 + 60_000), retried: true }), closed, 'and the outage the first attempt closed')
    const plain = await recordCheck({ db, check: check(siteId, 'up', T0 + 120_000) })
    t.same(await recordCheck({ db, check: check(siteId, 'up', T0 + 120_000), retried: true }), plain, 'and a check that changed no outage')
    t.equal((await db('checks')).length, 3, 'still one row per check')
    const outages = await db('outages')
    t.equal(outages.length, 1)
    t.equal(toDate(outages[0].started_at)?.getTime(), T0)
    t.equal(toDate(outages[0].ended_at)?.getTime(), T0 + 60_000)

    const fresh = await recordCheck({ db, check: check(siteId, 'down', T0 + 180_000), retried: true })
    t.equal(fresh.step, 'open', 'a retry of a write that never landed records it normally')
    t.equal((await db('checks')).length, 4)
  })
}
