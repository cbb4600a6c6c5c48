import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfig } from '../../config/index.js'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createLogger } from '../../lib/logger.js'
import { startService } from '../../lib/main.js'
import { openDb } from '../../lib/store/db.js'
import { createKey } from '../../lib/store/keys.js'
import { migrateLatest } from '../../lib/store/migrate.js'
import { addSite } from '../../lib/store/sites.js'
import { createTestDatabase, engines } from '../helpers/db.js'
import { LogCapture } from '../helpers/server.js'
import { closedPort } from '../helpers/targets.js'

/** Polls `read` until `done` holds or the time is up; returns the last value read. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms
  let value = await read()
  while (!done(value) && Date.now() < end) {
    await sleep(50)
    value = await read()
  }
  return value
}

for (const engine of engines()) {
  t.test(`an on-demand check of a tracked domain is recorded like a scheduled one, on ${engine}`, async (t) => {
    let healthy = true
    const agents = new Set<string | undefined>()
    const target = http.createServer((req, res) => {
      agents.add(req.headers['user-agent'])
      res.writeHead(healthy ? 200 : 503).end(healthy ? 'ok' : 'down')
    })
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise<void>((resolve) => target.close(() => resolve())))
    const port = (target.address() as AddressInfo).port

    const database = await createTestDatabase(engine)
    t.teardown(() => database.cleanup())
    const setup = openDb(database.url)
    await migrateLatest(setup)
    await addSite({ db: setup, entry: { domain: 'tracked.example.com', name: 'Tracked' }, now: new Date() })
    const key = generateKey()
    await createKey({ db: setup, name: 'demand', keyHash: hashKey(key), rateLimit: 100_000, now: new Date() })
    await setup.destroy()

    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: database.url,
      // An hour: the scheduler's own checks do not get in the way (only 'demand' rows are counted).
      CHECK_INTERVAL_S: '3600',
      CACHE_TTL_S: '0',
      PROBE_TIMEOUT_MS: '1000',
      ALLOW_PRIVATE_TARGETS: '1',
      CONNECT_TO: `:443:127.0.0.1:${await closedPort()},:80:127.0.0.1:${port}`
    })
    const service = await startService({ config, logger: createLogger({ level: 'info', stream: new LogCapture() }) })
    t.teardown(() => service.stop())
    const headers = { authorization: `Bearer ${key}` }
    const api = async (url: string) => JSON.parse((await service.server.inject({ url, headers })).payload)
    const check = async (domain: string) => {
      const res = await service.server.inject({ method: 'POST', url: '/api/v1/check', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ domain }) })
      t.equal(res.statusCode, 200, `checked ${domain}`)
      return JSON.parse(res.payload)
    }
    const demandChecks = () => service.db('checks').where({ source: 'demand' }).orderBy('checked_at').select('status', 'checked_at', 'locations_answered')
    const status = () => api('/api/v1/status/tracked.example.com')

    t.equal((await status()).status, 'unavailable', 'never checked yet')

    const first = await check('TRACKED.example.com')
    t.equal(first.status, 'up')
    t.same([...agents], [`SiteStatusAPI/0.1 (+${config.publicUrl})`], 'every probe names the service and where to find it')
    const up = await until(status, (s) => s.checked_at === first.checked_at, 10_000)
    t.match(up, { status: 'up', checked_at: first.checked_at, last_outage: null }, 'the status endpoint shows the on-demand result')
    const stored = await demandChecks()
    t.equal(stored.length, 1, 'one check stored with source demand')
    t.match(stored[0], { status: 'up', locations_answered: 3 })
    t.equal(new Date(stored[0].checked_at).toISOString(), first.checked_at, 'at the time the check answered with')

    healthy = false
    const second = await check('tracked.example.com')
    t.match(second, { status: 'down', cached: false })
    const down = await until(status, (s) => s.checked_at === second.checked_at, 10_000)
    t.match(down, { status: 'down', last_outage: { started_at: second.checked_at, ended_at: null } }, 'a down result opens an outage')
    t.equal((await demandChecks()).length, 2, 'the second check is stored too')
    const open = await service.db('outages').whereNotNull('open_site_id').select('started_at')
    t.equal(open.length, 1, 'one open outage in the database')
    t.equal(new Date(open[0].started_at).toISOString(), second.checked_at, 'started at the down check')
    t.match((await api('/api/v1/outages?ongoing=1')).outages, [{ domain: 'tracked.example.com', started_at: second.checked_at, ended_at: null }],
      'listed as ongoing')

    healthy = true
    const third = await check('tracked.example.com')
    const back = await until(status, (s) => s.checked_at === third.checked_at, 10_000)
    t.match(back, { status: 'up', last_outage: { started_at: second.checked_at, ended_at: third.checked_at } }, 'an up result closes it')

    t.equal((await check('untracked.example.com')).status, 'up')
    await sleep(200)
    t.equal((await demandChecks()).length, 3, 'a check of an untracked domain is not stored')
  })
}
