import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { generateKey, hashKey } from '../../lib/keys.js'
import { removeSite } from '../../lib/monitoring/remove-site.js'
import { createKey } from '../../lib/store/keys.js'
import { apiClient } from '../helpers/api-client.js'
import { engines } from '../helpers/db.js'
import { holds } from '../helpers/poll.js'
import { bearer } from '../helpers/server.js'
import { SseClient } from '../helpers/sse.js'
import { startTrackedService } from '../helpers/tracked-service.js'
import { receiver } from '../helpers/webhooks.js'

for (const engine of engines()) {
  t.test(
    `an outage found by the scheduler reaches the event stream and a webhook, opened and closed once each, on ${engine}`,
    async (t) => {
      const { service, key, setHealthy } = await startTrackedService(t, {
        engine,
        site: { domain: 'flaky.example.com', name: 'Flaky' },
        env: { CHECK_INTERVAL_S: '1' }
      })
      // The SSE helper, not the client's streamEvents: what is looked at here is the raw stream (no
      // compression asked for gzip, the closing comment, a clean end), which the client hides.
      const url = `http://127.0.0.1:${service.server.info.port}/api/v1/events`
      const client = await SseClient.connect(url, { ...bearer(key), 'accept-encoding': 'gzip' })
      t.equal(client.status, 200)
      t.equal(client.headers['content-encoding'], undefined)

      // A webhook registered through the API, on a receiver that verifies what it gets.
      const manage = generateKey()
      await createKey({ db: service.db, name: 'manage', keyHash: hashKey(manage), rateLimit: null, scopes: 'manage', now: new Date() })
      const hook = await receiver(t)
      const manager = apiClient(`http://127.0.0.1:${service.server.info.port}`, manage)
      const { secret } = await manager.createWebhook({ url: hook.url })
      t.equal(manager.statuses.at(-1), 201)

      setHealthy(false)
      await client.waitFor((c) => c.events.some((e) => e.type === 'outage.opened'), 15_000, 'outage.opened')
      setHealthy(true)
      await client.waitFor((c) => c.events.some((e) => e.type === 'outage.closed'), 15_000, 'outage.closed')
      await removeSite({ db: service.db, domain: 'flaky.example.com', now: new Date() })
      await client.waitFor((c) => c.events.some((e) => e.type === 'site.removed'), 15_000, 'site.removed')
      t.same(
        client.events.map((e) => e.type),
        ['outage.opened', 'outage.closed', 'site.removed'],
        'each change once, in the order it happened'
      )
      const [opened, closed] = client.events
      t.match(opened?.data, {
        domain: 'flaky.example.com',
        name: 'Flaky',
        ended_at: null,
        site: { domain: 'flaky.example.com', name: 'Flaky' }
      })
      t.equal(closed?.data.started_at, opened?.data.started_at, 'the same outage closed')
      t.type(closed?.data.ended_at, 'string')
      t.same(
        client.events.map((e) => e.id),
        [opened?.id, (opened?.id ?? 0) + 1, (opened?.id ?? 0) + 2],
        'consecutive ids'
      )

      // The webhook got the same three events, each once, signed, with the stream's ids.
      t.ok(await holds(() => hook.got.length >= 3, 15_000), 'three deliveries arrived')
      const deliveries = hook.got.map((r) => {
        const verified = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: unknown }
        return { id: Number(r.headers['webhook-id']), type: verified.type, data: verified.data }
      })
      t.same(
        deliveries.map((d) => [d.id, d.type]),
        client.events.map((e) => [e.id, e.type]),
        'every delivery verifies with standardwebhooks; the same events, once each, with the ids the stream gave'
      )
      t.same(deliveries[0]?.data, opened?.data, 'with the same payload')

      // Stopping the service ends the stream cleanly; the stop is not held up by it.
      const stopped = service.stop()
      t.equal(await client.ended, true, 'the stream ended cleanly')
      await stopped
      t.match(client.blocks.at(-1), { kind: 'comment', text: /stopping/ })
      t.equal(hook.got.length, 3, 'and no delivery came twice')
    }
  )
}
