import t from 'tap'
import { outageEvent } from '../../../lib/rules/events.js'
import { appendEvents } from '../../../lib/store/events.js'
import { insertOutage } from '../../../lib/store/outages.js'
import { alertStack } from '../../helpers/alerts.js'
import { startAlertmanager } from '../../helpers/alertmanager.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { receiver, type Received } from '../../helpers/webhooks.js'

type Json = Record<string, any>
const MIN = 60_000

/** Alertmanager's webhook notifications so far: each alert's status by its instance label. */
function notified(got: readonly Received[]): Array<{ status: string; instance: string }> {
  return got.flatMap((r) =>
    ((JSON.parse(r.body) as Json).alerts as Json[]).map((a) => ({ status: String(a.status), instance: String(a.labels.instance) }))
  )
}

/** Waits for the receiver's next requests until `done` holds (the test's timeout bounds it). */
async function until(r: { got: Received[]; arrived: () => Promise<Received> }, done: () => boolean): Promise<void> {
  while (!done()) await r.arrived()
}

t.test("Debian's Alertmanager receives the alert, routes it to its webhook receiver, and then the resolution", async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const hook = await receiver(t)
  const am = await startAlertmanager(t, { webhook: hook.url })
  // Alertmanager judges endsAt by its own clock: this stack's clock is the real one.
  const stack = await alertStack(db, Date.now())
  t.teardown(() => stack.stop())
  const channel = await stack.channel('alertmanager', { urls: [am.url] })
  await stack.policy({ name: 'am', channels: [channel.id], group_window_s: 0, default: true })
  const [site] = await stack.sites('api.example.com')
  const started = Date.now()
  await stack.down(site as number, 'api.example.com', started)
  stack.clock.now = Date.now()
  await stack.tick()
  await until(hook, () => notified(hook.got).some((a) => a.status === 'firing'))
  const [firing] = await am.alerts()
  t.match(firing, {
    labels: { alertname: 'MonitorDown', instance: 'api.example.com', domain: 'api.example.com', monitor: 'http', source: 'site-status' },
    annotations: { summary: /^DOWN: api\.example\.com/, name: 'api.example.com' },
    status: { state: 'active' }
  })
  t.equal(Date.parse(firing?.startsAt ?? ''), started, 'startsAt is when the outage started')
  t.same(notified(hook.got), [{ status: 'firing', instance: 'api.example.com' }], 'routed to the receiver')

  await stack.up(site as number, 'api.example.com', started, Date.now())
  stack.clock.now = Date.now()
  await stack.tick()
  await until(hook, () => notified(hook.got).some((a) => a.status === 'resolved'))
  t.same(notified(hook.got).at(-1), { status: 'resolved', instance: 'api.example.com' }, 'the resolution, by endsAt, routed too')
  t.same(await am.alerts(), [], 'nothing active any more')
  const log = await db('alert_messages').where({ channel_id: channel.id }).orderBy('id').select('kind', 'status', 'last_http_code')
  t.same(
    log.filter((m: { kind: string }) => m.kind === 'alert'),
    [
      { kind: 'alert', status: 'delivered', last_http_code: 200 },
      { kind: 'alert', status: 'delivered', last_http_code: 200 }
    ],
    'the alert and its resolution in the delivery log'
  )
})

for (const engine of engines()) {
  t.test(
    `1,000 sites down within one minute, on ${engine}: a bounded number of grouped messages per channel, every outage its own alert in Alertmanager`,
    async (t) => {
      const { db } = await migratedDb(engine, t)
      const hook = await receiver(t)
      const am = await startAlertmanager(t, { webhook: hook.url })
      const slack = await receiver(t)
      const pager = await receiver(t, [202])
      // Three minutes behind the real clock: the whole run stays in Alertmanager's past or present.
      const T0 = Date.now() - 3 * MIN
      const stack = await alertStack(db, T0)
      t.teardown(() => stack.stop())
      const channels = [
        await stack.channel('alertmanager', { urls: [am.url] }),
        await stack.channel('slack', { url: slack.url }),
        await stack.channel('pagerduty', { routing_key: 'R0UTINGKEY0123456789abcdefabcdef', url: pager.url })
      ]
      await stack.policy({ name: 'fleet', channels: channels.map((c) => c.id), default: true })
      const domains = Array.from({ length: 1000 }, (_, i) => `s${String(i).padStart(4, '0')}.example.com`)
      const ids = await stack.sites(...domains)
      // 1,000 outages over one minute, in 20 batches of 50 every 3 s; the dispatcher runs every second.
      for (let batch = 0; batch < 20; batch++) {
        const at = T0 + batch * 3000
        await db.transaction(async (trx) => {
          const events = []
          for (let i = batch * 50; i < (batch + 1) * 50; i++) {
            const siteId = ids[i] as number
            await insertOutage({ db: trx, siteId, startedAt: new Date(at) })
            const e = outageEvent(
              'open',
              { id: siteId, domain: domains[i] as string, name: domains[i] as string },
              { started_at: new Date(at), ended_at: null },
              new Date(at)
            )
            events.push({ type: e.type, siteId, data: JSON.stringify(e.data), at: e.at })
          }
          await appendEvents({ db: trx, events })
        })
        await stack.advance(3000, 1000)
      }
      await stack.advance(2 * MIN, 5000)
      for (const [name, r] of [
        ['slack', slack],
        ['pagerduty', pager]
      ] as const) {
        t.ok(r.got.length >= 2 && r.got.length <= 3, `${name}: ${r.got.length} messages for 1,000 outages`)
      }
      const titles = slack.got.map((m) => String((JSON.parse(m.body) as Json).text).split('\n')[0])
      t.match(
        titles[0],
        /^\*50 down: s0000\.example\.com, s0001\.example\.com, s0002\.example\.com and 47 more\*$/,
        'the first batch at once'
      )
      t.match(
        titles[1],
        /^\*950 down: s0050\.example\.com, s0051\.example\.com, s0052\.example\.com and 947 more\*$/,
        'the rest when the window ends: counts and the first names'
      )
      const amMessages = await db('alert_messages').where({ channel_id: channels[0]?.id, kind: 'alert' }).select('items', 'status')
      t.ok(amMessages.length <= 3, `Alertmanager got ${amMessages.length} alert POSTs (and a re-send of what fires each minute)`)
      t.equal(
        amMessages.reduce((n: number, m: { items: unknown }) => n + Number(m.items), 0),
        1000,
        'carrying 1,000 alerts'
      )
      await until(hook, () => new Set(notified(hook.got).map((a) => a.instance)).size === 1000)
      const active = await am.alerts()
      t.equal(active.length, 1000, 'Alertmanager holds 1,000 active alerts')
      t.equal(new Set(active.map((a) => a.labels.instance)).size, 1000, 'each outage its own alert')
    }
  )
}
