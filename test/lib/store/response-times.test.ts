import t from 'tap'
import { insertChecks, type CheckRecord } from '../../../lib/store/checks.js'
import { listResponseTimes } from '../../../lib/store/response-times.js'
import { addSite } from '../../../lib/monitoring/add-sites.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-22T00:00:00.000Z')
const MIN = 60_000

function check(siteId: number, at: number, responseMs: number | null, status: CheckRecord['status'] = 'up'): CheckRecord {
  return {
    siteId,
    checkedAt: new Date(at),
    status,
    blocked: false,
    partial: false,
    responseMs,
    locationsAnswered: responseMs === null ? 0 : 3,
    locationsTotal: 3,
    source: 'schedule',
    locations: []
  }
}

for (const engine of engines()) {
  t.test(`response times per bucket on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'a.example.com', name: 'A' }, now: new Date(T0 - 60 * MIN) })
    await addSite({ db, entry: { domain: 'b.example.com', name: 'B' }, now: new Date(T0 - 60 * MIN) })
    const [a, b] = (await db('sites').orderBy('domain').pluck('id')).map(Number) as [number, number]
    const checks = [
      check(a, T0 - MIN, 999), // before the window
      check(a, T0, 100),
      check(a, T0 + 2 * MIN + 500, 200.25),
      check(a, T0 + 4 * MIN + 999, null, 'unavailable'),
      check(a, T0 + 10 * MIN, 50, 'down'),
      check(a, T0 + 14 * MIN, 70),
      check(a, T0 + 15 * MIN, 123), // the window's end is exclusive
      check(b, T0 + MIN, 5000) // another site
    ]
    await insertChecks({ db, checks })

    const buckets = await listResponseTimes({ db, siteId: a, from: new Date(T0), to: new Date(T0 + 15 * MIN), bucketMs: 5 * MIN })
    t.same(
      buckets,
      [
        { start: new Date(T0), avg_ms: 150.1, max_ms: 200.25, checks: 3, answered: 2, down: 0 },
        { start: new Date(T0 + 10 * MIN), avg_ms: 60, max_ms: 70, checks: 2, answered: 2, down: 1 }
      ],
      'mean and worst per bucket, checks without an answer counted but not averaged, empty buckets left out'
    )

    const silent = await listResponseTimes({ db, siteId: a, from: new Date(T0 + 4 * MIN), to: new Date(T0 + 5 * MIN), bucketMs: MIN })
    t.same(
      silent,
      [{ start: new Date(T0 + 4 * MIN), avg_ms: null, max_ms: null, checks: 1, answered: 0, down: 0 }],
      'a bucket with no answer has no time'
    )
    t.same(
      await listResponseTimes({ db, siteId: b, from: new Date(T0 + 2 * MIN), to: new Date(T0 + 20 * MIN), bucketMs: MIN }),
      [],
      'nothing in the window'
    )
  })
}
