/**
 * A check the database refuses for a value it holds is set aside where an operator looks: the
 * running service's /healthz (`recording`) and /metrics, while the checks behind it are recorded.
 */
import t from 'tap'
import { loadConfig } from '../../config/index.js'
import { createLogger } from '../../lib/logger.js'
import { startService } from '../../lib/main.js'
import { addSite } from '../../lib/monitoring/add-sites.js'
import type { CheckResult } from '../../lib/probing/supervisor.js'
import type { CheckStatus as SiteStatus } from '../../lib/rules/consensus.js'
import { openDb } from '../../lib/store/db.js'
import { TEST_ACTORS } from '../helpers/compiled.js'
import { createMigratedDatabase } from '../helpers/db.js'
import { holds } from '../helpers/poll.js'
import { LogCapture } from '../helpers/server.js'
import { matchesOpenApi } from '../helpers/openapi.js'

t.test('a check set aside shows in /healthz and /metrics, and the next is recorded', async (t) => {
  const database = await createMigratedDatabase('sqlite')
  t.teardown(() => database.cleanup())
  const setup = openDb(database.url)
  await addSite({ db: setup, entry: { domain: 'shop.example.com', name: 'Shop' }, now: new Date() })
  await setup.destroy()
  const logs = new LogCapture()
  const service = await startService({
    config: loadConfig({
      PORT: '0',
      DATABASE_URL: database.url,
      CHECK_INTERVAL_S: '3600',
      METRICS_TOKEN: 'metrics-token-for-tests-0123456789'
    }),
    actors: TEST_ACTORS,
    logger: createLogger({ level: 'info', stream: logs })
  })
  t.teardown(() => service.stop())
  const check = (status: SiteStatus | null, at: Date): CheckResult => ({
    domain: 'shop.example.com',
    status: status as SiteStatus,
    locations_answered: 3,
    locations_total: 3,
    response_ms: 10,
    cached: false,
    locations: [],
    checked_at: at.toISOString(),
    partial: false,
    blocked: false
  })
  const before = Date.now()
  // SQLite refuses a check without a status (MySQL, a time past 9999: see the recorder's tests).
  service.recorder.record(check(null, new Date(before)), 'schedule')
  service.recorder.record(check('up', new Date(before + 1000)), 'schedule')
  t.ok(await service.recorder.flush(10_000), 'the check behind it is recorded')
  const health = await service.server.inject('/healthz')
  matchesOpenApi(t, health)
  t.match(JSON.parse(health.payload), {
    recording: {
      pending: 0,
      set_aside: 1,
      last_set_aside: { site_id: Number, code: 'SQLITE_CONSTRAINT_NOTNULL', checked_at: new Date(before).toISOString() }
    }
  })
  const metrics = await service.server.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-token-for-tests-0123456789' } })
  t.match(metrics.payload, /^site_status_checks_set_aside_total 1$/m)
  t.ok(await holds(() => logs.lines.some((l) => l.includes('a check the database refuses was set aside')), 5000), 'and logged')
  t.equal((await service.db('checks').count({ n: '*' }).first())?.n, 1, 'one check stored, the one behind')
})
