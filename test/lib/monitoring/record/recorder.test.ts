import t from 'tap'
import type { CheckStatus as SiteStatus } from '../../../../lib/rules/consensus.js'
import { CheckRecorder, droppable } from '../../../../lib/monitoring/record/recorder.js'
import { SiteStates } from '../../../../lib/monitoring/state/site-state.js'
import type { CheckResult } from '../../../../lib/probing/supervisor.js'
import { createLogger } from '../../../../lib/logger.js'
import { openDb, toDate } from '../../../../lib/store/db.js'
import { addSite } from '../../../../lib/monitoring/add-sites.js'
import { onAnnounced } from '../../../../lib/events/outbox.js'
import { engines, migratedDb } from '../../../helpers/db.js'
import { holds } from '../../../helpers/poll.js'
import { LogCapture } from '../../../helpers/server.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000

t.test('a full queue drops a check that cannot open or close an outage', async (t) => {
  const cases: Array<[string, SiteStatus[], number]> = [
    ['a repeated down', ['up', 'down', 'down', 'up'], 2],
    ['a repeated up after the head', ['up', 'up', 'down'], 1],
    ['an unconfirmed one', ['up', 'down', 'unconfirmed', 'down'], 2],
    ['an unavailable one first', ['down', 'unavailable', 'down'], 1],
    ['the head decides what repeats', ['down', 'down', 'up'], 1],
    ['a head that says nothing makes the first waiting one a transition', ['unconfirmed', 'down', 'up', 'up'], 3],
    ['a flapping site loses its oldest waiting check', ['up', 'down', 'up', 'down'], 1]
  ]
  for (const [name, statuses, index] of cases) t.equal(droppable(statuses), index, name)
})

function result(status: SiteStatus, at: number, domain = 'queue.example.com'): CheckResult {
  return {
    domain,
    status,
    locations_answered: 3,
    locations_total: 3,
    response_ms: 10,
    cached: false,
    locations: [],
    checked_at: new Date(at).toISOString(),
    partial: false,
    blocked: false
  }
}

t.test('while writes fail, at most 30 checks wait per site and every outage transition survives', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  await addSite({ db, entry: { domain: 'queue.example.com', name: null }, now: new Date(T0 - MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  const logs = new LogCapture()
  const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'info', stream: logs }), retryDelaysMs: [20] })
  t.teardown(() => {
    recorder.close()
  })
  await db.schema.renameTable('checks', 'checks_away')
  // 45 checks: up, then down from the 10th to the 24th, then up again; the down run and the
  // return are the transitions that must survive the 15 that do not fit.
  const statuses: SiteStatus[] = Array.from({ length: 45 }, (_, i) => (i >= 10 && i < 25 ? 'down' : 'up'))
  statuses.forEach((s, i) => {
    recorder.record(result(s, T0 + i * MIN), 'schedule')
  })
  t.equal(recorder.pending(), 30, 'the queue is capped')
  t.equal(logs.lines.filter((l) => l.includes('check dropped')).length, 15, 'each dropped check is logged')
  await db.schema.renameTable('checks_away', 'checks')
  t.ok(await recorder.flush(10_000), 'the rest is recorded once writes work again')
  t.equal((await db('checks')).length, 30)
  const outages = await db('outages')
  t.equal(outages.length, 1, 'one outage')
  t.equal(toDate(outages[0].started_at)?.getTime(), T0 + 10 * MIN, 'opened at the first down check')
  t.equal(toDate(outages[0].ended_at)?.getTime(), T0 + 25 * MIN, 'closed at the first up check after it')
  t.equal(states.statusRecord('queue.example.com', new Date(T0 + 44 * MIN))?.status, 'up')
})

t.test('when an outage is announced, the in-memory state already holds it', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  await addSite({ db, entry: { domain: 'queue.example.com', name: null }, now: new Date(T0 - MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'silent' }) })
  t.teardown(() => {
    recorder.close()
  })
  recorder.record(result('up', T0), 'schedule')
  t.ok(await recorder.flush(10_000))
  // Read synchronously in the announcement, as an event feed woken by it would at the earliest.
  const seen: Array<string | undefined> = []
  const stop = onAnnounced(() => seen.push(states.statusRecord('queue.example.com', new Date(T0 + MIN))?.status))
  t.teardown(stop)
  recorder.record(result('down', T0 + MIN), 'schedule')
  t.ok(await recorder.flush(10_000))
  t.same(seen, ['down'], 'announced once, with the state already down')
})

t.test('close stops the retries and leaves the waiting checks unrecorded', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  await addSite({ db, entry: { domain: 'queue.example.com', name: null }, now: new Date(T0 - MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  const logs = new LogCapture()
  const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'warn', stream: logs }), retryDelaysMs: [60_000] })
  await db.schema.renameTable('checks', 'checks_away')
  recorder.record(result('down', T0), 'schedule')
  t.ok(await holds(() => logs.lines.some((l) => l.includes('recording a check failed')), 10_000), 'the first write failed')
  recorder.close()
  recorder.record(result('up', T0 + MIN), 'schedule')
  await db.schema.renameTable('checks_away', 'checks')
  await recorder.settled()
  t.notOk(await recorder.flush(0), 'nothing more is written: the writer gave up its retry')
  t.equal(recorder.pending(), 1, 'the one that waited is still counted, the one after close was refused')
  t.equal((await db('checks')).length, 0)
})

for (const engine of engines()) {
  t.test(`a saturated pool is waited for, not taken for a database outage, on ${engine}`, async (t) => {
    const { db: setup, url } = await migratedDb(engine, t)
    for (const domain of ['flip.example.com', 'calm.example.com']) {
      await addSite({ db: setup, entry: { domain, name: null }, now: new Date(T0 - MIN) })
    }
    // One connection, held by a long transaction (the database answers it all along).
    const db = openDb(url, { max: 1, acquireTimeoutMs: 100 })
    t.teardown(() => db.destroy())
    const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
    await states.refresh(db, new Date(T0))
    const logs = new LogCapture()
    const recorder = new CheckRecorder({
      db,
      states,
      logger: createLogger({ level: 'debug', stream: logs }),
      retryDelaysMs: [20],
      pingDelaysMs: [20]
    })
    t.teardown(() => {
      recorder.close()
    })
    const held = await db.transaction()
    await held.raw('select 1')
    const flip: SiteStatus[] = ['up', 'down', 'down', 'up', 'up']
    flip.forEach((s, i) => {
      recorder.record(result(s, T0 + i * MIN, 'flip.example.com'), 'schedule')
    })
    for (let i = 0; i < 5; i++) recorder.record(result('up', T0 + i * MIN, 'calm.example.com'), 'schedule')
    t.ok(await holds(() => recorder.stats().poolWaits >= 2, 30_000), 'the writes waited for the busy connection')
    t.equal(recorder.pending(), 10, 'nothing was recorded or dropped meanwhile')
    await held.commit()
    t.ok(await recorder.flush(30_000), 'everything is recorded once the connection is free')
    t.equal((await setup('checks')).length, 10, 'every check, once')
    const outages = await setup('outages')
    t.equal(outages.length, 1, 'only the outage the checks saw: none invented for the wait')
    t.equal(toDate(outages[0].started_at)?.getTime(), T0 + MIN)
    t.equal(toDate(outages[0].ended_at)?.getTime(), T0 + 3 * MIN)
    t.equal(states.statusRecord('calm.example.com', new Date(T0 + 4 * MIN))?.last_outage, null)
    const text = logs.lines.join('\n')
    t.notMatch(text, /unreachable|reachable again|retrying/, 'nothing logged as an outage or a failed write')
  })
}

for (const engine of engines()) {
  t.test(`the total bound on waiting checks keeps every outage transition, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const domains = ['flap.example.com', 'calm.example.com', 'dip.example.com']
    for (const domain of domains) await addSite({ db, entry: { domain, name: null }, now: new Date(T0 - MIN) })
    const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
    await states.refresh(db, new Date(T0))
    const logs = new LogCapture()
    const recorder = new CheckRecorder({
      db,
      states,
      logger: createLogger({ level: 'info', stream: logs }),
      retryDelaysMs: [20],
      maxBacklog: 12
    })
    t.teardown(() => {
      recorder.close()
    })
    await db.schema.renameTable('checks', 'checks_away')
    // Ten checks each; six transitions in all (dip: down at 2, up at 5; flap: down, up, down, up).
    const plan: Record<string, SiteStatus[]> = {
      'dip.example.com': ['up', 'up', 'down', 'down', 'down', 'up', 'up', 'up', 'up', 'up'],
      'calm.example.com': Array(10).fill('up'),
      'flap.example.com': ['down', 'up', 'down', 'up', 'up', 'up', 'unconfirmed', 'up', 'up', 'up']
    }
    for (let i = 0; i < 10; i++) {
      for (const domain of ['dip.example.com', 'calm.example.com', 'flap.example.com']) {
        recorder.record(result(plan[domain]?.[i] as SiteStatus, T0 + i * MIN, domain), 'schedule')
      }
    }
    t.equal(recorder.pending(), 12, 'the backlog stays within its bound')
    t.same(recorder.stats().dropped, { harmless: 18, transitions: 0 }, 'only checks that change no outage were dropped')
    t.equal(logs.lines.filter((l) => l.includes('the recording backlog is full')).length, 1, 'one warning, not one per check')
    await db.schema.renameTable('checks_away', 'checks')
    t.ok(await recorder.flush(10_000), 'the rest is recorded once writes work again')
    t.equal((await db('checks')).length, 12)
    const ids = new Map((await db('sites').select('id', 'domain')).map((s) => [String(s.domain), Number(s.id)]))
    const outages = (await db('outages').orderBy(['started_at', 'site_id']).select('site_id', 'started_at', 'ended_at')).map((o) => [
      Number(o.site_id),
      toDate(o.started_at)?.getTime(),
      toDate(o.ended_at)?.getTime()
    ])
    t.same(
      outages,
      [
        [ids.get('flap.example.com'), T0, T0 + MIN],
        [ids.get('flap.example.com'), T0 + 2 * MIN, T0 + 3 * MIN],
        [ids.get('dip.example.com'), T0 + 2 * MIN, T0 + 5 * MIN]
      ],
      'every outage opened and closed at the checks that saw it, none invented'
    )
    for (const domain of domains) {
      t.equal(states.statusRecord(domain, new Date(T0 + 9 * MIN))?.status, 'up', `${domain} ends up`)
    }
  })
}

for (const engine of engines()) {
  t.test(`a check the database refuses is set aside and the checks behind it are recorded, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    for (const domain of ['queue.example.com', 'other.example.com', 'poison.example.com'])
      await addSite({ db, entry: { domain, name: null }, now: new Date(T0 - MIN) })
    const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
    await states.refresh(db, new Date(T0))
    const logs = new LogCapture()
    const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'info', stream: logs }), retryDelaysMs: [20] })
    t.teardown(() => {
      recorder.close()
    })
    // What each engine refuses: MySQL a time past its DATETIME's year 9999, SQLite a missing status.
    const poisoned: CheckResult =
      engine === 'mysql'
        ? { ...result('up', 0, 'poison.example.com'), checked_at: '+275760-09-13T00:00:00.000Z' }
        : { ...result('up', T0 + MIN, 'poison.example.com'), status: null as unknown as SiteStatus }
    recorder.record(result('up', T0), 'schedule')
    recorder.record(result('up', T0, 'other.example.com'), 'schedule')
    recorder.record(poisoned, 'schedule')
    for (let i = 2; i < 6; i++)
      recorder.record(result(i === 3 ? 'down' : 'up', T0 + i * MIN, i % 2 === 0 ? 'other.example.com' : undefined), 'schedule')
    t.ok(await recorder.flush(10_000), 'everything else is recorded')
    t.equal(recorder.pending(), 0)
    t.equal((await db('checks')).length, 6, 'every check but the refused one')
    const aside = recorder.setAside()
    t.equal(aside.count, 1, 'one set aside')
    t.match(aside.last, { code: engine === 'mysql' ? /^ER_/ : /^SQLITE_/ })
    t.equal(logs.lines.filter((l) => l.includes('set aside')).length, 1, 'logged once')
    const outages = await db('outages')
    t.equal(outages.length, 1, 'the outage behind it opened and closed')
    t.notOk(
      logs.lines.some((l) => /insert into|update `sites`/i.test(l)),
      'no SQL in the log'
    )
  })
}
