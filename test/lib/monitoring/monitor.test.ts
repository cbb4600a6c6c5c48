import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { loadConfig } from '../../../config/index.js'
import { startMonitoring } from '../../../lib/monitoring/monitor.js'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import type { CheckSupervisor } from '../../../lib/probing/supervisor.js'
import { createLogger } from '../../../lib/logger.js'
import { startService } from '../../../lib/main.js'
import { openDb, toDate } from '../../../lib/store/db.js'
import { removeSite } from '../../../lib/monitoring/remove-site.js'
import { addSite, addSites } from '../../../lib/monitoring/add-sites.js'
import { createMigratedDatabase, engines, migratedDb } from '../../helpers/db.js'
import { holds } from '../../helpers/poll.js'
import { LogCapture } from '../../helpers/server.js'
import { TEST_ACTORS } from '../../helpers/compiled.js'

const DAY = 86_400_000

for (const engine of engines()) {
  t.test(`sites added and removed in the store while monitoring runs are picked up without a restart, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'existing.example.com', name: null }, now: new Date() })
    const states = new SiteStates({ intervalMs: 1000, publicUrl: 'http://x' })
    const probed: Array<{ domain: string; at: number }> = []
    // The monitoring side only asks the supervisor to probe; recording is not what this test is about.
    const checks = {
      probeNow: async (domain: string) => {
        probed.push({ domain, at: Date.now() })
        return {}
      }
    } as unknown as CheckSupervisor
    const monitoring = await startMonitoring({
      db,
      states,
      checks,
      intervalMs: 1000,
      retentionDays: 35,
      logger: createLogger({ level: 'silent' })
    })
    t.teardown(() => monitoring.stop())
    const count = (domain: string): number => probed.filter((p) => p.domain === domain).length

    t.ok(await holds(() => count('existing.example.com') > 0, 5000), 'the site tracked at start is checked')
    t.equal(count('new.example.com'), 0)
    await addSite({ db, entry: { domain: 'new.example.com', name: 'New' }, now: new Date() })
    t.ok(await holds(() => count('new.example.com') > 0, 5000), 'a site added with the store is checked')
    t.ok(states.has('new.example.com'), 'and the status endpoint knows it')
    t.ok(await holds(() => count('new.example.com') > 1, 5000), 'and checked again at its phase')

    t.ok(await removeSite({ db, domain: 'new.example.com', now: new Date() }))
    t.ok(await holds(() => monitoring.scheduler.stats().sites === 1 && !states.has('new.example.com'), 5000), 'the removal is noticed')
    // A check started just before the removal was noticed may still be under way; none starts afterwards.
    // Two more checks of the other site span a whole interval, so the removed site's phase has come by.
    const noticedAt = Date.now()
    const existingBefore = count('existing.example.com')
    t.ok(await holds(() => count('existing.example.com') >= existingBefore + 2, 5000), 'the other site is still checked')
    t.same(
      probed.filter((p) => p.domain === 'new.example.com' && p.at > noticedAt),
      [],
      'while the removed site no longer is'
    )
  })

  t.test(
    `the service prunes raw checks with the configured CHECK_RETENTION_DAYS, and events after 7 days, soon after start, on ${engine}`,
    async (t) => {
      const database = await createMigratedDatabase(engine)
      t.teardown(() => database.cleanup())
      const setup = openDb(database.url)
      const now = Date.now()
      await addSite({ db: setup, entry: { domain: 'old.example.com', name: null }, now: new Date(now - 10 * DAY) })
      const site = await setup('sites').where({ domain: 'old.example.com' }).first('id')
      const row = (daysAgo: number) => ({
        site_id: site.id,
        checked_at: new Date(now - daysAgo * DAY),
        status: 'up',
        blocked: false,
        partial: false,
        response_ms: 100,
        locations_answered: 3,
        locations_total: 3,
        source: 'schedule',
        locations: '[]'
      })
      await setup('checks').insert([row(5), row(3), row(2.1), row(1.9), row(0.5)])
      const event = (id: number, daysAgo: number) => ({
        id,
        type: 'site.added',
        site_id: site.id,
        data: '{}',
        created_at: new Date(now - daysAgo * DAY)
      })
      await setup('events').insert([event(101, 8), event(102, 7.1), event(103, 6.9)])
      await setup.destroy()

      const config = loadConfig({ PORT: '0', DATABASE_URL: database.url, CHECK_INTERVAL_S: '3600', CHECK_RETENTION_DAYS: '2' })
      const service = await startService({
        config,
        actors: TEST_ACTORS,
        logger: createLogger({ level: 'info', stream: new LogCapture() }),
        firstPruneMs: 100
      })
      t.teardown(() => service.stop())
      const left = async (): Promise<number> => Number((await service.db('checks').count({ n: '*' }))[0]?.n)
      t.ok(await holds(async () => (await left()) === 2, 10_000), 'the first prune ran')
      const kept = (await service.db('checks').orderBy('checked_at').pluck('checked_at')).map((d: unknown) => toDate(d)?.getTime())
      t.same(kept, [now - 1.9 * DAY, now - 0.5 * DAY], 'checks older than two days went, younger ones stayed')
      const events = async (): Promise<number[]> => (await service.db('events').where('id', '>', 100).orderBy('id').pluck('id')).map(Number)
      t.ok(await holds(async () => (await events()).length === 1, 10_000), 'the same prune went on to the events')
      t.same(await events(), [103], 'events older than seven days went, younger ones stayed')
    }
  )
}

t.test('while behind, one warning a minute gives the figures, and /healthz is told; not a word while keeping up', async (t) => {
  const clock = FakeTimers.install({ now: 1_000_000 * 60_000, toFake: ['setInterval', 'clearInterval'] })
  t.teardown(() => {
    clock.uninstall()
  })
  const { db } = await migratedDb('sqlite', t)
  const domains = (n: number, from: number) => Array.from({ length: n }, (_, i) => ({ domain: `site${from + i}.example.com`, name: null }))
  await addSites({ db, entries: domains(30, 0), now: new Date(clock.now) })
  const states = new SiteStates({ intervalMs: 60_000, publicUrl: 'http://x' })
  // One slot and a second of (fake) time per check: 60 checks a minute at most.
  const checks = {
    probeNow: () =>
      new Promise((resolve) => {
        clock.setTimeout(() => {
          resolve({})
        }, 1000)
      })
  } as unknown as CheckSupervisor
  const logs = new LogCapture()
  const monitoring = await startMonitoring({
    db,
    states,
    checks,
    intervalMs: 60_000,
    retentionDays: 35,
    concurrency: 1,
    logger: createLogger({ level: 'info', stream: logs }),
    now: () => new Date(clock.now)
  })
  t.teardown(async () => {
    const stopping = monitoring.stop()
    await clock.tickAsync(2000)
    await stopping
  })
  const warnings = (): Array<Record<string, unknown>> =>
    logs.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => String(l.msg).startsWith('scheduler behind'))

  await clock.tickAsync(2 * 60_000)
  t.match(monitoring.load(), { due: 30, started: 30, shed: 0, behind: false })
  t.equal(monitoring.schedule(), 'ok')
  t.same(warnings(), [], '30 sites a minute: nothing said')

  const addedAt = clock.now
  await addSites({ db, entries: domains(90, 100), now: new Date(clock.now) })
  for (let i = 0; i < 600 && monitoring.scheduler.stats().sites < 120; i++) await clock.tickAsync(1000)
  t.equal(monitoring.scheduler.stats().sites, 120, 'the new sites are read')
  await clock.tickAsync(4 * 60_000)
  t.equal(monitoring.schedule(), 'behind', '120 sites a minute for 60 checks a minute')
  const said = warnings()
  const minutes = (clock.now - addedAt) / 60_000
  t.ok(
    said.length >= 2 && said.length <= Math.floor(minutes) + 1,
    `${said.length} warnings in ${minutes.toFixed(1)} minutes, at most one a minute`
  )
  const last = said.at(-1) as { duePerS: number; runPerS: number; shed: number; msg: string }
  t.match(last, { level: 40, seconds: 60 })
  t.ok(last.duePerS >= 1.9 && last.duePerS <= 2.1, `due per second ${last.duePerS}`)
  t.ok(last.runPerS >= 0.9 && last.runPerS <= 1.1, `run per second ${last.runPerS}`)
  t.ok(last.shed > 0, `${last.shed} shed`)
  t.match(
    last.msg,
    new RegExp(`${last.duePerS} checks due per second, ${last.runPerS} run per second; in the last 60 s ${last.shed} shed`),
    'the figures are in the text too'
  )
})

t.test('on SQLite each tracked site is checked at its own interval, and a change of it takes effect', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  // The top of every interval used here.
  const T0 = Date.parse('2026-12-01T00:00:00.000Z')
  await addSites({
    db,
    entries: ['short', 'default', 'long'].map((name) => ({ domain: `${name}.example.com`, name: null })),
    now: new Date(T0 - 1000)
  })
  await db('sites')
    .where({ domain: 'short.example.com' })
    .update({ interval_s: 30, changed_at: new Date(T0 - 1000) })
  await db('sites')
    .where({ domain: 'long.example.com' })
    .update({ interval_s: 300, changed_at: new Date(T0 - 1000) })
  const clock = FakeTimers.install({ now: T0, toFake: ['setInterval', 'clearInterval'] })
  t.teardown(() => {
    clock.uninstall()
  })
  const probed: string[] = []
  const checks = {
    probeNow: async (domain: string) => {
      probed.push(domain)
      return {}
    }
  } as unknown as CheckSupervisor
  const states = new SiteStates({ intervalMs: 60_000, publicUrl: 'http://x' })
  const monitoring = await startMonitoring({
    db,
    states,
    checks,
    intervalMs: 60_000,
    retentionDays: 35,
    logger: createLogger({ level: 'silent' }),
    now: () => new Date(clock.now)
  })
  t.teardown(() => monitoring.stop())
  const count = (domain: string): number => probed.filter((d) => d === domain).length
  await clock.tickAsync(600_000)
  t.same(
    [count('short.example.com'), count('default.example.com'), count('long.example.com')],
    [20, 10, 2],
    'in 10 minutes: every 30 s, every 60 s (CHECK_INTERVAL_S), every 300 s'
  )
  probed.length = 0
  await db('sites')
    .where({ domain: 'long.example.com' })
    .update({ interval_s: 30, changed_at: new Date(clock.now) })
  await monitoring.sitesChanged()
  await clock.tickAsync(300_000)
  t.ok(
    count('long.example.com') >= 9 && count('long.example.com') <= 11,
    `every 30 s once changed: ${count('long.example.com')} in 5 minutes`
  )
})
