import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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
    await sleep(100)
    value = await read()
  }
  return value
}

for (const engine of engines()) {
  t.test(`a site going down and coming back while the scheduler runs, on ${engine}`, async (t) => {
    let healthy = true
    const target = http.createServer((_req, res) => { res.writeHead(healthy ? 200 : 503).end(healthy ? 'ok' : 'down') })
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
    t.teardown(() => new Promise<void>((resolve) => target.close(() => resolve())))
    const port = (target.address() as AddressInfo).port

    const database = await createTestDatabase(engine)
    t.teardown(() => database.cleanup())
    const setup = openDb(database.url)
    await migrateLatest(setup)
    await addSite({ db: setup, entry: { domain: 'flaky.example.com', name: 'Flaky' }, now: new Date() })
    const key = generateKey()
    await createKey({ db: setup, name: 'e2e', keyHash: hashKey(key), rateLimit: 100_000, now: new Date() })
    await setup.destroy()

    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: database.url,
      CHECK_INTERVAL_S: '1',
      PROBE_TIMEOUT_MS: '1000',
      ALLOW_PRIVATE_TARGETS: '1',
      CONNECT_TO: `:443:127.0.0.1:${await closedPort()},:80:127.0.0.1:${port}`
    })
    const service = await startService({ config, logger: createLogger({ level: 'info', stream: new LogCapture() }) })
    t.teardown(() => service.stop())
    const api = async (path: string) => {
      const res = await service.server.inject({ url: path, headers: { authorization: `Bearer ${key}` } })
      return JSON.parse(res.payload)
    }
    const status = () => api('/api/v1/status/flaky.example.com')

    const up = await until(status, (s) => s.status === 'up', 15_000)
    t.equal(up.status, 'up', 'the scheduler checked the site and found it up')
    t.equal(up.last_outage, null)

    healthy = false
    const down = await until(status, (s) => s.status === 'down', 15_000)
    t.equal(down.status, 'down', 'a 503 from every location makes it down')
    t.match(down.last_outage, { ended_at: null }, 'with an ongoing outage')
    const ongoing = await api('/api/v1/outages?ongoing=1')
    t.match(ongoing.outages, [{ domain: 'flaky.example.com', name: 'Flaky', ended_at: null }], 'listed as ongoing')

    healthy = true
    const back = await until(status, (s) => s.status === 'up', 15_000)
    t.equal(back.status, 'up', 'and up again once it recovers')
    t.equal(back.last_outage.started_at, down.last_outage.started_at, 'the same outage')
    t.type(back.last_outage.ended_at, 'string', 'now ended')
    t.ok(back.uptime_percent.day < 100, `uptime fell to ${back.uptime_percent.day}`)
    const all = await api('/api/v1/outages?domain=flaky.example.com')
    t.equal(all.outages.length, 1, 'exactly one outage was recorded')
    t.same((await api('/api/v1/outages?ongoing=1')).outages, [], 'and none is ongoing')
  })
}
