/**
 * The database stops for 20 s while the scheduler runs and clients poll. A private
 * MariaDB (its own data directory and port) is stopped and started again; the shared server is
 * never touched. Runs the real service (startService) against loopback targets.
 */
import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { loadConfig } from '../../config/index.js'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createLogger } from '../../lib/logger.js'
import { startService } from '../../lib/main.js'
import { openDb, toDate } from '../../lib/store/db.js'
import { createKey } from '../../lib/store/keys.js'
import { migrateLatest } from '../../lib/store/migrate.js'
import { addSite } from '../../lib/monitoring/add-sites.js'
import { hasStackTrace } from '../helpers/cli.js'
import { startPrivateMariaDb } from '../helpers/mariadb.js'
import { holds, until } from '../helpers/poll.js'
import { LogCapture } from '../helpers/server.js'
import { closedPort } from '../helpers/targets.js'
import { TEST_ACTORS } from '../helpers/compiled.js'

const OUTAGE_MS = 20_000

const mariadb = await startPrivateMariaDb({ databases: ['site_status'] })
t.teardown(() => mariadb.destroy())
const DATABASE_URL = mariadb.url('site_status')

// One loopback target for every site, routed on the Host header; flip.example.com is switched.
let flipHealthy = true
const served = { flipDown: 0, flipUp: 0 }
const target = http.createServer((req, res) => {
  const host = (req.headers.host ?? '').split(':')[0]
  if (host === 'flip.example.com') {
    if (flipHealthy) served.flipUp++
    else served.flipDown++
    res.writeHead(flipHealthy ? 200 : 503).end(flipHealthy ? 'ok' : 'maintenance')
    return
  }
  res.writeHead(200).end('ok')
})
await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
t.teardown(
  () =>
    new Promise<void>((resolve) =>
      target.close(() => {
        resolve()
      })
    )
)
const targetPort = (target.address() as AddressInfo).port

t.test('a 20 s database outage: truthful answers meanwhile, nothing lost or invented, recovery within 5 s', async (t) => {
  const setup = openDb(DATABASE_URL)
  await migrateLatest(setup)
  for (const [domain, name] of [
    ['flip.example.com', 'Flip'],
    ['steady.example.com', 'Steady'],
    ['calm.example.com', 'Calm']
  ]) {
    await addSite({ db: setup, entry: { domain: domain as string, name: name as string }, now: new Date() })
  }
  const known = generateKey()
  const unseen = generateKey()
  for (const [name, key] of [
    ['known', known],
    ['unseen', unseen]
  ] as const) {
    await createKey({ db: setup, name, keyHash: hashKey(key), rateLimit: 1_000_000, now: new Date() })
  }
  await setup.destroy()

  const config = loadConfig({
    PORT: '0',
    DATABASE_URL,
    CHECK_INTERVAL_S: '1',
    PROBE_TIMEOUT_MS: '1000',
    CACHE_TTL_S: '60',
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${await closedPort()},:80:127.0.0.1:${targetPort}`
  })
  const logs = new LogCapture()
  const service = await startService({ config, actors: TEST_ACTORS, logger: createLogger({ level: 'info', stream: logs }) })
  let stopped = false
  t.teardown(async () => {
    if (!stopped) await service.stop()
  })
  const base = service.server.info.uri

  interface Answer {
    status: number
    body: any
    retryAfter: string | null
  }
  const get = async (path: string, key: string | null = known, init: RequestInit = {}): Promise<Answer> => {
    const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` }
    const res = await fetch(`${base}${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } })
    const text = await res.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = { notJson: text.slice(0, 100) }
    }
    return { status: res.status, body, retryAfter: res.headers.get('retry-after') }
  }
  const status = (domain: string) => get(`/api/v1/status/${domain}`)
  const check = (domain: string) =>
    get('/api/v1/check', known, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain })
    })

  // Clients polling all along: every answer is kept, and none may be a failure of the service itself.
  const polled: Array<{ at: number; path: string; answer?: Answer; error?: string }> = []
  // Cleared from outside the loop, which the compiler's narrowing does not follow.
  let polling = true as boolean
  const poller = (async () => {
    while (polling) {
      for (const [path, key] of [
        ['/healthz', null],
        ['/api/v1/outages?limit=5', known],
        ['/api/v1/status/steady.example.com', known],
        ['/api/v1/status/flip.example.com', known],
        ['/api/badge/steady.example.com', null]
      ] as const) {
        try {
          polled.push({ at: Date.now(), path, answer: await get(path, key) })
        } catch (err) {
          polled.push({ at: Date.now(), path, error: String(err) })
        }
      }
      await sleep(150) // a client polling at its own pace, not waiting for anything
    }
  })()

  // Every site checked once before the outage: without the database an instance goes on with the
  // sites it claimed last, and a site whose first claim had not come yet (calm's phase falls late in
  // the second) would go unchecked by design, which is not what this test is about.
  const allUp = await until(
    async () => [await status('flip.example.com'), await status('steady.example.com'), await status('calm.example.com')],
    (s) => s.every((a) => a.body.status === 'up'),
    20_000
  )
  t.same(
    allUp.map((a) => a.body.status),
    ['up', 'up', 'up'],
    'the scheduler found the sites up'
  )
  const cachedBefore = await check('cached.example.com')
  t.match(cachedBefore, { status: 200, body: { status: 'up', cached: false } }, 'an on-demand check, kept for reuse')

  // --- The database goes away.
  const stoppedAt = Date.now()
  await mariadb.stop()
  t.equal(
    (
      await until(
        () => get('/healthz', null),
        (a) => a.status === 503,
        5000
      )
    ).status,
    503,
    '/healthz notices at once'
  )

  const health = await get('/healthz', null)
  t.match(health, { status: 503, body: { error: 'database unavailable' }, retryAfter: '5' }, '/healthz: 503 JSON with Retry-After')
  t.same((await get('/api/v1/outages')).body, { error: 'database unavailable' }, 'outages need the database: 503 JSON')
  t.match(await get('/api/v1/outages'), { status: 503, retryAfter: '5' })
  t.match(
    await get('/api/v1/rate_limit', unseen),
    { status: 503, body: { error: 'database unavailable' }, retryAfter: '5' },
    'a key never seen before cannot be looked up: 503, not 401'
  )
  t.match(
    await get('/api/v1/rate_limit', generateKey()),
    { status: 503, body: { error: 'database unavailable' } },
    'nor can an unknown one'
  )
  t.match(await get('/api/v1/rate_limit'), { status: 200, body: { limit: 1_000_000 } }, 'a key seen before still works')
  t.match(await status('steady.example.com'), { status: 200, body: { domain: 'steady.example.com' } }, 'status answers from memory')
  t.match(
    await check('cached.example.com'),
    { status: 200, body: { status: 'up', cached: true } },
    'a cached on-demand check is still answered'
  )
  const badge = await fetch(`${base}/api/badge/steady.example.com`)
  t.equal(badge.status, 200, 'a badge is still answered')
  t.match(badge.headers.get('content-type'), /^image\/svg\+xml/)
  t.match(await badge.text(), /<svg[^>]*>.*\bup\b/s, 'from the state in memory')

  // The flip site goes down and comes back while nothing can be written: once the service has
  // noticed the outage and checked the flip site up twice since, with nowhere to record it.
  const upBeforeFlip = served.flipUp
  t.ok(
    await holds(() => logs.lines.some((l) => l.includes('database unreachable; checks wait')) && served.flipUp - upBeforeFlip >= 6, 15_000),
    'the service noticed the outage and kept checking'
  )
  const flipDownAt = Date.now()
  flipHealthy = false
  const downSeen = served.flipDown
  await until(
    async () => served.flipDown - downSeen,
    (n) => n >= 9,
    15_000
  )
  t.ok(served.flipDown - downSeen >= 9, 'three or more checks saw it down')
  const flipUpAt = Date.now()
  flipHealthy = true
  const upSeen = served.flipUp
  await until(
    async () => served.flipUp - upSeen,
    (n) => n >= 9,
    15_000
  )
  t.ok(served.flipUp - upSeen >= 9, 'three or more checks saw it up again')

  await until(
    async () => Date.now() - stoppedAt,
    (ms) => ms >= OUTAGE_MS - 500,
    OUTAGE_MS,
    250
  )
  const lateInOutage = await status('steady.example.com')
  t.equal(lateInOutage.body.status, 'unavailable', 'with no committed check for three intervals a site is unavailable, never down')
  t.ok(Date.parse(lateInOutage.body.checked_at) <= stoppedAt, 'and its checked_at is its last committed check, from before the outage')
  t.equal((await get('/healthz', null)).status, 503, 'still down after 20 s')

  // --- The database comes back.
  await mariadb.start()
  const backAt = Date.now()
  const healthy = await until(
    () => get('/healthz', null),
    (a) => a.status === 200,
    30_000
  )
  const healthyMs = Date.now() - backAt
  // How soon is bounded on a faked clock, not here: the recorder writes within a ping interval of
  // the database answering (test/lib/monitoring/record/recorder-recovery.test.ts), and /healthz asks the
  // database on every request (test/lib/routes/health.test.ts). This test reports the figures.
  t.equal(healthy.status, 200, `/healthz 200 again ${healthyMs} ms after MySQL answered`)
  const fresh = await until(
    async () => [await status('flip.example.com'), await status('steady.example.com'), await status('calm.example.com')],
    (all) => all.every((a) => a.body.status === 'up' && Date.parse(a.body.checked_at) >= backAt),
    30_000
  )
  const freshMs = Date.now() - backAt
  t.ok(
    fresh.every((a) => a.body.status === 'up'),
    `the waiting checks were recorded and the status is current ${freshMs} ms after MySQL answered`
  )
  t.match(await get('/api/v1/rate_limit', unseen), { status: 200 }, 'the key never seen works now')
  const listed = await get('/api/v1/outages?domain=flip.example.com')
  t.equal(listed.status, 200)
  t.equal(listed.body.outages.length, 1, 'the outage that happened during the database outage is listed once')

  polling = false
  await poller
  stopped = true
  await service.stop()
  const scheduled = service.monitoring.scheduler.stats().started

  // --- What the database holds.
  const db = openDb(DATABASE_URL)
  t.teardown(() => db.destroy())
  const sites = new Map((await db('sites').select('id', 'domain', 'checked_at', 'status')).map((s) => [String(s.domain), s]))
  const flipId = Number(sites.get('flip.example.com')?.id)
  const checks = (await db('checks').orderBy(['site_id', 'checked_at']).select('site_id', 'checked_at', 'status', 'source')).map((c) => ({
    site: Number(c.site_id),
    at: (toDate(c.checked_at) as Date).getTime(),
    status: String(c.status),
    source: String(c.source)
  }))
  t.equal(
    checks.filter((c) => c.source === 'schedule').length,
    scheduled,
    `every one of the ${scheduled} scheduled checks was stored, none twice`
  )
  t.equal(new Set(checks.map((c) => `${c.site}@${c.at}`)).size, checks.length, 'no check is stored twice')
  const during = checks.filter((c) => c.at > stoppedAt && c.at < backAt)
  for (const [domain, site] of sites) {
    const own = during.filter((c) => c.site === Number(site.id))
    t.ok(own.length >= 15, `${domain}: ${own.length} checks made while the database was down were recorded once it was back`)
    const newest = checks.filter((c) => c.site === Number(site.id)).at(-1)
    t.equal((toDate(site.checked_at) as Date).getTime(), newest?.at, `${domain}: the site row matches its newest check`)
  }
  t.notOk(
    checks.some((c) => c.site !== flipId && c.status !== 'up'),
    'the other sites were never recorded as anything but up'
  )

  const outages = (await db('outages').select('site_id', 'started_at', 'ended_at')).map((o) => ({
    site: Number(o.site_id),
    start: (toDate(o.started_at) as Date).getTime(),
    end: toDate(o.ended_at)?.getTime() ?? null
  }))
  t.equal(outages.length, 1, 'one outage in all: none invented for the other sites')
  const outage = outages[0]
  const flipChecks = checks.filter((c) => c.site === flipId)
  const firstDown = flipChecks.find((c) => c.status === 'down')
  const firstUpAfter = flipChecks.find((c) => firstDown !== undefined && c.at > firstDown.at && c.status === 'up')
  t.match(
    outage,
    { site: flipId, start: firstDown?.at, end: firstUpAfter?.at },
    'it starts and ends at the times of the checks that saw it'
  )
  if (outage !== undefined && outage.end !== null) {
    t.ok(outage.start >= flipDownAt - 3000 && outage.start <= flipUpAt, 'it started when the site went down, not when it was written')
    t.ok(outage.end >= flipUpAt - 3000 && outage.end < backAt, 'and ended when the site came back, before the database did')
  }
  t.same(
    listed.body.outages.map((o: { started_at: string; ended_at: string }) => [o.started_at, o.ended_at]),
    [[new Date(outage?.start ?? 0).toISOString(), new Date(outage?.end ?? 0).toISOString()]],
    'the API reports those times'
  )

  // --- What clients saw all along.
  t.same(
    polled.filter((p) => p.error !== undefined).map((p) => `${p.path}: ${p.error}`),
    [],
    'every poll got an answer: no crash, no reset'
  )
  const answers = polled.flatMap((p) => (p.answer ? [{ ...p.answer, path: p.path, at: p.at }] : []))
  t.same(
    answers.filter((a) => ![200, 503].includes(a.status)).map((a) => `${a.path} ${a.status}`),
    [],
    'only 200 or 503'
  )
  t.same(
    answers.filter((a) => a.status === 503 && (typeof a.body.error !== 'string' || a.retryAfter === null)).map((a) => a.path),
    [],
    'every 503 is JSON with an error and Retry-After'
  )
  t.same(
    answers.filter((a) => a.path.startsWith('/api/v1/status/') && a.status !== 200).map((a) => a.path),
    [],
    'status never failed'
  )
  t.same(
    answers.filter((a) => a.path.startsWith('/api/badge/') && a.status !== 200).map((a) => a.path),
    [],
    'nor did the badge'
  )
  t.ok(
    answers.filter((a) => a.path.startsWith('/api/badge/') && a.at > stoppedAt && a.at < backAt).length >= 10,
    'which was polled through the outage'
  )
  t.same(
    answers.filter((a) => a.path.startsWith('/api/v1/status/') && a.body.status === 'down').map((a) => a.at),
    [],
    'and never said down: the flip outage was not committed while it happened, so status said unavailable'
  )
  t.ok(
    answers.some((a) => a.path === '/api/v1/outages?limit=5' && a.status === 503),
    'polls saw outages answer 503 while the database was down'
  )

  const logText = logs.lines.join('\n')
  t.match(logText, /database unreachable; checks wait to be recorded/)
  t.match(logText, /database reachable again; recording the waiting checks/)
  t.equal(
    logs.lines.filter((l) => l.includes('database unreachable; checks wait')).length,
    1,
    'one warning for the outage, not one per check'
  )
  t.notOk(hasStackTrace(logText), 'no stack in the logs')
  t.notMatch(logText, /select |insert into|update `|\bstack\b/i, 'no SQL in the logs')
  t.notOk(logText.includes(known) || logText.includes(unseen), 'no key in the logs')
  t.comment(
    `figures: /healthz 200 ${healthyMs} ms and every site current ${freshMs} ms after MySQL answered; ` +
      `${during.length} checks made during the outage recorded after it; ${scheduled} scheduled checks in all; ${polled.length} polls`
  )
})
