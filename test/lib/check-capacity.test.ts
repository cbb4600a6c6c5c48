import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createKey } from '../../lib/store/keys.js'
import type { ServerInjectResponse } from '@hapi/hapi'
import { openApiProblems } from '../helpers/openapi.js'
import { Admission } from '../../lib/probing/admission.js'
import { CheckSupervisor, type Prober } from '../../lib/probing/supervisor.js'
import { migratedDb } from '../helpers/db.js'
import { fakeClock, turnsUntil } from '../helpers/fake-clock.js'
import { holds } from '../helpers/poll.js'
import { bearer, testServer } from '../helpers/server.js'
import { startTrackedService, type TrackedService } from '../helpers/tracked-service.js'

// MAX_CHECKS_IN_FLIGHT 12: 3 slots for the scheduler, 9 for on-demand checks, 4 per key.
const CAPACITY = { MAX_CHECKS_IN_FLIGHT: '12', PROBE_TIMEOUT_MS: '3000', CACHE_TTL_S: '60', CHECK_INTERVAL_S: '1' }
const TRACKED = { domain: 'tracked.example.com', name: 'Tracked' }
const hanging = (host: string): boolean => host.endsWith('.hang.test')

interface Answer {
  status: number
  body: any
  headers: Record<string, unknown>
  res: ServerInjectResponse
}

async function extraKey(tracked: TrackedService, name: string): Promise<string> {
  const key = generateKey()
  await createKey({ db: tracked.service.db, name, keyHash: hashKey(key), rateLimit: 1000, now: new Date() })
  return key
}

function checker(tracked: TrackedService) {
  return async (key: string, domain: string): Promise<Answer> => {
    const res = await tracked.service.server.inject({
      method: 'POST',
      url: '/api/v1/check',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ domain })
    })
    return { status: res.statusCode, body: JSON.parse(res.payload), headers: res.headers, res }
  }
}

/** Resolves once the target has seen a request for each of `hosts` (the checks are probing). */
function arrivals(tracked: TrackedService, hosts: string[]): Promise<void> {
  const waiting = new Set(hosts.filter((h) => !tracked.hosts.includes(h)))
  if (waiting.size === 0) return Promise.resolve()
  return new Promise((resolve) => {
    tracked.onRequest((host) => {
      waiting.delete(host)
      if (waiting.size === 0) resolve()
    })
  })
}

t.test('MAX_CHECKS_IN_FLIGHT: over it an on-demand check is refused at once, scheduled checks go on', async (t) => {
  const tracked = await startTrackedService(t, { engine: 'sqlite', site: TRACKED, env: CAPACITY, hang: hanging })
  const check = checker(tracked)
  const [a, b, c] = [tracked.key, await extraKey(tracked, 'b'), await extraKey(tracked, 'c')]
  t.match(tracked.service.admission.stats(), { capacity: 12, scheduledSlots: 3, demandSlots: 9, keySlots: 4 })

  // Key a takes its share (4), key b its share (4), key c the last on-demand slot.
  const names = Array.from({ length: 9 }, (_, i) => `h${i}.hang.test`)
  const owners = [a, a, a, a, b, b, b, b, c]
  const held = names.map((name, i) => check(owners[i] as string, name))
  let heldEnded = 0
  for (const h of held) {
    void h.then(
      () => heldEnded++,
      () => heldEnded++
    )
  }
  await arrivals(tracked, names)
  t.equal(tracked.service.admission.stats().demand, 9, 'every on-demand slot is held by a hanging check')

  const budget = (answer: Answer) => Number(answer.headers['ratelimit-remaining'])
  const overKey = await check(a, 'more.hang.test')
  t.equal(overKey.status, 503, 'a key over its share gets 503')
  t.match(overKey.body, { error: /this key has too many checks in flight/ })
  t.ok(Number(overKey.headers['retry-after']) >= 1, `with Retry-After (${String(overKey.headers['retry-after'])})`)
  t.same(openApiProblems(overKey.res), [], 'the 503 matches the OpenAPI document')

  const refusals: Answer[] = []
  // The hanging checks still under way as each refusal came.
  const underWay: number[] = []
  for (let i = 0; i < 5; i++) {
    refusals.push(await check(c, `over${i}.hang.test`))
    underWay.push(held.length - heldEnded)
  }
  for (const r of refusals) {
    t.equal(r.status, 503)
    t.match(r.body, { error: /too many checks in flight/ })
    t.ok(
      Number(r.headers['retry-after']) >= 1 && Number(r.headers['retry-after']) <= 5,
      'Retry-After: when the oldest hanging check ends at the latest'
    )
  }
  t.same(
    underWay,
    refusals.map(() => names.length),
    'refused at once: each while every hanging check was still under way, not queued for a slot'
  )
  t.equal(budget(refusals[1] as Answer), budget(refusals[0] as Answer), 'a refused check costs the key nothing')
  t.notOk(
    tracked.hosts.some((h) => h.startsWith('over')),
    'nothing refused was probed'
  )

  // A check of a domain already being probed joins that run and needs no slot of its own.
  const joined = check(c, 'h8.hang.test')

  // Scheduled checks have slots of their own: the tracked site goes on being checked meanwhile.
  const started = tracked.service.monitoring.scheduler.stats().started
  t.ok(await holds(() => tracked.service.monitoring.scheduler.stats().started >= started + 2, 10_000), 'scheduled checks still run')
  const pending = await Promise.race([Promise.all(held).then(() => 'done'), Promise.resolve('pending')])
  t.equal(pending, 'pending', 'while the hanging checks still hold every on-demand slot')
  t.equal(tracked.service.monitoring.scheduler.stats().late, 0, 'and none of them started late')
  const status = JSON.parse(
    (await tracked.service.server.inject({ url: '/api/v1/status/tracked.example.com', headers: { authorization: `Bearer ${a}` } })).payload
  )
  t.equal(status.status, 'up')

  // Capacity comes back once the hanging probes reach their deadline.
  const ended = await Promise.all(held)
  t.same(
    ended.map((r) => r.status),
    names.map(() => 200)
  )
  t.same(new Set(ended.map((r) => r.body.status)), new Set(['down']), 'the hanging sites are down (timeout)')
  t.equal(tracked.service.admission.stats().demand, 0)
  t.match(await joined, { status: 200, body: { status: 'down' } }, 'the check that joined a run under way was not refused')
  t.equal((await check(c, 'fresh.example.com')).status, 200, 'the next check is admitted')
  t.equal((await check(a, 'fresh2.example.com')).status, 200, 'and so is the flooding key again')
})

t.test('a check over capacity is refused at once: its 503 waits for no timer', async (t) => {
  // One on-demand slot, held by a check whose locations answer only when the test says so.
  const { db } = await migratedDb('sqlite', t)
  let release = (): void => {}
  const prober: Prober = {
    probeAll: () =>
      new Promise((resolve) => {
        release = () => {
          resolve([])
        }
      })
  }
  const admission = new Admission({ capacity: 2, keyShare: 1, maxCheckMs: 5000 })
  const checks = new CheckSupervisor({ prober, admission, cacheTtlS: 0, policy: { allowPrivate: true }, connectTo: [] })
  const { server, issueKey } = await testServer({ db, checks })
  const key = await issueKey()
  const ask = (domain: string) =>
    server.inject({
      method: 'POST',
      url: '/api/v1/check',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: JSON.stringify({ domain })
    })
  const held = ask('held.example.com')
  await turnsUntil(() => admission.stats().demand === 1)
  // From here no timer of this thread fires: an answer that waited for one (a slot to free, a
  // pause before refusing) would never come.
  const clock = fakeClock(t, ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'])
  const refused = await ask('refused.example.com')
  t.equal(clock.now, 0, 'the clock never moved')
  clock.stop()
  t.equal(refused.statusCode, 503, 'and the check over capacity was refused')
  t.equal(admission.stats().demand, 1, 'while the other still held the slot')
  release()
  t.equal((await held).statusCode, 200)
})

t.test('a client that goes away: its check completes, is cached and recorded, and keeps its slot until then', async (t) => {
  const tracked = await startTrackedService(t, {
    engine: 'sqlite',
    site: TRACKED,
    sites: [{ domain: 'slow.hang.test', name: 'Slow' }],
    env: { ...CAPACITY, CHECK_INTERVAL_S: '3600' },
    hang: hanging
  })
  await tracked.service.server.start()
  const { port } = tracked.service.server.listener.address() as AddressInfo
  const abandon = (domain: string): Promise<void> =>
    new Promise((resolve) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/check',
        headers: { authorization: `Bearer ${tracked.key}`, 'content-type': 'application/json' }
      })
      req.on('error', () => {})
      req.end(JSON.stringify({ domain }))
      // Gone as soon as the target sees the probe: the check is under way.
      void arrivals(tracked, [domain]).then(() => {
        req.destroy()
        resolve()
      })
    })
  await abandon('slow.hang.test')
  const demandRows = () => tracked.service.db('checks').where({ source: 'demand' }).count({ n: '*' }).first()
  t.ok(await holds(async () => Number((await demandRows())?.n) === 1, 15_000), 'the abandoned check of a tracked site was recorded')
  const again = await checker(tracked)(tracked.key, 'slow.hang.test')
  t.match(again, { status: 200, body: { cached: true, status: 'down' } }, 'and its result is reused')

  // Abandoned checks hold their slots: a flood of them is refused like any other.
  const flood = Array.from({ length: 4 }, (_, i) => `gone${i}.hang.test`)
  await Promise.all(flood.map(abandon))
  const refused = await checker(tracked)(tracked.key, 'one-more.hang.test')
  t.equal(refused.status, 503, 'the key that abandoned its checks is still at its share')
  t.equal(tracked.service.admission.stats().demand, 4)
  t.ok(await holds(() => tracked.service.admission.stats().demand === 0, 15_000), 'the slots come back when the abandoned checks end')
})
