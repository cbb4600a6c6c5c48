import t from 'tap'
import { subjectOf } from '../../../lib/alerts/intake.js'
import { appendEvents } from '../../../lib/store/events.js'
import { alertStack } from '../../helpers/alerts.js'
import { migratedDb } from '../../helpers/db.js'
import { receiver } from '../../helpers/webhooks.js'

const T0 = Date.parse('2026-11-29T03:00:00.000Z')
type Json = Record<string, any>

t.test('the monitor an event names: a site, or a heartbeat as MODEL.md shapes its events', async (t) => {
  t.same(subjectOf({ domain: 'a.example.com', name: 'A', site: { domain: 'a.example.com', name: 'A' } }), {
    monitor: 'http',
    domain: 'a.example.com',
    slug: null,
    name: 'A'
  })
  t.same(
    subjectOf({
      domain: null,
      monitor: { kind: 'heartbeat', slug: 'nightly-backup' },
      heartbeat: { slug: 'nightly-backup', name: 'Backup' }
    }),
    {
      monitor: 'heartbeat',
      domain: null,
      slug: 'nightly-backup',
      name: 'Backup'
    }
  )
})

t.test("a heartbeat's lateness and its outage alert like a site's, named by kind and slug", async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const stack = await alertStack(db, T0)
  t.teardown(() => stack.stop())
  const slack = await receiver(t)
  const chat = await stack.channel('slack', { url: slack.url })
  await stack.policy({ name: 'jobs', channels: [chat.id], group_window_s: 0, default: true })
  // A heartbeat is a `sites` row of another kind (MODEL.md); its events carry `monitor` and `heartbeat`.
  const [id] = await db('sites').insert({ domain: 'placeholder.invalid', name: 'Backup', added_at: new Date(T0), status: 'unavailable' })
  const heartbeat = { monitor: { kind: 'heartbeat', slug: 'nightly-backup' }, heartbeat: { slug: 'nightly-backup', name: 'Backup' } }
  const event = (type: string, data: Json, at: number) => ({ type, siteId: Number(id), data: JSON.stringify(data), at: new Date(at) })
  await db.transaction((trx) =>
    appendEvents({ db: trx, events: [event('heartbeat.late', { ...heartbeat, domain: null, at: new Date(T0).toISOString() }, T0)] })
  )
  stack.clock.now = T0 + 1000
  await stack.tick()
  const started = new Date(T0 + 60_000).toISOString()
  await db.transaction((trx) =>
    appendEvents({
      db: trx,
      events: [
        event(
          'outage.opened',
          { ...heartbeat, domain: null, name: 'Backup', started_at: started, ended_at: null, duration_seconds: 0 },
          T0 + 60_000
        )
      ]
    })
  )
  stack.clock.now = T0 + 61_000
  await stack.tick()
  t.same(
    slack.got.map((r) => (JSON.parse(r.body) as Json).blocks[0].text.text as string),
    ['LATE: Backup (heartbeat nightly-backup)', 'DOWN: Backup (heartbeat nightly-backup), for 1 s']
  )
})
