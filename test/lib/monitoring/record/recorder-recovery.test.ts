/**
 * How soon checks are recorded again once the database answers after an outage, on a faked clock:
 * the bound is the recorder's ping schedule, not the machine's speed, so it is asserted here in
 * clock time; test/reliability/database-outage.test.ts shows the same recovery end to end against
 * a MariaDB that is really stopped and started, and reports its wall-clock figures.
 */
import t from 'tap'
import FakeTimers from '@sinonjs/fake-timers'
import { CheckRecorder } from '../../../../lib/monitoring/record/recorder.js'
import { SiteStates } from '../../../../lib/monitoring/state/site-state.js'
import { createLogger } from '../../../../lib/logger.js'
import type { Db } from '../../../../lib/store/db.js'
import { addSite } from '../../../../lib/monitoring/add-sites.js'
import { migratedDb } from '../../../helpers/db.js'
import { LogCapture } from '../../../helpers/server.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000
/**
 * What the recorder promises: a waiting check is written within about a second of the database
 * answering, its slowest ping interval; the test's clock moves in 10 ms steps.
 */
const RECOVERY_MS = 1100

/** A real database behind a switch: while `down`, every query fails as a refused connection does. */
function switchable(db: Db): { db: Db; down: boolean; refusals: number } {
  const state = { down: false, db: db, refusals: 0 }
  const refused = (): Promise<never> => {
    state.refusals++
    return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' }))
  }
  state.db = new Proxy(db, {
    apply: (target, self, args: unknown[]) =>
      state.down ? { then: (_: unknown, reject: (e: unknown) => void) => refused().catch(reject) } : Reflect.apply(target, self, args),
    get: (target, prop, receiver) => {
      if (state.down && (prop === 'raw' || prop === 'transaction')) return refused
      return Reflect.get(target, prop, receiver) as unknown
    }
  })
  return state
}

t.test('a check waiting through a database outage is written within a second of the database answering', async (t) => {
  const { db: real } = await migratedDb('sqlite', t)
  await addSite({ db: real, entry: { domain: 'wait.example.com', name: null }, now: new Date(T0 - MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
  await states.refresh(real, new Date(T0))
  const gate = switchable(real)
  const logs = new LogCapture()
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] })
  const recorder = new CheckRecorder({ db: gate.db, states, logger: createLogger({ level: 'info', stream: logs }) })
  t.teardown(() => {
    recorder.close()
    clock.uninstall()
  })

  gate.down = true
  recorder.record(
    {
      domain: 'wait.example.com',
      status: 'up',
      locations_answered: 3,
      locations_total: 3,
      response_ms: 10,
      cached: false,
      locations: [],
      checked_at: new Date(T0).toISOString(),
      partial: false,
      blocked: false
    },
    'schedule'
  )
  // A long outage: the ping loop has long reached its slowest pace.
  for (let i = 0; i < 600 && !logs.lines.some((l) => l.includes('database unreachable')); i++) await clock.tickAsync(100)
  t.ok(
    logs.lines.some((l) => l.includes('database unreachable')),
    'the recorder noticed the outage'
  )
  await clock.tickAsync(5 * MIN)
  t.equal(recorder.pending(), 1, 'the check waits while the database is away')

  // The worst moment for the database to come back: just after a ping found it away.
  const refusals = gate.refusals
  while (gate.refusals === refusals) await clock.tickAsync(10)
  gate.down = false
  const backAt = clock.now
  while (recorder.pending() > 0 && clock.now - backAt <= 10 * RECOVERY_MS) await clock.tickAsync(10)
  t.equal(recorder.pending(), 0, 'the check was written')
  t.ok(
    clock.now - backAt <= RECOVERY_MS,
    `within ${clock.now - backAt} ms of clock time after the database answered (bound ${RECOVERY_MS} ms)`
  )
  t.equal(Number((await real('checks').count({ n: '*' }))[0]?.n), 1, 'and it is stored once')
  t.ok(
    logs.lines.some((l) => l.includes('database reachable again')),
    'the return is logged'
  )
})
