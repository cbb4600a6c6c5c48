/**
 * Two real instances (startService) on one MySQL database and a private Redis that the test kills
 * and starts again: limits are shared, fall back to each instance's memory with one warning while
 * Redis is away (and nothing else fails), and are shared again once it is back, on their own.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { loadConfig } from '../../../config/index.js'
import { generateKey, hashKey } from '../../../lib/keys.js'
import { createLogger } from '../../../lib/logger.js'
import { startService, type RunningService } from '../../../lib/main.js'
import { openDb } from '../../../lib/store/db.js'
import { createKey } from '../../../lib/store/keys.js'
import { createMigratedDatabase, engines } from '../../helpers/db.js'
import { holds } from '../../helpers/poll.js'
import { redisServerMissing, startPrivateRedis } from '../../helpers/redis.js'
import { bearer, LogCapture } from '../../helpers/server.js'
import { closedPort } from '../../helpers/targets.js'
import { TEST_ACTORS } from '../../helpers/compiled.js'

const LIMIT = 10
const UNREACHABLE = 'Redis unreachable'
const BACK = 'Redis answers again'

interface Instance {
  service: RunningService
  logs: LogCapture
  /** `GET /api/v1/sites` (cost 1) with the key: the status of each of `n` requests. */
  spend(n: number): Promise<number[]>
  check(domain: string): Promise<{ status: number; body: { status?: string; cached?: boolean } }>
  lines(text: string): number
}

async function startInstances(t: Test, redisUrl: string): Promise<[Instance, Instance]> {
  const target = http.createServer((_req, res) => res.writeHead(200).end('ok'))
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) =>
        target.close(() => {
          resolve()
        })
      )
  )
  const closed = await closedPort()
  const database = await createMigratedDatabase('mysql')
  t.teardown(() => database.cleanup())
  const setup = openDb(database.url)
  const key = generateKey()
  await createKey({ db: setup, name: 'shared', keyHash: hashKey(key), rateLimit: LIMIT, now: new Date() })
  await setup.destroy()
  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    PROBE_TIMEOUT_MS: '1000',
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${(target.address() as AddressInfo).port}`
  })
  const start = async (): Promise<Instance> => {
    const logs = new LogCapture()
    const service = await startService({ config, actors: TEST_ACTORS, logger: createLogger({ level: 'info', stream: logs }) })
    t.teardown(() => service.stop())
    const uri = service.server.info.uri
    return {
      service,
      logs,
      spend: (n) =>
        Promise.all(
          Array.from({ length: n }, () =>
            fetch(`${uri}/api/v1/sites`, { headers: bearer(key) }).then(async (r) => {
              await r.arrayBuffer()
              return r.status
            })
          )
        ),
      check: async (domain) => {
        const r = await fetch(`${uri}/api/v1/check`, {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: JSON.stringify({ domain })
        })
        return { status: r.status, body: (await r.json()) as { status?: string; cached?: boolean } }
      },
      lines: (text) => logs.lines.filter((l) => l.includes(text)).length
    }
  }
  return [await start(), await start()]
}

/** Both tests need redis-server and MySQL (two instances never share one SQLite file). */
const skip = redisServerMissing() ?? (engines().includes('mysql') ? false : 'TEST_MYSQL_URL is not set')

const count = (statuses: number[], status: number): number => statuses.filter((s) => s === status).length

t.test('Redis going away and coming back', { skip }, async (t) => {
  const password = 'redis-secret-7f3a'
  const redis = await startPrivateRedis(t, { password })
  const [a, b] = await startInstances(t, redis.url)
  t.ok(await holds(() => a.service.redis?.available === true && b.service.redis?.available === true, 10_000), 'both connect')

  const shared = [...(await a.spend(6)), ...(await b.spend(6))]
  t.equal(count(shared, 200), LIMIT, 'the limit holds across both instances')
  t.equal(count(shared, 429), 2)

  await redis.stop()
  t.ok(await holds(() => a.service.redis?.available === false && b.service.redis?.available === false, 10_000), 'both notice')
  const alone = [...(await a.spend(15)), ...(await a.spend(15))]
  t.equal(count(alone, 200), LIMIT, 'A answers from its own window: its limit, in its memory')
  t.equal(count(alone, 429), 20)
  t.equal(count(await b.spend(12), 200), LIMIT, 'and so does B, with a window of its own')
  const checked = await a.check('outage.example.com')
  t.equal(checked.status, 429, 'a check costs 5: over the spent limit it is refused like any request')
  t.equal(a.lines(UNREACHABLE), 1, 'A warned once, not once per request')
  t.equal(b.lines(UNREACHABLE), 1, 'B too')

  await redis.start()
  t.ok(await holds(() => a.service.redis?.available === true && b.service.redis?.available === true, 15_000), 'both reconnect on their own')
  t.equal(a.lines(BACK), 1, 'A says so once')
  t.equal(b.lines(BACK), 1)
  // The restarted Redis kept nothing (no persistence): a fresh shared window, where the in-memory
  // ones are spent and would refuse everything.
  const again = [...(await a.spend(7)), ...(await b.spend(7))]
  t.equal(count(again, 200), LIMIT, 'shared again: the limit across both instances')
  t.equal(count(again, 429), 4)
  t.equal(a.lines(UNREACHABLE), 1, 'no further warning')
  const lines = [...a.logs.lines, ...b.logs.lines]
  t.equal(
    lines.filter((l) => l.includes(password) || l.includes(`:${redis.port}`)).length,
    0,
    `none of ${lines.length} log lines names the Redis password or address`
  )
})

t.test('checks run and answer while Redis is away from the start', { skip }, async (t) => {
  const redis = await startPrivateRedis(t)
  await redis.stop()
  const [a, b] = await startInstances(t, redis.url)
  t.ok(await holds(() => a.lines(UNREACHABLE) === 1, 10_000), 'an instance starts without Redis, and warns')
  const first = await a.check('away.example.com')
  t.equal(first.status, 200, 'an on-demand check runs')
  t.match(first.body, { status: 'up', cached: false })
  t.match((await a.check('away.example.com')).body, { cached: true }, "reused from the instance's own cache")
  t.match((await b.check('away.example.com')).body, { status: 'up', cached: false }, 'B checks on its own')
  await redis.start()
  t.ok(
    await holds(() => a.service.redis?.available === true && b.service.redis?.available === true, 15_000),
    'Redis is used once it answers'
  )
  t.match((await a.check('back.example.com')).body, { cached: false })
  t.match((await b.check('back.example.com')).body, { cached: true }, "then B reuses A's result")
  t.equal(a.lines(UNREACHABLE), 1)
  t.equal(a.lines(BACK), 1)
})
