import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Db } from '../../../lib/store/db.js'
import { fanOut } from '../../../lib/webhooks/fan-out.js'
import { SecretBox } from '../../../lib/webhooks/secret-box.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer, testServer } from '../../helpers/server.js'
import { added, appendEvent } from '../../helpers/webhooks.js'

const T0 = Date.parse('2026-11-24T08:00:00.000Z')

async function api(t: Test, db: Db, url: string, env: Record<string, string> = { ALLOW_PRIVATE_TARGETS: '1' }) {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-webhook-routes-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const box = new SecretBox({ key: null, keyFile: join(dir, 'webhook.key') })
  let wakes = 0
  const { server, issueKey, logs } = await testServer({
    db,
    env: { DATABASE_URL: url, ...env },
    now: () => new Date(T0),
    webhooks: {
      box,
      wake: () => {
        wakes++
      }
    }
  })
  const key = await issueKey({ limit: 100_000, scopes: 'read,check,manage' })
  const call = async (method: string, path: string, payload?: unknown) => {
    const res = await server.inject({ method, url: path, headers: bearer(key), payload: payload as object | undefined })
    matchesOpenApi(t, res)
    return { code: res.statusCode, body: res.payload === '' ? null : JSON.parse(res.payload), raw: res.payload }
  }
  return { call, logs, box, wakes: () => wakes }
}

const HOOK = 'http://127.0.0.1:9/hook'

for (const engine of engines()) {
  t.test(`the webhook routes on ${engine}`, async (t) => {
    t.test('create shows the secret once; the list, the database and the logs never hold it', async (t) => {
      const { db, url } = await migratedDb(engine, t)
      const { call, logs, box } = await api(t, db, url)
      const created = await call('POST', '/api/v1/webhooks', {
        url: HOOK,
        events: ['outage.opened'],
        domains: ['HTTPS://Bücher.DE/', 'shop.example.com', 'bücher.de']
      })
      t.equal(created.code, 201)
      t.same(Object.keys(created.body).sort(), ['created_at', 'domains', 'events', 'id', 'secret', 'url'])
      t.match(created.body, {
        url: HOOK,
        events: ['outage.opened'],
        domains: ['xn--bcher-kva.de', 'shop.example.com'],
        created_at: '2026-11-24T08:00:00.000Z'
      })
      const secret = created.body.secret as string
      t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
      t.equal(Buffer.from(secret.slice(6), 'base64').length, 32, '32 random bytes')

      const stored = await db('webhooks').where({ id: created.body.id }).first()
      t.notOk(String(stored.secret).includes(secret.slice(6)), 'the stored column does not hold the secret')
      t.notOk(String(stored.secret).includes(Buffer.from(secret.slice(6), 'base64').toString('hex')), 'nor its bytes in hex')
      t.equal(box.open(String(stored.secret)), secret, 'it is the sealed secret')
      const otherKey = new SecretBox({ key: randomBytes(32), keyFile: '/nonexistent/webhook.key' })
      t.throws(() => otherKey.open(String(stored.secret)), { code: 'WEBHOOK_KEY_MISMATCH' }, 'a dump and another key cannot open it')

      const list = await call('GET', '/api/v1/webhooks')
      t.equal(list.code, 200)
      t.same(list.body, {
        webhooks: [
          {
            id: created.body.id,
            url: HOOK,
            events: ['outage.opened'],
            domains: ['xn--bcher-kva.de', 'shop.example.com'],
            created_at: '2026-11-24T08:00:00.000Z',
            disabled_at: null,
            disabled_reason: null
          }
        ]
      })
      t.notOk(list.raw.includes('whsec_'), 'no secret in the list')
      t.notOk(
        logs.lines.some((l) => l.includes('whsec_') || l.includes(secret.slice(6, 30))),
        'no secret in any log line'
      )
    })

    t.test('bad input is a 400 that says what is wrong', async (t) => {
      const { db, url } = await migratedDb(engine, t)
      const { call } = await api(t, db, url)
      const cases: Array<[string, unknown, RegExp]> = [
        ['no body', undefined, /request body/],
        ['no url', { events: null }, /"url" is required/],
        ['an ftp url', { url: 'ftp://example.com/x' }, /http:\/\/ or https:\/\//],
        ['not a url', { url: 'hooks example' }, /http:\/\/ or https:\/\//],
        ['a url over 2048 characters', { url: `https://example.com/${'a'.repeat(2048)}` }, /2048/],
        ['a url with a password', { url: 'https://user:pw@example.com/hook' }, /username or password/],
        ['an unknown event type', { url: HOOK, events: ['site.renamed'] }, /"events" may list only/],
        ['an empty events list', { url: HOOK, events: [] }, /events/],
        [
          'a bad domain',
          { url: HOOK, domains: ['shop.example.com', 'localhost'] },
          /"domains\[1\]": domain must be a fully qualified name/
        ],
        ['an extra field', { url: HOOK, secret: 'mine' }, /"secret" is not allowed/]
      ]
      for (const [what, payload, error] of cases) {
        const res = await call('POST', '/api/v1/webhooks', payload)
        t.equal(res.code, 400, what)
        t.match(res.body, { error }, what)
      }
      t.equal((await db('webhooks').count({ n: '*' }))[0]?.n, 0, 'nothing was stored')
      t.equal((await call('DELETE', '/api/v1/webhooks/abc')).code, 400, 'an id that is not a number')
      t.equal((await call('GET', '/api/v1/webhooks/1/deliveries?limit=0')).code, 400)
      t.equal((await call('GET', '/api/v1/webhooks/1/deliveries?cursor=nonsense')).code, 400)
    })

    t.test('a URL refused by the target policy is a 400', async (t) => {
      const { db, url } = await migratedDb(engine, t)
      const { call } = await api(t, db, url, {})
      for (const target of ['http://127.0.0.1:8080/hook', 'https://localhost/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest']) {
        const res = await call('POST', '/api/v1/webhooks', { url: target })
        t.equal(res.code, 400, target)
        t.same(res.body, { error: 'url resolves to a non-public address' })
      }
      t.equal((await db('webhooks').count({ n: '*' }))[0]?.n, 0, 'nothing was stored')
    })

    t.test('delete removes a webhook and its deliveries; an unknown one is 404', async (t) => {
      const { db, url } = await migratedDb(engine, t)
      const { call } = await api(t, db, url)
      const { body } = await call('POST', '/api/v1/webhooks', { url: HOOK })
      await appendEvent(db, added('gone.example.com', new Date(T0)))
      await fanOut({ db, now: new Date(T0) })
      const removed = await call('DELETE', `/api/v1/webhooks/${body.id}`)
      t.equal(removed.code, 204)
      t.equal(removed.raw, '')
      t.same((await call('GET', '/api/v1/webhooks')).body, { webhooks: [] })
      t.equal((await db('webhook_deliveries').count({ n: '*' }))[0]?.n, 0, 'its delivery log went with it')
      t.match(await call('DELETE', `/api/v1/webhooks/${body.id}`), { code: 404, body: { error: 'no such webhook' } })
      t.match(await call('GET', `/api/v1/webhooks/${body.id}/deliveries`), { code: 404, body: { error: 'no such webhook' } })
    })

    t.test('deliveries are listed newest first, a page at a time', async (t) => {
      const { db, url } = await migratedDb(engine, t)
      const { call } = await api(t, db, url)
      const { body } = await call('POST', '/api/v1/webhooks', { url: HOOK })
      const events = await appendEvent(db, ...['a', 'b', 'c', 'd', 'e'].map((n, i) => added(`${n}.example.com`, new Date(T0), i)))
      await fanOut({ db, now: new Date(T0) })
      const first = await call('GET', `/api/v1/webhooks/${body.id}/deliveries?limit=2`)
      t.equal(first.code, 200)
      t.same(
        first.body.deliveries.map((d: { event_id: number }) => d.event_id),
        [events[4]?.id, events[3]?.id]
      )
      t.same(first.body.deliveries[0], {
        id: first.body.deliveries[0].id,
        event_id: events[4]?.id,
        type: 'site.added',
        attempts: 0,
        status: 'pending',
        last_http_code: null,
        last_error: null,
        next_attempt_at: '2026-11-24T08:00:00.000Z',
        created_at: '2026-11-24T08:00:00.000Z',
        delivered_at: null
      })
      const seen = [...first.body.deliveries]
      let cursor = first.body.next_cursor as string | null
      while (cursor !== null) {
        const page = await call('GET', `/api/v1/webhooks/${body.id}/deliveries?limit=2&cursor=${cursor}`)
        seen.push(...page.body.deliveries)
        cursor = page.body.next_cursor
      }
      t.same(
        seen.map((d: { event_id: number }) => d.event_id),
        events.map((e) => e.id).reverse(),
        'every delivery once, newest first'
      )
    })

    t.test('retry sends a delivery again now; refused for a disabled webhook or a pruned event', async (t) => {
      const { db, url } = await migratedDb(engine, t)
      const { call, wakes } = await api(t, db, url)
      const { body } = await call('POST', '/api/v1/webhooks', { url: HOOK })
      await appendEvent(db, added('a.example.com', new Date(T0)), added('b.example.com', new Date(T0)))
      await fanOut({ db, now: new Date(T0) })
      const [one, two] = await db('webhook_deliveries').orderBy('id').select('id', 'event_id')
      await db('webhook_deliveries')
        .where({ id: one.id })
        .update({ status: 'failed', attempts: 9, last_http_code: 500, last_error: 'http: 500', next_attempt_at: new Date(T0 - 86_400_000) })

      const retried = await call('POST', `/api/v1/webhooks/${body.id}/deliveries/${one.id}/retry`)
      t.equal(retried.code, 202)
      t.match(retried.body, { id: Number(one.id), status: 'pending', attempts: 0, next_attempt_at: '2026-11-24T08:00:00.000Z' })
      t.equal(wakes(), 1, 'the dispatcher is woken to send it now')
      t.match(await db('webhook_deliveries').where({ id: one.id }).first(), { status: 'pending', attempts: 0, claimed_by: null })

      t.match(await call('POST', `/api/v1/webhooks/${body.id}/deliveries/99999/retry`), { code: 404, body: { error: /no such delivery/ } })
      t.match(await call('POST', `/api/v1/webhooks/99999/deliveries/${one.id}/retry`), { code: 404, body: { error: 'no such webhook' } })

      await db('events').where({ id: two.event_id }).delete()
      t.match(await call('POST', `/api/v1/webhooks/${body.id}/deliveries/${two.id}/retry`), {
        code: 409,
        body: { error: /no longer stored/ }
      })
      await db('webhooks')
        .where({ id: body.id })
        .update({ disabled_at: new Date(T0), disabled_reason: 'the receiver answered 410 Gone' })
      t.match(await call('POST', `/api/v1/webhooks/${body.id}/deliveries/${one.id}/retry`), {
        code: 409,
        body: { error: /disabled/ }
      })
      t.equal(wakes(), 1, 'refused retries wake nothing')
    })
  })
}
