import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createKey } from '../../lib/store/keys.js'
import { apiClient } from '../helpers/api-client.js'
import { engines } from '../helpers/db.js'
import { holds } from '../helpers/poll.js'
import { bearer } from '../helpers/server.js'
import { SseClient } from '../helpers/sse.js'
import { startProxy } from '../helpers/targets.js'
import { startTrackedService } from '../helpers/tracked-service.js'
import { receiver } from '../helpers/webhooks.js'

/*
 * Per-site expectations and the slow rule, end to end: the real service, its scheduler and three
 * locations (one direct, two through CONNECT proxies that dial from their own loopback addresses, so
 * the target tells the locations apart by the address a request comes from), settings changed
 * through the API with the typed client, events received on the stream and by a webhook.
 */

const KEYWORD = 'keyword.example.com'
const SLOW = 'slow.example.com'
/** The address each location's requests come from: direct, then the two proxies. */
const FROM = ['127.0.0.1', '127.0.0.2', '127.0.0.3'] as const

for (const engine of engines()) {
  t.test(`a keyword lost at two locations opens an outage, at one it does not; slow comes and goes once, on ${engine}`, async (t) => {
    /** Locations (by address) whose answer lacks the keyword; whether the slow site answers slowly. */
    const missing = new Set<string>()
    let slowMs = 0
    const proxies = await Promise.all(FROM.slice(1).map((localAddress) => startProxy({ localAddress })))
    t.teardown(() => Promise.all(proxies.map((p) => p.close())))
    const { service, key } = await startTrackedService(t, {
      engine,
      site: { domain: KEYWORD, name: 'Keyword' },
      sites: [{ domain: SLOW, name: 'Slow' }],
      env: {
        CHECK_INTERVAL_S: '1',
        // Room for the slow answers (900 ms) within the deadline.
        PROBE_TIMEOUT_MS: '3000',
        LOCATIONS: JSON.stringify([
          { label: 'Direct 1, Testland' },
          ...proxies.map((p, i) => ({ label: `Proxy ${i + 1}, Testland`, proxy: `http://127.0.0.1:${p.port}` }))
        ])
      },
      respond: (req, res, host) => {
        const from = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '')
        if (host === SLOW) setTimeout(() => res.writeHead(200).end('ok'), slowMs)
        else res.writeHead(200).end(missing.has(from) ? '<h1>Maintenance</h1>' : '<h1>Shop</h1><a>Sign in</a>')
      }
    })
    const base = `http://127.0.0.1:${service.server.info.port}`
    const manage = generateKey()
    await createKey({
      db: service.db,
      name: 'manage',
      keyHash: hashKey(manage),
      rateLimit: 100_000,
      scopes: 'read,manage',
      now: new Date()
    })
    const client = apiClient(base, manage)
    const hook = await receiver(t)
    const { secret } = await client.createWebhook({ url: hook.url })
    const stream = await SseClient.connect(`${base}/api/v1/events`, bearer(key))
    const typesOf = (domain: string): string[] =>
      stream.events.filter((e) => e.data.site?.domain === domain && e.type !== 'site.added').map((e) => e.type)

    const changed = await client.changeSite(KEYWORD, { expect: { body_contains: 'Sign in' } })
    t.same(changed.settings, { expect: { body_contains: 'Sign in' } })
    // Far from both the slow answers and a fast one on a loaded machine: no spurious spell either way.
    await client.changeSite(SLOW, { expect: { max_response_ms: 600 } })
    const checked = (domain: string, after: number) => async () => {
      const s = await client.getStatus(domain)
      return s.checked_at !== null && Date.parse(s.checked_at) > after
    }

    // The two sites' stories run side by side: each is checked every second.
    const keyword = async (): Promise<void> => {
      // At one location: that location says down, the quorum says up; no outage.
      missing.add(FROM[2])
      t.ok(await holds(checked(KEYWORD, Date.now()), 15_000), 'checked with the keyword missing at one location')
      t.ok(await holds(checked(KEYWORD, Date.now()), 15_000), 'and again')
      const one = await client.getStatus(KEYWORD)
      t.match(one, { status: 'up', partial: true, last_outage: null }, 'one location alone opens no outage')

      // At two: down, and an outage opens, announced on the stream and to the webhook.
      missing.add(FROM[1])
      await stream.waitFor(() => typesOf(KEYWORD).includes('outage.opened'), 15_000, 'outage.opened')
      const down = await client.getStatus(KEYWORD)
      t.match(down, { status: 'down', last_outage: { ended_at: null } })
      const stored = await service
        .db('checks')
        .where({ site_id: (await service.db('sites').where({ domain: KEYWORD }).first('id')).id })
        .orderBy('id', 'desc')
        .first('locations')
      const codes = (JSON.parse(stored.locations) as Array<{ error: string | null }>).map((l) => l.error)
      t.same(
        codes.filter((c) => c !== null).sort(),
        ['expect: body_contains not found', 'expect: body_contains not found'],
        'two locations judged the body'
      )
      missing.clear()
      await stream.waitFor(() => typesOf(KEYWORD).includes('outage.closed'), 15_000, 'outage.closed')
      t.same(typesOf(KEYWORD), ['outage.opened', 'outage.closed'], 'the outage opened and closed once')
    }
    const slowly = async (): Promise<void> => {
      // Slow: two slow checks in a row make it slow, two fast ones end it; one event each way.
      slowMs = 900
      await stream.waitFor(() => typesOf(SLOW).includes('site.slow'), 15_000, 'site.slow')
      const slow = await client.getStatus(SLOW)
      t.match(slow, { status: 'up', slow: true }, 'up, and slow')
      const badge = await fetch(`${base}/api/badge/${SLOW}`)
      t.match(await badge.text(), /up \(slow\)/, 'the badge says so')
      const metrics = await (await fetch(`${base}/metrics`, { headers: bearer(key) })).text()
      t.match(metrics, new RegExp(`^site_status_slow\\{domain="${SLOW}"\\} 1$`, 'm'), 'and /metrics')
      t.match(metrics, new RegExp(`^site_status_slow\\{domain="${KEYWORD}"\\} 0$`, 'm'))
      slowMs = 0
      await stream.waitFor(() => typesOf(SLOW).includes('site.slow_ended'), 15_000, 'site.slow_ended')
      t.match(await client.getStatus(SLOW), { status: 'up', slow: false })
      t.ok(await holds(checked(SLOW, Date.now()), 15_000), 'checked once more after the spell')
      t.same(typesOf(SLOW), ['site.slow', 'site.slow_ended'], 'exactly one event each way')
      const spell = stream.events.find((e) => e.type === 'site.slow')
      t.match(spell?.data, { site: { domain: SLOW, name: 'Slow' }, max_response_ms: 600 })
      t.ok(spell?.data.response_ms > 600, `over the threshold: ${spell?.data.response_ms} ms`)
    }
    await Promise.all([keyword(), slowly()])

    // The webhook got every one of them, with the stream's ids.
    const wanted = stream.events.filter((e) => e.type !== 'site.added')
    t.ok(await holds(() => hook.got.length >= wanted.length, 15_000), 'every event was delivered')
    const delivered = hook.got.map((r) => {
      const verified = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string }
      return [Number(r.headers['webhook-id']), verified.type]
    })
    t.same(
      delivered,
      wanted.map((e) => [e.id, e.type]),
      'the same events, once each'
    )
  })
}
