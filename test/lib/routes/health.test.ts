import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { scheduleHealth } from '../../../lib/monitoring/schedule/schedule-load.js'
import { Scheduler } from '../../../lib/monitoring/schedule/scheduler.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { testServer } from '../../helpers/server.js'
import { closedPort } from '../../helpers/targets.js'

for (const engine of engines()) {
  t.test(`healthz reports a reachable ${engine} database`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const { server } = await testServer({ db, env: { DATABASE_URL: url, INSTANCE_ID: 'web-1' } })
    const res = await server.inject({ url: '/healthz' })
    t.equal(res.statusCode, 200)
    t.same(
      JSON.parse(res.payload),
      { status: 'ok', database: 'ok', schedule: 'ok', instance: 'web-1', redis: null },
      'no REDIS_URL: redis null'
    )
    t.notOk(res.headers['ratelimit-limit'], 'no key, no budget')
    matchesOpenApi(t, res)
  })
}

t.test('healthz answers 503 within about a second when the database hangs', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const { server } = await testServer({ db, env: { DATABASE_URL: url } })
  // Hold SQLite's only connection so the ping has to wait for it.
  let release!: () => void
  let holding!: () => void
  const connectionHeld = new Promise<void>((resolve) => {
    holding = resolve
  })
  const held = db.transaction(async () => {
    holding()
    await new Promise<void>((resolve) => {
      release = resolve
    })
  })
  await connectionHeld
  // The ping's time limit on a fake clock: a second of it passes at once, whatever the machine's load.
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] })
  let answered = false
  const answering = server.inject({ url: '/healthz' }).finally(() => {
    answered = true
  })
  await clock.tickAsync(1000)
  clock.uninstall()
  t.ok(answered, 'answered once a second had passed, with the database still held')
  release()
  await held
  const res = await answering
  t.equal(res.statusCode, 503)
  matchesOpenApi(t, res)
  t.match(JSON.parse(res.payload), { error: 'database unavailable' })
  t.equal(res.headers['retry-after'], '5', 'with Retry-After, like every other 503')
  t.equal((await server.inject({ url: '/healthz' })).statusCode, 200, 'and 200 again once the database is free')
})

t.test('healthz answers 200 with "schedule": "behind" while the scheduler sheds checks, and "ok" again a minute later', async (t) => {
  const clock = FakeTimers.install({ now: 1_000_000 * 60_000, toFake: ['setInterval', 'clearInterval'] })
  t.teardown(() => {
    clock.uninstall()
  })
  const releases: Array<() => void> = []
  let sites = Array.from({ length: 5 }, (_, i) => ({ id: i + 1, domain: `site${i + 1}.example.com` }))
  // One slot and no queue: every site due while the first check hangs is shed.
  const scheduler = new Scheduler({
    intervalMs: 60_000,
    refreshMs: 1000,
    concurrency: 1,
    maxQueued: 0,
    now: () => clock.now,
    listSites: async () => sites,
    runCheck: () => new Promise<void>((resolve) => releases.push(resolve))
  })
  await scheduler.start()
  const { db, url } = await migratedDb('sqlite', t)
  const { server } = await testServer({
    db,
    env: { DATABASE_URL: url, INSTANCE_ID: 'web-2' },
    schedule: () => scheduleHealth(scheduler.load())
  })
  const health = async (): Promise<unknown> => {
    const res = await server.inject({ url: '/healthz' })
    t.equal(res.statusCode, 200)
    matchesOpenApi(t, res)
    return JSON.parse(res.payload)
  }

  t.same(await health(), { status: 'ok', database: 'ok', schedule: 'ok', instance: 'web-2', redis: null }, 'nothing due yet')
  await clock.tickAsync(60_000)
  t.ok(scheduler.stats().shed > 0)
  t.same(await health(), { status: 'ok', database: 'ok', schedule: 'behind', instance: 'web-2', redis: null })
  sites = sites.slice(0, 1)
  for (const release of releases.splice(0)) release()
  await clock.tickAsync(2 * 60_000)
  t.same(await health(), { status: 'ok', database: 'ok', schedule: 'ok', instance: 'web-2', redis: null }, 'keeping up again')
  for (const release of releases.splice(0)) release()
  const stopping = scheduler.stop()
  for (const release of releases.splice(0)) release()
  await stopping
})

t.test('healthz says whether Redis answers when REDIS_URL is set, and stays 200 when it does not', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const up = await testServer({ db, env: { DATABASE_URL: url, INSTANCE_ID: 'web-3', REDIS_URL: 'redis://127.0.0.1:6379/9' } })
  t.teardown(() => up.server.stop())
  const ok = await up.server.inject({ url: '/healthz' })
  t.equal(ok.statusCode, 200)
  t.same(JSON.parse(ok.payload), { status: 'ok', database: 'ok', schedule: 'ok', instance: 'web-3', redis: 'ok' })
  matchesOpenApi(t, ok)

  const down = await testServer({
    db,
    env: { DATABASE_URL: url, INSTANCE_ID: 'web-4', REDIS_URL: `redis://127.0.0.1:${await closedPort()}/9` }
  })
  t.teardown(() => down.server.stop())
  const res = await down.server.inject({ url: '/healthz' })
  t.equal(res.statusCode, 200, 'Redis away is no reason for a load balancer to take the instance out')
  t.same(JSON.parse(res.payload), { status: 'ok', database: 'ok', schedule: 'ok', instance: 'web-4', redis: 'unreachable' })
  matchesOpenApi(t, res)
})
