import t from 'tap'
import { sweepDeadlines } from '../../../lib/heartbeats/deadlines.js'
import { addHeartbeat } from '../../../lib/heartbeats/manage.js'
import { recordPing } from '../../../lib/heartbeats/pings.js'
import { openDb } from '../../../lib/store/db.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-29T03:00:00.000Z')
const S = 1000
const HEARTBEATS = 300

for (const engine of engines().filter((e) => e === 'mysql')) {
  t.test(`three instances sweeping at once open exactly one outage per overdue heartbeat, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    let clock = T0
    const now = (): Date => new Date(clock)
    const settings = { name: 'job', every_s: 60, grace_s: 30, max_runtime_s: null }
    for (let i = 0; i < HEARTBEATS; i++) {
      const { token } = await addHeartbeat({ db, slug: `job-${i}`, settings, now: now() })
      await recordPing({ db, ping: { token, kind: 'success', rid: null }, now })
    }
    // Each instance has a pool of its own, as separate processes would.
    const instances = [openDb(url), openDb(url), openDb(url)]
    t.teardown(() => Promise.all(instances.map((i) => i.destroy())))
    clock = T0 + 95 * S
    const judged = await Promise.all(instances.map((db) => sweepDeadlines({ db, now })))
    t.equal(
      judged.reduce((a, b) => a + b, 0),
      HEARTBEATS,
      `each overdue heartbeat judged once among the instances (${judged.join(' + ')})`
    )
    await Promise.all(instances.map((db) => sweepDeadlines({ db, now })))
    const perSite = await db('outages').groupBy('site_id').select('site_id').count({ n: '*' })
    t.equal(perSite.length, HEARTBEATS, 'every heartbeat has an outage')
    t.ok(
      perSite.every((r) => Number(r.n) === 1),
      'and only one'
    )
    const opened = await db('events').where({ type: 'outage.opened' }).count({ n: '*' })
    t.equal(Number(opened[0]?.n), HEARTBEATS, 'one outage.opened each')
  })
}
