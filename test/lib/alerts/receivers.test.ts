import t from 'tap'
import { testChannel } from '../../../lib/alerts/channels.js'
import { createSmtpSend } from '../../../lib/alerts/smtp.js'
import { createPost } from '../../../lib/webhooks/post.js'
import { alertStack, LOOPBACK_POLICY } from '../../helpers/alerts.js'
import { migratedDb } from '../../helpers/db.js'
import { problems, receiverSchemas } from '../../helpers/receiver-schemas.js'
import { receiver } from '../../helpers/webhooks.js'
import { certificateEvent } from '../../../lib/rules/events.js'
import { appendEvent } from '../../helpers/webhooks.js'

const T0 = Date.parse('2026-11-29T10:00:00.000Z')
const KEY = 'R0UTINGKEY0123456789abcdefabcdef'
type Json = Record<string, any>

t.test('Slack, Discord, Teams, PagerDuty and ntfy get payloads of the shapes their documentation gives', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const stack = await alertStack(db, T0)
  t.teardown(() => stack.stop())
  const got = {
    slack: await receiver(t),
    discord: await receiver(t, [204]),
    teams: await receiver(t, [202]),
    pagerduty: await receiver(t, [202]),
    ntfy: await receiver(t)
  }
  const channels = [
    await stack.channel('slack', { url: got.slack.url }),
    await stack.channel('discord', { url: got.discord.url }),
    await stack.channel('teams', { url: got.teams.url }),
    await stack.channel('pagerduty', { routing_key: KEY, url: got.pagerduty.url }),
    await stack.channel('ntfy', { url: got.ntfy.url, topic: 'ops-alerts', token: 'tk_secret0123' })
  ]
  await stack.policy({ name: 'everything', channels: channels.map((c) => c.id), default: true })
  const [a, b, c] = await stack.sites('a.example.com', 'b.example.com', 'c.example.com')
  // A name that would mention everyone or inject markup if it were passed through.
  await stack.down(a as number, 'a.example.com', T0)
  await stack.advance(10_000, 10_000)
  await stack.down(b as number, 'b.example.com', T0 + 10_000, '@everyone <!channel> & <b>')
  await stack.down(c as number, 'c.example.com', T0 + 10_000)
  await appendEvent(
    db,
    certificateEvent(
      { id: a as number, domain: 'a.example.com', name: 'a.example.com' },
      { expiresAt: new Date(T0 + 6 * 86_400_000), issuer: null },
      7,
      new Date(T0 + 10_000)
    )
  )
  await stack.advance(70_000, 10_000)
  await stack.up(a as number, 'a.example.com', T0, T0 + 120_000)
  await stack.up(b as number, 'b.example.com', T0 + 10_000, T0 + 120_000)
  await stack.up(c as number, 'c.example.com', T0 + 10_000, T0 + 120_000)
  await stack.advance(120_000, 10_000)

  for (const [kind, r] of Object.entries(got) as Array<[keyof typeof got, (typeof got)['slack']]>) {
    t.ok(r.got.length >= 3, `${kind}: ${r.got.length} messages`)
    for (const [i, m] of r.got.entries())
      t.same(problems(receiverSchemas[kind], JSON.parse(m.body)), [], `${kind} message ${i + 1} has the documented shape`)
    t.ok(
      r.got.every((m) => m.headers['content-type'] === 'application/json'),
      `${kind}: sent as application/json`
    )
  }
  const slack = got.slack.got.map((m) => JSON.parse(m.body) as Json)
  t.same(
    slack.map((m) => m.blocks[0].text.text),
    [
      'DOWN: a.example.com, for 10 s',
      '2 down, 1 notices: b.example.com, c.example.com, a.example.com',
      '3 resolved: a.example.com, b.example.com, c.example.com'
    ],
    'one at once, then one grouped message per window'
  )
  t.match(slack[1]?.text, /@everyone &lt;!channel&gt; &amp; &lt;b&gt;/, "Slack's control characters are escaped")
  t.match(slack[1]?.text, /the certificate expires in 5 days/)
  const discord = got.discord.got.map((m) => JSON.parse(m.body) as Json)
  t.ok(
    discord.every((m) => Array.isArray(m.allowed_mentions.parse) && m.allowed_mentions.parse.length === 0),
    'Discord parses no mention'
  )
  const pd = got.pagerduty.got.map((m) => JSON.parse(m.body) as Json)
  const group = String(pd[1]?.dedup_key)
  t.match(group, /^site-status\/g\d+$/)
  t.same(
    pd.map((e) => `${e.event_action} ${e.dedup_key}`),
    ['trigger site-status/a1', `trigger ${group}`, 'resolve site-status/a1', `resolve ${group}`],
    'PagerDuty: an outage alone has its own key; a group (the notice with it) one; each resolved once, when all in it ended'
  )
  t.match(pd[1], { payload: { summary: /^2 down, 1 notices: /, severity: 'critical', source: 'site-status' } })
  t.equal(pd[0]?.routing_key, KEY)
  const ntfy = got.ntfy.got.map((m) => ({ body: JSON.parse(m.body) as Json, auth: m.headers.authorization }))
  t.ok(
    ntfy.every((m) => m.body.topic === 'ops-alerts' && m.auth === 'Bearer tk_secret0123'),
    'ntfy: the topic in the body, the token as Bearer'
  )
  t.same(
    ntfy.map((m) => m.body.priority),
    [4, 4, 3],
    'bad news at the channel’s priority, good news lower'
  )
  const teams = got.teams.got.map((m) => JSON.parse(m.body) as Json)
  t.equal(teams[0]?.attachments[0].content.body[0].color, 'Attention')
  t.equal(teams.at(-1)?.attachments[0].content.body[0].color, 'Good')

  // The test message of each: delivered, and what the receiver said comes back.
  const outbound = createPost({ policy: LOOPBACK_POLICY, userAgent: 'site-status-test' })
  t.teardown(() => outbound.close())
  const deps = {
    db,
    box: stack.box,
    post: outbound.post,
    smtp: createSmtpSend({ policy: LOOPBACK_POLICY }),
    logger: stack.logger,
    now: () => new Date(stack.clock.now),
    random: () => 0.5,
    publicUrl: 'https://status.example.net'
  }
  for (const channel of channels) {
    const kind = channel.kind as keyof typeof receiverSchemas
    const before = got[kind].got.length
    const result = await testChannel(deps, channel)
    // A 204 has no body: nothing was said but the status.
    const said = kind === 'discord' ? null : 'thanks'
    t.match(result, { delivered: true, answer: said, error: null }, `${channel.kind}: the test went and the receiver's answer came back`)
    t.ok(got[kind].got.length > before, `${channel.kind}: the receiver got it`)
    const last = got[kind].got.at(-1)
    t.same(problems(receiverSchemas[kind], JSON.parse(last?.body ?? '{}')), [], `${channel.kind}: the test has the documented shape too`)
  }
  t.same(
    got.pagerduty.got.slice(-2).map((m) => (JSON.parse(m.body) as Json).event_action),
    ['trigger', 'resolve'],
    "PagerDuty's test is triggered and resolved at once"
  )
})
