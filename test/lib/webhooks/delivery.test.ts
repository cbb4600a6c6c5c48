import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import http from 'node:http'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { createLogger } from '../../../lib/logger.js'
import { outageEvent } from '../../../lib/rules/events.js'
import type { Db } from '../../../lib/store/db.js'
import { WebhookDispatcher } from '../../../lib/webhooks/dispatcher.js'
import { fanOut } from '../../../lib/webhooks/fan-out.js'
import { createWebhook } from '../../../lib/webhooks/manage.js'
import { createPost } from '../../../lib/webhooks/post.js'
import { SecretBox } from '../../../lib/webhooks/secret-box.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { LogCapture } from '../../helpers/server.js'
import { added, appendEvent, receiver, verifyAt } from '../../helpers/webhooks.js'

const SECOND = 1000
const MINUTE = 60 * SECOND

interface Setup {
  db: Db
  box: SecretBox
  logs: LogCapture
  /** The dispatchers' clock, moved by the tests. */
  clock: { now: number }
  dispatcher(opts?: { box?: SecretBox; instance?: string }): WebhookDispatcher
  hook(url: string, filter?: { events?: string[]; domains?: string[] }): Promise<{ id: number; secret: string }>
  deliveries(): Promise<Array<Record<string, any>>>
}

async function setup(t: Test, engine: 'sqlite' | 'mysql'): Promise<Setup> {
  const { db } = await migratedDb(engine, t)
  const dir = mkdtempSync(join(tmpdir(), 'site-status-webhooks-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const box = new SecretBox({ key: randomBytes(32), keyFile: join(dir, 'webhook.key') })
  const logs = new LogCapture()
  const logger = createLogger({ level: 'info', stream: logs })
  const outbound = createPost({ policy: { allowPrivate: true }, userAgent: 'SiteStatusAPI/0.1 (+http://status.test)' })
  const clock = { now: Date.now() }
  const made: WebhookDispatcher[] = []
  t.teardown(async () => {
    for (const d of made) await d.stop(0)
    await outbound.close()
  })
  return {
    db,
    box,
    logs,
    clock,
    dispatcher: (opts = {}) => {
      const d = new WebhookDispatcher({
        db,
        box: opts.box ?? box,
        post: outbound.post,
        logger,
        now: () => new Date(clock.now),
        random: () => 0.5,
        instance: opts.instance
      })
      made.push(d)
      return d
    },
    hook: async (url, filter = {}) => {
      const { webhook, secret } = await createWebhook({
        db,
        box,
        url,
        events: filter.events ?? null,
        domains: filter.domains ?? null,
        now: new Date(clock.now)
      })
      return { id: webhook.id, secret }
    },
    deliveries: async () => db('webhook_deliveries').orderBy('id').select('*')
  }
}

for (const engine of engines()) {
  t.test(`webhook deliveries on ${engine}`, async (t) => {
    t.test('every delivery is signed as Standard Webhooks say and verifies with the standardwebhooks package', async (t) => {
      const s = await setup(t, engine)
      await appendEvent(s.db, added('before.example.com', new Date(s.clock.now)))
      const r = await receiver(t)
      const { secret } = await s.hook(r.url)
      const at = new Date(s.clock.now - 1234)
      const [first, second] = await appendEvent(
        s.db,
        added('shop.example.com', at, 7),
        outageEvent('open', { id: 7, domain: 'shop.example.com', name: 'Shop' }, { started_at: at, ended_at: null }, at)
      )
      await s.dispatcher().tick()
      t.equal(r.got.length, 2, 'both events sent, and not the one from before the webhook existed')
      for (const [i, got] of r.got.entries()) {
        const payload = new Webhook(secret).verify(got.body, got.headers as Record<string, string>)
        t.match(payload, { type: [first, second][i]?.type, timestamp: at.toISOString() }, 'the package verifies it')
      }
      const byId = new Map(r.got.map((g) => [g.headers['webhook-id'], g]))
      const opened = byId.get(String(second?.id))!
      t.same(
        JSON.parse(opened.body),
        {
          type: 'outage.opened',
          timestamp: at.toISOString(),
          data: {
            domain: 'shop.example.com',
            name: 'Shop',
            started_at: at.toISOString(),
            ended_at: null,
            duration_seconds: 0,
            site: { domain: 'shop.example.com', name: 'Shop' }
          }
        },
        'the body: type, the event time and its payload'
      )
      t.equal(opened.headers['webhook-timestamp'], String(Math.floor(s.clock.now / 1000)), 'webhook-timestamp: the attempt in Unix seconds')
      t.match(opened.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/)
      t.match(opened.headers['content-type'], /^application\/json/)
      t.equal(opened.headers['user-agent'], 'SiteStatusAPI/0.1 (+http://status.test)')
      t.match(await s.deliveries(), [
        { status: 'delivered', attempts: 1, last_http_code: 200, last_error: null },
        { status: 'delivered', attempts: 1, last_http_code: 200, last_error: null }
      ])
    })

    t.test('a receiver failing three times then answering gets the same webhook-id each time, and one row ends delivered', async (t) => {
      const s = await setup(t, engine)
      const r = await receiver(t, [500, 503, 502, 204])
      const { secret } = await s.hook(r.url)
      const [event] = await appendEvent(s.db, added('retry.example.com', new Date(s.clock.now)))
      const d = s.dispatcher()
      const sentAt: number[] = []
      const attempt = async (): Promise<void> => {
        await d.tick()
        sentAt.push(s.clock.now)
      }
      await attempt()
      t.match(await s.deliveries(), [{ status: 'pending', attempts: 1, last_http_code: 500, last_error: 'http: 500' }])
      t.equal((await s.deliveries())[0]?.next_attempt_at !== null, true)
      s.clock.now += 4 * SECOND
      await d.tick()
      t.equal(r.got.length, 1, 'not due before its 5 s')
      for (const wait of [SECOND, 5 * MINUTE, 30 * MINUTE]) {
        s.clock.now += wait
        await attempt()
      }
      t.equal(r.got.length, 4, 'sent four times: after 5 s, 5 min and 30 min')
      t.same(
        r.got.map((g) => g.headers['webhook-id']),
        Array(4).fill(String(event?.id)),
        'the same webhook-id on every attempt'
      )
      for (const [i, got] of r.got.entries()) t.ok(verifyAt(sentAt[i]!, secret, got) !== undefined, `attempt ${i + 1} verifies`)
      const rows = await s.deliveries()
      t.equal(rows.length, 1, 'one delivery row')
      t.match(rows[0], { status: 'delivered', attempts: 4, last_http_code: 204, last_error: null })
      t.same(d.outcomes(), { delivered: 1, retry: 3, failed: 0 }, 'the attempts counted by outcome, for /metrics')
      s.clock.now += 10 * 3_600_000
      await d.tick()
      t.equal(r.got.length, 4, 'nothing more is sent')
    })

    t.test('410 disables the webhook: nothing more is sent, pending deliveries stop', async (t) => {
      const s = await setup(t, engine)
      const r = await receiver(t, [503, 410])
      const { id } = await s.hook(r.url)
      await appendEvent(s.db, added('a.example.com', new Date(s.clock.now)))
      const d = s.dispatcher()
      await d.tick()
      await appendEvent(s.db, added('b.example.com', new Date(s.clock.now)))
      await d.tick()
      t.equal(r.got.length, 2)
      t.same(d.outcomes(), { delivered: 0, retry: 1, failed: 1 }, 'the 410 counted as failed')
      const hook = await s.db('webhooks').where({ id }).first()
      t.not(hook.disabled_at, null, 'disabled')
      t.equal(hook.disabled_reason, 'the receiver answered 410 Gone')
      t.match(await s.deliveries(), [
        { status: 'failed', attempts: 1, last_error: 'webhook disabled: the receiver answered 410 Gone' },
        { status: 'failed', attempts: 1, last_http_code: 410 }
      ])
      s.clock.now += 6 * SECOND
      await appendEvent(s.db, added('c.example.com', new Date(s.clock.now)))
      await d.tick()
      t.equal(r.got.length, 2, 'neither the retry nor a new event is sent')
      t.equal((await s.deliveries()).length, 2, 'a disabled webhook gets no new deliveries')
    })

    t.test('a restart in the middle of a retry schedule loses nothing', async (t) => {
      const s = await setup(t, engine)
      const r = await receiver(t, [500, 200])
      await s.hook(r.url)
      await appendEvent(s.db, added('restart.example.com', new Date(s.clock.now)))
      const before = s.dispatcher()
      await before.tick()
      await before.stop()
      t.match(await s.deliveries(), [{ status: 'pending', attempts: 1 }])
      s.clock.now += 5 * SECOND
      await s.dispatcher().tick()
      t.equal(r.got.length, 2, 'the due retry is sent by the new dispatcher')
      t.equal(r.got[1]?.headers['webhook-id'], r.got[0]?.headers['webhook-id'])
      t.match(await s.deliveries(), [{ status: 'delivered', attempts: 2 }])
    })

    t.test('an event committed before the fan-out ran is delivered after a restart, once', async (t) => {
      const s = await setup(t, engine)
      const r = await receiver(t)
      await s.hook(r.url)
      const crashed = s.dispatcher()
      const [event] = await appendEvent(s.db, added('crash.example.com', new Date(s.clock.now)))
      await crashed.stop()
      t.equal((await s.deliveries()).length, 0, 'not fanned out before the "crash"')
      const again = s.dispatcher()
      await again.tick()
      await again.tick()
      t.equal(r.got.length, 1)
      t.equal(r.got[0]?.headers['webhook-id'], String(event?.id))
      t.equal(await fanOut({ db: s.db, now: new Date(s.clock.now) }), 0, 'a second fan-out makes nothing')
      const hook = await s.db('webhooks').first()
      t.equal(Number(hook.cursor), event?.id, 'the cursor moved past it')
    })

    t.test('filters: event types and domains', async (t) => {
      const s = await setup(t, engine)
      const outages = await receiver(t)
      const shop = await receiver(t)
      const everything = await receiver(t)
      await s.hook(outages.url, { events: ['outage.opened', 'outage.closed'] })
      await s.hook(shop.url, { domains: ['shop.example.com'] })
      await s.hook(everything.url)
      const at = new Date(s.clock.now)
      const blog = { id: 1, domain: 'blog.example.com', name: 'Blog' }
      await appendEvent(
        s.db,
        added('shop.example.com', at, 2),
        added('blog.example.com', at, 1),
        outageEvent('open', blog, { started_at: at, ended_at: null }, at)
      )
      await s.dispatcher().tick()
      const seen = (r: { got: Array<{ body: string }> }): string[] =>
        r.got
          .map((g) => JSON.parse(g.body) as { type: string; data: { site: { domain: string } } })
          .map((b) => `${b.type} ${b.data.site.domain}`)
          .sort()
      t.same(seen(outages), ['outage.opened blog.example.com'])
      t.same(seen(shop), ['site.added shop.example.com'])
      t.same(seen(everything), ['outage.opened blog.example.com', 'site.added blog.example.com', 'site.added shop.example.com'])
    })

    t.test('two dispatchers over one database never send one delivery twice', async (t) => {
      const s = await setup(t, engine)
      const r = await receiver(t)
      await s.hook(r.url)
      await appendEvent(s.db, ...Array.from({ length: 20 }, (_, i) => added(`n${i}.example.com`, new Date(s.clock.now), i)))
      const [a, b] = [s.dispatcher({ instance: 'one' }), s.dispatcher({ instance: 'two' })]
      await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()])
      await Promise.all([a.tick(), b.tick()])
      const ids = r.got.map((g) => g.headers['webhook-id'])
      t.equal(ids.length, 20, 'every event sent')
      t.equal(new Set(ids).size, 20, 'each once')
      t.ok(
        (await s.deliveries()).every((d) => d.status === 'delivered' && d.attempts === 1 && d.claimed_by === null),
        'all delivered at the first attempt, no lease left'
      )
    })

    t.test('a secret this key cannot open fails the attempt with a clear error, and the service goes on', async (t) => {
      const s = await setup(t, engine)
      const r = await receiver(t)
      const { secret } = await s.hook(r.url)
      await appendEvent(s.db, added('key.example.com', new Date(s.clock.now)))
      const other = new SecretBox({ key: randomBytes(32), keyFile: '/nonexistent/webhook.key' })
      await s.dispatcher({ box: other }).tick()
      t.equal(r.got.length, 0, 'nothing is sent unsigned')
      t.match(await s.deliveries(), [
        { status: 'pending', attempts: 1, last_http_code: null, last_error: /^secret: .*cannot be decrypted/ }
      ])
      t.ok(
        s.logs.lines.some((l) => /webhook secret cannot be opened/.test(l) && /WEBHOOK_KEY_MISMATCH/.test(l)),
        'the operator is told'
      )
      t.notOk(
        s.logs.lines.some((l) => l.includes(secret.slice(6, 30))),
        'the secret is in no log line'
      )
      s.clock.now += 5 * SECOND
      await s.dispatcher().tick()
      t.equal(r.got.length, 1, 'with the right key the retry is sent')
    })

    t.test('a stop calls off a send that hangs and frees its claim without counting an attempt', async (t) => {
      const s = await setup(t, engine)
      const hanging = http.createServer(() => {})
      hanging.listen(0, '127.0.0.1')
      await new Promise((resolve) => hanging.once('listening', resolve))
      t.teardown(() => {
        hanging.closeAllConnections()
        hanging.close()
      })
      const port = (hanging.address() as { port: number }).port
      await s.hook(`http://127.0.0.1:${port}/hook`)
      await appendEvent(s.db, added('hang.example.com', new Date(s.clock.now)))
      const d = s.dispatcher()
      const ticked = d.tick()
      await new Promise<void>((resolve) =>
        hanging.once('request', () => {
          resolve()
        })
      )
      await d.stop(50)
      await ticked
      t.match(await s.deliveries(), [{ status: 'pending', attempts: 0, claimed_by: null, claimed_until: null }])
    })

    t.test('delivery rows older than 30 days are pruned', async (t) => {
      const s = await setup(t, engine)
      const r = await receiver(t)
      await s.hook(r.url)
      await appendEvent(s.db, added('old.example.com', new Date(s.clock.now)))
      await s.dispatcher().tick()
      t.equal((await s.deliveries()).length, 1)
      s.clock.now += 29 * 86_400_000
      await s.dispatcher().tick()
      t.equal((await s.deliveries()).length, 1, 'kept at 29 days')
      s.clock.now += 2 * 86_400_000
      await s.dispatcher().tick()
      t.equal((await s.deliveries()).length, 0, 'gone past 30 days')
    })
  })
}
