import t, { type Test } from 'tap'
import FakeTimers, { type Clock } from '@sinonjs/fake-timers'
import { run } from '../../lib/cli/index.js'
import { generateKey } from '../../lib/keys.js'
import { revokeKey, listKeys } from '../../lib/store/keys.js'
import { engines, migratedDb } from '../helpers/db.js'
import { bearer, testServer } from '../helpers/server.js'
import { PassThrough } from 'node:stream'
import { KEY_CACHE_TTL_MS, KEY_STALE_MS } from '../../lib/auth.js'

// Taken before any fake clock is installed: a guard for a request that should not wait.
const realSetTimeout = globalThis.setTimeout

/**
 * The key cache's clock on a fake the test moves: performance.now, and the timers the cache and the
 * reader of new keys wait on. Install it before building the server, so every cached entry is dated by it.
 */
function fakeClock(t: Test): Clock {
  const clock = FakeTimers.install({ toFake: ['performance', 'setTimeout', 'clearTimeout'] })
  t.teardown(() => {
    clock.uninstall()
  })
  // lru-cache takes a start time of 0 for "no TTL": the fake clock must not begin there.
  clock.tick(1000)
  return clock
}

for (const engine of engines()) {
  t.test(`bearer keys on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const { server, issueKey, logs } = await testServer({ db, env: { DATABASE_URL: url } })
    const key = await issueKey({ name: 'auth' })

    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['a missing Authorization header', {}, /missing API key/],
      ['an empty Authorization header', { authorization: '' }, /missing API key/],
      ['another scheme', { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` }, /malformed/],
      ['Bearer with no token', { authorization: 'Bearer' }, /malformed/],
      ['Bearer with two tokens', { authorization: `Bearer ${key} extra` }, /malformed/],
      ['a token of the wrong shape', { authorization: 'Bearer not-a-key' }, /invalid API key/],
      ['a well-formed unknown key', bearer(generateKey()), /invalid API key/],
      ['a known key with one character changed', bearer(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A')), /invalid API key/]
    ]
    for (const [title, headers, message] of cases) {
      t.test(`${title} gets 401 with a Bearer challenge`, async (t) => {
        const res = await server.inject({ method: 'GET', url: '/api/v1/rate_limit', headers })
        t.equal(res.statusCode, 401)
        t.match(res.headers['www-authenticate'], /^Bearer\b/)
        t.match(JSON.parse(res.payload), { error: message })
        t.notOk(res.headers['ratelimit-limit'], 'an unauthenticated request is not charged')
      })
    }

    t.test('a valid key is accepted in any case of the scheme word', async (t) => {
      for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
        const res = await server.inject({ method: 'GET', url: '/api/v1/rate_limit', headers: { authorization: `${scheme} ${key}` } })
        t.equal(res.statusCode, 200, scheme)
      }
    })

    t.test('a key revoked in the store stops working within one second', async (t) => {
      const clock = fakeClock(t)
      const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url } })
      const doomed = await issueKey({ name: 'doomed' })
      t.equal((await server.inject({ url: '/api/v1/rate_limit', headers: bearer(doomed) })).statusCode, 200)
      const id = (await listKeys({ db })).find((k) => k.name === 'doomed')?.id as number
      await revokeKey({ db, id, now: new Date() })
      await clock.tickAsync(1000)
      const res = await server.inject({ url: '/api/v1/rate_limit', headers: bearer(doomed) })
      t.equal(res.statusCode, 401, 'refused one second after revocation')
      t.match(JSON.parse(res.payload), { error: /revoked/ })
    })

    t.test('no key or Authorization header reaches the log', async (t) => {
      const text = logs.lines.join('\n')
      t.ok(logs.lines.length > 0, 'requests were logged')
      t.notOk(text.includes(key), 'the key text is absent')
      t.notOk(text.includes(key.slice(4, 20)), 'no fragment of it either')
      t.notOk(/authorization/i.test(text), 'no Authorization header')
    })
  })
}

t.test('keys revoked with the operator tool stop working in the running server within one second', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const clock = fakeClock(t)
  const { server } = await testServer({ db, env: { DATABASE_URL: url } })
  const out = new PassThrough()
  const chunks: string[] = []
  out.on('data', (c: Buffer) => chunks.push(c.toString()))
  const io = { stdout: out, stderr: new PassThrough(), env: { DATABASE_URL: url }, now: () => new Date() }
  t.equal(await run(['keys', 'create', '--name', 'tool'], io), 0)
  const key = chunks.join('').trim().split('\n').pop() as string
  t.equal(
    (await server.inject({ url: '/api/v1/rate_limit', headers: bearer(key) })).statusCode,
    200,
    'a key created with the tool works at once'
  )
  const id = (await listKeys({ db })).find((k) => k.name === 'tool')?.id as number
  t.equal(await run(['keys', 'revoke', String(id)], io), 0)
  await clock.tickAsync(1000)
  t.equal((await server.inject({ url: '/api/v1/rate_limit', headers: bearer(key) })).statusCode, 401, 'refused one second later')
})

t.test('while key lookups fail, a key seen before keeps working and an unseen one gets 503', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const clock = fakeClock(t)
  const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url } })
  const known = await issueKey({ name: 'known' })
  const unseen = await issueKey({ name: 'unseen' })
  t.equal((await server.inject({ url: '/api/v1/rate_limit', headers: bearer(known) })).statusCode, 200)
  await db.schema.renameTable('api_keys', 'api_keys_away')
  t.teardown(() => db.schema.renameTable('api_keys_away', 'api_keys'))
  await clock.tickAsync(600)
  t.equal(
    (await server.inject({ url: '/api/v1/rate_limit', headers: bearer(known) })).statusCode,
    200,
    'the known key still works after its cache entry went stale'
  )
  const res = await server.inject({ url: '/api/v1/rate_limit', headers: bearer(unseen) })
  t.equal(res.statusCode, 503, 'a key never seen cannot be checked')
  t.same(JSON.parse(res.payload), { error: 'database unavailable' })
})

t.test('a key looked up moments ago is answered while its row is read again; an older lookup waits for it', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const clock = fakeClock(t)
  const { server, issueKey } = await testServer({ db, env: { DATABASE_URL: url } })
  const key = await issueKey({ name: 'busy' })
  t.equal((await server.inject({ url: '/api/v1/rate_limit', headers: bearer(key) })).statusCode, 200, 'looked up')
  // The database busy: SQLite's one connection held by a transaction, so every lookup queues.
  const busy = await db.transaction()
  t.teardown(() => (busy.isCompleted() ? undefined : busy.rollback()))
  await clock.tickAsync(Math.round((KEY_CACHE_TTL_MS + KEY_STALE_MS) / 2))
  const answer = await Promise.race([
    server.inject({ url: '/api/v1/rate_limit', headers: bearer(key) }).then((r) => r.statusCode),
    new Promise((resolve) => realSetTimeout(resolve, 5000, 'still waiting after 5 s'))
  ])
  t.equal(answer, 200, 'past fresh, within the stale window: answered at once from the lookup it has')

  await clock.tickAsync(KEY_STALE_MS)
  let status: number | undefined
  const waiting = server.inject({ url: '/api/v1/rate_limit', headers: bearer(key) }).then((r) => (status = r.statusCode))
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
  t.equal(status, undefined, 'an older lookup is not trusted: the request waits for the row')
  await busy.commit()
  await waiting
  t.equal(status, 200, 'and is answered once the row is read')
})
