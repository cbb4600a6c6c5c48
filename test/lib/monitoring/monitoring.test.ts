import t from 'tap'
import { CheckRecorder } from '../../../lib/monitoring/record/recorder.js'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import type { CheckResult } from '../../../lib/probing/supervisor.js'
import { createLogger } from '../../../lib/logger.js'
import { pruneChecks } from '../../../lib/store/checks.js'
import { addSite } from '../../../lib/monitoring/add-sites.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { holds } from '../../helpers/poll.js'
import { bearer, LogCapture, testServer } from '../../helpers/server.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000

function result(domain: string, status: CheckResult['status'], at: number, responseMs = 120.5): CheckResult {
  const answered = status === 'unavailable' ? 0 : status === 'unconfirmed' ? 1 : 3
  return {
    domain,
    status,
    locations_answered: answered,
    locations_total: 3,
    response_ms: answered === 0 ? null : responseMs,
    cached: false,
    locations: [],
    checked_at: new Date(at).toISOString(),
    partial: false,
    blocked: false
  }
}

for (const engine of engines()) {
  t.test(`recording checks, outages, uptime and the status record on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    let now = T0
    const clock = () => new Date(now)
    await addSite({ db, entry: { domain: 'shop.example.com', name: 'The Shop' }, now: new Date(T0 - 120 * MIN) })
    const states = new SiteStates({ intervalMs: MIN, publicUrl: 'https://status.example.net' })
    await states.refresh(db, clock())
    const logs = new LogCapture()
    const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'info', stream: logs }), retryDelaysMs: [50] })
    const { server, issueKey } = await testServer({
      db,
      env: { DATABASE_URL: url, PUBLIC_URL: 'https://status.example.net' },
      now: clock,
      states
    })
    const key = await issueKey({ limit: 1000 })
    const status = async (domain = 'shop.example.com') => {
      const res = await server.inject({ url: `/api/v1/status/${domain}`, headers: bearer(key) })
      matchesOpenApi(t, res)
      return { code: res.statusCode, body: JSON.parse(res.payload) }
    }
    const feed = async (s: CheckResult['status'], at: number) => {
      recorder.record(result('shop.example.com', s, at), 'schedule')
      t.ok(await recorder.flush(10_000), `recorded ${s}`)
    }

    t.same(
      await status(),
      {
        code: 200,
        body: {
          domain: 'shop.example.com',
          name: 'The Shop',
          status: 'pending',
          blocked: false,
          partial: false,
          response_ms: null,
          checked_at: null,
          uptime_percent: { day: 100, week: 100, month: 100 },
          last_outage: null,
          tls: null,
          slow: false,
          settings: {},
          cause: null,
          url: 'https://status.example.net/sites/shop.example.com'
        }
      },
      'a tracked site never checked is pending'
    )

    await feed('up', T0)
    await feed('unconfirmed', T0 + MIN)
    await feed('down', T0 + 2 * MIN + 123)
    await feed('unavailable', T0 + 3 * MIN)
    await feed('down', T0 + 4 * MIN)
    now = T0 + 4 * MIN + 30_000
    let s = await status()
    t.equal(s.body.status, 'down')
    t.same(
      s.body.last_outage,
      { started_at: '2026-11-22T06:02:00.123Z', ended_at: null, duration_seconds: 149 },
      'ongoing outage, duration to now'
    )
    const ongoing = await db('outages').whereNull('ended_at')
    t.equal(ongoing.length, 1, 'one open outage')
    now += 10_000
    t.equal((await status()).body.last_outage.duration_seconds, 159, 'and it grows')

    await feed('unconfirmed', T0 + 5 * MIN)
    t.equal((await db('outages').whereNull('ended_at')).length, 1, 'unconfirmed does not close it')
    await feed('up', T0 + 6 * MIN + 500)
    await feed('up', T0 + 7 * MIN)
    now = T0 + 7 * MIN + 1000
    s = await status()
    t.equal(s.code, 200)
    t.same(s.body.last_outage, { started_at: '2026-11-22T06:02:00.123Z', ended_at: '2026-11-22T06:06:00.500Z', duration_seconds: 240 })
    t.equal(s.body.status, 'up')
    t.equal(s.body.response_ms, 120.5)
    t.equal(s.body.checked_at, '2026-11-22T06:07:00.000Z')
    const all = await db('outages').select('*')
    t.equal(all.length, 1, 'up -> down -> up made exactly one outage')
    // Tracked for 127 minutes but monitored from the first check, 421 s ago; down for 240.377 s of them.
    const expected = Math.round(100 * (1 - 240.377 / (7 * 60 + 1)) * 1000) / 1000
    t.same(s.body.uptime_percent, { day: expected, week: expected, month: expected })
    t.equal(Number((await db('checks').count({ n: '*' }))[0]?.n), 8, 'every one of the 8 checks was stored')

    now = T0 + 7 * MIN + 3 * MIN + 1
    t.equal((await status()).body.status, 'unavailable', 'a newest check older than three intervals is unavailable')
    t.equal((await status('SHOP.example.com.')).code, 200, 'the domain is normalised')
    t.same(await status('other.example.com'), { code: 404, body: { error: 'site is not tracked' } })
    t.equal((await status('bad_domain')).code, 400)
  })
}

t.test('a late check never rolls the state back or invents a transition', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  await addSite({ db, entry: { domain: 'late.example.com', name: null }, now: new Date(T0 - MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'silent' }) })
  recorder.record(result('late.example.com', 'up', T0 + 2 * MIN), 'schedule')
  recorder.record(result('late.example.com', 'down', T0 + MIN), 'demand')
  await recorder.flush(5000)
  t.equal(states.statusRecord('late.example.com', new Date(T0 + 2 * MIN))?.status, 'up')
  t.equal((await db('outages')).length, 0, 'the older down check opened nothing')
  t.equal((await db('checks')).length, 2, 'but it was stored')
})

t.test('a database error while recording is retried, logged, and never becomes downtime', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  await addSite({ db, entry: { domain: 'retry.example.com', name: null }, now: new Date(T0 - MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  const logs = new LogCapture()
  const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'info', stream: logs }), retryDelaysMs: [30] })
  await db.schema.renameTable('checks', 'checks_away')
  recorder.record(result('retry.example.com', 'down', T0), 'schedule')
  recorder.record(result('retry.example.com', 'up', T0 + MIN), 'schedule')
  t.ok(await holds(() => /recording a check failed; retrying/.test(logs.lines.join('\n')), 5000), 'the failed write is logged')
  t.equal(recorder.pending(), 2, 'both checks wait while writes fail')
  t.equal(states.statusRecord('retry.example.com', new Date(T0 + MIN))?.status, 'pending', 'nothing is shown as down meanwhile')
  t.notMatch(logs.lines.join('\n'), /insert into|checks_away/, 'the log has no SQL')
  await db.schema.renameTable('checks_away', 'checks')
  t.ok(await recorder.flush(5000), 'recorded once the database works again')
  const outages = await db('outages')
  t.equal(outages.length, 1, 'in order: the outage opened and closed')
  t.not(outages[0].ended_at, null)
  t.equal(states.statusRecord('retry.example.com', new Date(T0 + MIN))?.status, 'up')
})

t.test('pruning removes raw checks past their retention and keeps outages', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  await addSite({ db, entry: { domain: 'old.example.com', name: null }, now: new Date(T0 - 100 * 24 * 60 * MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'silent' }) })
  const DAY = 24 * 60 * MIN
  for (const [status, daysAgo] of [
    ['down', 40],
    ['up', 39],
    ['up', 36],
    ['up', 34],
    ['up', 1]
  ] as const) {
    recorder.record(result('old.example.com', status, T0 - daysAgo * DAY), 'schedule')
  }
  await recorder.flush(5000)
  const pruned = await pruneChecks({ db, before: new Date(T0 - 35 * DAY), batch: 2 })
  t.equal(pruned, 3, 'the three checks older than 35 days went, in batches')
  t.equal((await db('checks')).length, 2, 'the two younger ones stay')
  t.equal((await db('outages')).length, 1, 'the outage they recorded is kept')
})
