import t from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { loadConfig } from '../../../config/index.js'
import { createLogger } from '../../../lib/logger.js'
import { ServiceMetrics } from '../../../lib/metrics/service-metrics.js'
import { buildServer } from '../../../lib/server.js'
import { alertStack } from '../../helpers/alerts.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { LogCapture } from '../../helpers/server.js'
import { receiver } from '../../helpers/webhooks.js'

const T0 = Date.parse('2026-11-29T10:00:00.000Z')
const MIN = 60_000
type Json = Record<string, any>

/** A Slack-like receiver that answers 503 while `down`, and records what it accepted. */
async function flakyReceiver(t: {
  teardown(fn: () => unknown): void
}): Promise<{ url: string; down: boolean; accepted: string[]; refused: number }> {
  const state = { url: '', down: false, accepted: [] as string[], refused: 0 }
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8').on('data', (c: string) => (body += c))
    req.on('end', () => {
      if (state.down) {
        state.refused++
        res.writeHead(503).end('maintenance')
        return
      }
      state.accepted.push((JSON.parse(body) as Json).blocks[0].text.text as string)
      res.writeHead(200).end('ok')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
  })
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return state
}

for (const engine of engines()) {
  t.test(
    `a receiver down for 10 minutes gets everything when it is back, in order; meanwhile its channel is failing, and says so elsewhere, on ${engine}`,
    async (t) => {
      const { db } = await migratedDb(engine, t)
      const stack = await alertStack(db, T0)
      t.teardown(() => stack.stop())
      const slack = await flakyReceiver(t)
      const ops = await receiver(t)
      const opsChannel = await stack.channel('slack', { url: ops.url }, 'ops')
      const chat = await stack.channel('slack', { url: slack.url }, 'team chat', opsChannel.id)
      await stack.policy({ name: 'web', channels: [chat.id], remind_every_min: 3, group_window_s: 0, default: true })
      const [site] = await stack.sites('down.example.com')
      const config = loadConfig({ PORT: '0' })
      const metrics = new ServiceMetrics()
      metrics.watch({ alerts: stack.dispatcher })
      const server = await buildServer({
        config,
        db,
        logger: createLogger({ level: 'info', stream: new LogCapture() }),
        metrics,
        alerts: { health: () => stack.dispatcher.channels() }
      })
      t.teardown(() => server.stop())

      slack.down = true
      await stack.down(site as number, 'down.example.com', T0)
      await stack.advance(10 * MIN, 5000)
      t.same(slack.accepted, [], 'nothing got through while it was down')
      t.ok(slack.refused >= 5 && slack.refused <= 12, `retried with backoff: ${slack.refused} attempts in 10 minutes`)
      const health = JSON.parse((await server.inject('/healthz')).payload) as Json
      t.match(
        health.alerts,
        { channels: 2, failing: [{ id: chat.id, name: 'team chat', kind: 'slack', last_error: 'http: 503', pending: 4 }] },
        '/healthz names the failing channel'
      )
      t.match(
        await metrics.render(),
        new RegExp(`site_status_alert_channel_failing\\{channel_id="${chat.id}",channel="team chat",kind="slack"\\} 1`),
        '/metrics too'
      )
      t.same(
        ops.got.map((r) => (JSON.parse(r.body) as Json).blocks[0].text.text as string),
        ['Alert channel "team chat" (slack) is failing: http: 503'],
        'reported, once, on the channel set for it'
      )

      slack.down = false
      await stack.up(site as number, 'down.example.com', T0, T0 + 10 * MIN + 5000)
      await stack.advance(3 * MIN, 5000)
      t.same(
        slack.accepted,
        [
          'DOWN: down.example.com, for 5 s',
          'STILL DOWN: down.example.com, for 3 min',
          'STILL DOWN: down.example.com, for 6 min',
          'STILL DOWN: down.example.com, for 9 min',
          'RESOLVED: down.example.com is up again after 10 min'
        ],
        'everything, in the order it was made, once'
      )
      t.same(
        ops.got.map((r) => (JSON.parse(r.body) as Json).blocks[0].text.text as string).slice(1),
        ['Alert channel "team chat" (slack) has recovered'],
        'and its recovery'
      )
      await stack.tick()
      t.match(JSON.parse((await server.inject('/healthz')).payload), { alerts: { channels: 2, failing: [] } })
      const log = JSON.parse(
        (
          await server.inject({
            url: `/api/v1/channels/${chat.id}/deliveries`,
            headers: { authorization: `Bearer ${await issue(db)}` }
          })
        ).payload
      ) as Json
      t.same(
        log.deliveries.map((d: Json) => d.status),
        ['delivered', 'delivered', 'delivered', 'delivered', 'delivered'],
        'the delivery log says so'
      )
      t.ok(log.deliveries.at(-1).attempts > 3, 'the first one took several attempts')
    }
  )
}

async function issue(db: import('../../../lib/store/db.js').Db): Promise<string> {
  const { generateKey, hashKey } = await import('../../../lib/keys.js')
  const { createKey } = await import('../../../lib/store/keys.js')
  const key = generateKey()
  await createKey({ db, name: 'alerts', keyHash: hashKey(key), rateLimit: null, scopes: 'manage', now: new Date() })
  return key
}
