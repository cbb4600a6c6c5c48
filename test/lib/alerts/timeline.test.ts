import t from 'tap'
import { alertStack } from '../../helpers/alerts.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { receiver, type Received } from '../../helpers/webhooks.js'
import { setSiteAlerting } from '../../../lib/store/alert-targets.js'
import { insertMaintenanceWindow } from '../../../lib/store/maintenance.js'

const T0 = Date.parse('2026-11-29T10:00:00.000Z')
const MIN = 60_000

/** What a Slack receiver was told: the title line of each message. */
const slackTitles = (got: readonly Received[]): string[] =>
  got.map((r) => (JSON.parse(r.body) as { blocks: Array<{ text: { text: string } }> }).blocks[0]?.text.text ?? '')
/** PagerDuty events: action and dedup key. */
const pagerEvents = (got: readonly Received[]): string[] =>
  got.map((r) => {
    const e = JSON.parse(r.body) as { event_action: string; dedup_key: string }
    return `${e.event_action} ${e.dedup_key}`
  })

for (const engine of engines()) {
  t.test(`on ${engine}`, async (t) => {
    t.test('a site down for 16 minutes: after 5, reminders every 5, escalation after 15: exactly these messages, in order', async (t) => {
      const { db } = await migratedDb(engine, t)
      const stack = await alertStack(db, T0)
      t.teardown(() => stack.stop())
      const slack = await receiver(t)
      const pager = await receiver(t, [202])
      const chat = await stack.channel('slack', { url: slack.url })
      const pd = await stack.channel('pagerduty', { routing_key: 'R0UTINGKEY0123456789abcdefabcdef', url: pager.url })
      await stack.policy({
        name: 'web',
        channels: [chat.id],
        after_min: 5,
        remind_every_min: 5,
        escalate: [{ after_min: 15, channels: [pd.id] }],
        default: true
      })
      const [site] = await stack.sites('shop.example.com')
      await stack.down(site as number, 'shop.example.com', T0)
      const at: string[] = []
      const seen = { slack: 0, pager: 0 }
      for (let m = 0; m < 20; m += 0.5) {
        if (m === 16) await stack.up(site as number, 'shop.example.com', T0, T0 + 16 * MIN)
        stack.clock.now = T0 + m * MIN
        await stack.tick()
        for (const [name, r] of [
          ['slack', slack],
          ['pager', pager]
        ] as const)
          for (; seen[name] < r.got.length; seen[name]++) at.push(`${m} ${name}`)
      }
      t.same(slackTitles(slack.got), [
        'DOWN: shop.example.com, for 5 min',
        'STILL DOWN: shop.example.com, for 10 min',
        'STILL DOWN: shop.example.com, for 15 min',
        'RESOLVED: shop.example.com is up again after 16 min'
      ])
      t.same(
        pagerEvents(pager.got),
        [`trigger site-status/a1`, `resolve site-status/a1`],
        'PagerDuty: one incident, its dedup key per outage, triggered and resolved'
      )
      t.same(at, ['5 slack', '10 slack', '15 slack', '15 pager', '16 slack', '16 pager'], 'each when it was due')
    })

    t.test('a maintenance window and a down parent send nothing', async (t) => {
      const { db } = await migratedDb(engine, t)
      const stack = await alertStack(db, T0)
      t.teardown(() => stack.stop())
      const slack = await receiver(t)
      const chat = await stack.channel('slack', { url: slack.url })
      await stack.policy({ name: 'web', channels: [chat.id], after_min: 5, remind_every_min: 5, default: true })
      const [maintained, parent, child] = await stack.sites('maintained.example.com', 'core.example.com', 'app.example.com')
      await insertMaintenanceWindow({
        db,
        siteId: maintained as number,
        window: { from: new Date(T0 - MIN), to: new Date(T0 + 30 * MIN), reason: 'upgrade' },
        now: new Date(T0)
      })
      t.ok(await setSiteAlerting({ db, siteId: child as number, dependsOn: parent }))
      // The parent has its own policy, whose channel is not this one: only the child's silence is under test.
      const quiet = await receiver(t)
      const other = await stack.channel('slack', { url: quiet.url }, 'core team')
      const core = await stack.policy({ name: 'core', channels: [other.id] })
      await setSiteAlerting({ db, siteId: parent as number, policyId: core.id })
      await stack.down(maintained as number, 'maintained.example.com', T0)
      await stack.down(parent as number, 'core.example.com', T0)
      await stack.down(child as number, 'app.example.com', T0 + 10_000)
      await stack.advance(20 * MIN)
      await stack.up(maintained as number, 'maintained.example.com', T0, T0 + 20 * MIN)
      await stack.up(child as number, 'app.example.com', T0 + 10_000, T0 + 20 * MIN)
      await stack.advance(5 * MIN)
      t.same(slack.got, [], 'neither the site in maintenance nor the child of a down parent sent anything, nor their ends')
      t.ok(quiet.got.length >= 1, 'the parent itself alerted on its own channel')
      // Once the parent is back, a child still down is news: it alerts then.
      await stack.down(child as number, 'app.example.com', stack.clock.now)
      const childDown = stack.clock.now
      await stack.advance(6 * MIN)
      t.equal(slack.got.length, 0, 'still silenced while the parent is down')
      await stack.up(parent as number, 'core.example.com', T0, stack.clock.now)
      await stack.advance(MIN)
      const titles = slackTitles(slack.got)
      t.equal(titles.length, 1, 'one message: the child is down')
      t.match(titles[0], /^DOWN: app\.example\.com, for (6|7) min$/, `down since ${new Date(childDown).toISOString()}`)
    })
  })
}
