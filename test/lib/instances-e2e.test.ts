/**
 * Several instances as one service (issue 16): three `serve` processes from the build (`npm test`
 * builds first) on one fresh MariaDB database and one Redis database, behind a real HAProxy that the
 * test starts from a configuration it writes, all on loopback. 300 sites at a 5 s interval for 60 s,
 * one instance killed with SIGKILL a third of the way in. MySQL only: it is what several instances need.
 */
import t from 'tap'
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { generateKey, hashKey } from '../../lib/keys.js'
import { addSites } from '../../lib/monitoring/add-sites.js'
import { phaseOf } from '../../lib/monitoring/schedule/phase-wheel.js'
import { openDb, toDate } from '../../lib/store/db.js'
import { createKey, revokeKey } from '../../lib/store/keys.js'
import type { Health } from '../../lib/client/index.js'
import { apiClient, outcome, type Outcome } from '../helpers/api-client.js'
import { startServe } from '../helpers/cli.js'
import { createMigratedDatabase } from '../helpers/db.js'
import { startHaproxy } from '../helpers/haproxy.js'
import { until } from '../helpers/poll.js'
import { closedPort, serveOnLoopback } from '../helpers/targets.js'

const INTERVAL_MS = 5000
const SITES = 300
/** Long enough for the kill (at a third), the flip (at half) and three whole intervals of every site after both. */
const RUN_MS = 30_000
/** A check, a revocation, a site added or removed anywhere shows everywhere within this (decisions.md, Several instances). */
const FRESH_MS = 2000
/** The Redis database this file owns (the helpers' share is 9 to 12). */
const REDIS_URL = 'redis://127.0.0.1:6379/10'

t.setTimeout(300_000)

/** Polls `read` on every base at once; resolves with how long each took to satisfy `done` (Infinity when it never did). */
async function everywhere<T>(
  bases: readonly string[],
  read: (base: string) => Promise<Outcome<T>>,
  done: (a: Outcome<T>) => boolean,
  since: number
) {
  return Promise.all(
    bases.map(async (base) => {
      const last = await until(() => read(base), done, 10_000, 50)
      return done(last) ? Date.now() - since : Infinity
    })
  )
}

t.test('three instances behind HAProxy on one MariaDB behave as one service', async (t) => {
  const redis = new Redis(REDIS_URL)
  await redis.flushdb()
  t.teardown(async () => {
    await redis.flushdb()
    redis.disconnect()
  })

  // One loopback target for every site, routed on the Host header; a site in `down` answers 503.
  const down = new Set<string>()
  const target = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '')
    res.writeHead(down.has(host) ? 503 : 200).end(down.has(host) ? 'down' : 'ok')
  })
  const targetPort = await serveOnLoopback(t, target)

  const database = await createMigratedDatabase('mysql')
  t.teardown(() => database.cleanup())
  const db = openDb(database.url)
  t.teardown(() => db.destroy())
  const domains = Array.from({ length: SITES }, (_, i) => `s${String(i).padStart(3, '0')}.example.com`)
  await addSites({ db, entries: domains.map((domain) => ({ domain, name: null })), now: new Date() })
  const key = generateKey()
  await createKey({ db, name: 'e2e', keyHash: hashKey(key), rateLimit: 1_000_000, scopes: 'read,check,manage', now: new Date() })
  const doomed = generateKey()
  const doomedRow = await createKey({ db, name: 'doomed', keyHash: hashKey(doomed), rateLimit: 1_000_000, now: new Date() })

  const dir = mkdtempSync(join(tmpdir(), 'site-status-instances-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const closed = await closedPort()
  const env = (name: string): Record<string, string> => ({
    DATABASE_URL: database.url,
    REDIS_URL,
    INSTANCE_ID: name,
    CHECK_INTERVAL_S: String(INTERVAL_MS / 1000),
    PROBE_TIMEOUT_MS: '1000',
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${targetPort}`,
    // Two locations: the fewest that can confirm a site down.
    LOCATIONS: JSON.stringify([{ label: 'Local 1, Local' }, { label: 'Local 2, Local' }]),
    LOG_LEVEL: 'info'
  })
  const names = ['i1', 'i2', 'i3']
  const instances: Array<Awaited<ReturnType<typeof startServe>>> = []
  for (const name of names) instances.push(await startServe(t, { env: env(name), cwd: dir }))
  const uris = instances.map((i) => i.uri)
  const ports = uris.map((u) => Number(new URL(u).port))
  const haproxy = (await startHaproxy(t, ports)).uri

  // Round robin: a few rounds through HAProxy reach every instance (on a machine this busy a health
  // check may time out now and then and take an instance out for a moment, so the rounds may take more).
  const answered = new Map<string, Health>()
  const viaHaproxy = apiClient(haproxy)
  await until(
    async () => {
      const health = await outcome(viaHaproxy.health())
      if (health.value && viaHaproxy.statuses.at(-1) === 200) answered.set(health.value.instance, health.value)
      return answered.size
    },
    (n) => n === names.length,
    30_000,
    20
  )
  t.same([...answered.keys()].sort(), names, 'HAProxy spreads requests over the three instances, each named by /healthz')
  for (const [name, health] of answered) t.match(health, { status: 'ok', database: 'ok', redis: 'ok' }, `${name}: MySQL and Redis answer`)
  instances.forEach((i, n) => {
    t.match(i.output(), `"instance":"${names[n]}"`, `${names[n]}'s log lines name it`)
  })
  const startedAt = Date.now()

  // --- A key revoked anywhere is refused everywhere within 2 s, though every instance had it cached as valid.
  const all = [...uris, haproxy]
  for (const base of all) {
    const client = apiClient(base, doomed)
    await client.getRateLimit()
    t.equal(client.statuses.at(-1), 200, `the key works through ${base}`)
  }
  await revokeKey({ db, id: doomedRow.id, now: new Date() })
  const revokedAt = Date.now()
  const refusedMs = await everywhere(
    all,
    (base) => outcome(apiClient(base, doomed).getRateLimit()),
    (a) => a.error?.status === 401,
    revokedAt
  )
  t.ok(
    refusedMs.every((ms) => ms <= FRESH_MS),
    `the revoked key is refused by every instance and through HAProxy within 2 s (${refusedMs.join(', ')} ms)`
  )

  // --- A site added through one instance is known to the others within 2 s; removed through another, gone within 2 s.
  const i1 = apiClient(uris[0] as string, key)
  await i1.addSite({ domain: 'added.example.com' })
  const addedAt = Date.now()
  t.equal(i1.statuses.at(-1), 201, 'added through i1')
  const knownMs = await everywhere(
    uris.slice(1),
    (base) => outcome(apiClient(base, key).getStatus('added.example.com')),
    (a) => a.value?.domain === 'added.example.com',
    addedAt
  )
  t.ok(
    knownMs.every((ms) => ms <= FRESH_MS),
    `i2 and i3 know it within 2 s (${knownMs.join(', ')} ms)`
  )
  const i3 = apiClient(uris[2] as string, key)
  await i3.removeSite('added.example.com')
  const removedAt = Date.now()
  t.equal(i3.statuses.at(-1), 204, 'removed through i3')
  const goneMs = await everywhere(
    uris.slice(0, 2),
    (base) => outcome(apiClient(base, key).getStatus('added.example.com')),
    (a) => a.error?.status === 404,
    removedAt
  )
  t.ok(
    goneMs.every((ms) => ms <= FRESH_MS),
    `i1 and i2 forget it within 2 s (${goneMs.join(', ')} ms)`
  )

  // --- One instance dies without a word a third of the way in.
  await sleep(Math.max(0, startedAt + RUN_MS / 3 - Date.now()))
  const victim = instances[1] as (typeof instances)[number]
  const exited = once(victim.child, 'exit')
  victim.child.kill('SIGKILL')
  const killedAt = Date.now()
  await exited
  // Its last claims: checks it had taken on and may not have run.
  const claimed = (
    await db('sites').where({ lease_owner: 'i2' }).where('lease_until', '>', new Date(killedAt)).select('domain', 'lease_until')
  ).map((r) => ({ domain: String(r.domain), dueAt: (toDate(r.lease_until) as Date).getTime() - INTERVAL_MS }))
  const alive = [uris[0] as string, uris[2] as string]

  // --- A status change seen by one instance shows through every instance within 2 s of being recorded.
  await sleep(Math.max(0, startedAt + RUN_MS / 2 - Date.now()))
  const flip = 's007.example.com'
  t.equal((await apiClient(haproxy, key).getStatus(flip)).status, 'up', `${flip} is up`)
  down.add(flip)
  const row = await until(
    async () => db('sites').where({ domain: flip }).first('status'),
    (r) => r?.status === 'down',
    3 * INTERVAL_MS,
    20
  )
  const recordedAt = Date.now()
  t.equal(row?.status, 'down', 'a check recorded it down')
  const seenMs = await everywhere(
    [...alive, haproxy],
    (base) => outcome(apiClient(base, key).getStatus(flip)),
    (a) => a.value?.status === 'down',
    recordedAt
  )
  t.ok(
    seenMs.every((ms) => ms <= FRESH_MS),
    `every instance says down within 2 s (${seenMs.join(', ')} ms)`
  )
  const badgeMs = await everywhere(
    alive,
    (base) => outcome(apiClient(base).getBadge(flip)),
    (a) => a.value !== undefined && /\bdown\b/.test(a.value),
    recordedAt
  )
  t.ok(
    badgeMs.every((ms) => ms <= FRESH_MS),
    `and so does its badge (${badgeMs.join(', ')} ms)`
  )

  // --- Shared rate limit: one key with a limit of 60, 20 clients through HAProxy (round robin over
  // the two instances still up), 10 requests each at once: exactly 60 admitted in the window, as one
  // instance would; without the shared window (REDIS_URL) each instance would admit 60 of its own.
  // Raw requests, not the client: once it has learnt the key is spent, its budget would hold a
  // request back or refuse it itself, and every refusal counted here must be the servers'.
  const limited = generateKey()
  await createKey({ db, name: 'limited', keyHash: hashKey(limited), rateLimit: 60, scopes: 'read', now: new Date() })
  const statusOf = async (): Promise<number> => {
    try {
      const res = await fetch(`${haproxy}/api/v1/status/s001.example.com`, { headers: { authorization: `Bearer ${limited}` } })
      await res.arrayBuffer()
      return res.status
    } catch {
      return 0
    }
  }
  const limitStarted = Date.now()
  const statuses = (
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        const seen: number[] = []
        for (let i = 0; i < 10; i++) seen.push(await statusOf())
        return seen
      })
    )
  ).flat()
  const tally = (status: number): number => statuses.filter((s) => s === status).length
  t.ok(Date.now() - limitStarted < 60_000, 'the 200 requests fit in one 60 s window')
  t.equal(tally(200), 60, 'exactly 60 of 200 requests through HAProxy are admitted across the instances')
  t.equal(tally(429), 140, 'the other 140 are refused with 429')

  await sleep(Math.max(0, startedAt + RUN_MS - Date.now()))
  const stoppedAt = Date.now()
  for (const i of [instances[0], instances[2]]) {
    const child = (i as (typeof instances)[number]).child
    const exit = once(child, 'exit')
    child.kill('SIGTERM')
    t.equal((await exit)[0], 0, 'a surviving instance stops cleanly')
  }

  // --- What the checks table says: every site once per interval, none late by an interval.
  const rows = await db('checks')
    .join('sites', 'sites.id', 'checks.site_id')
    .where('checks.source', 'schedule')
    .whereIn('sites.domain', domains)
    .select('sites.domain', 'checks.checked_at')
  const buckets = new Map<string, number>()
  let latest = 0
  const lateness: number[] = []
  for (const r of rows) {
    const domain = String(r.domain)
    const at = (toDate(r.checked_at) as Date).getTime()
    const phase = phaseOf(domain, INTERVAL_MS)
    // The interval a check belongs to is the one whose due time it follows: late by less than an interval.
    const k = Math.floor((at - phase) / INTERVAL_MS)
    buckets.set(`${domain}@${k}`, (buckets.get(`${domain}@${k}`) ?? 0) + 1)
    lateness.push(at - (k * INTERVAL_MS + phase))
    latest = Math.max(latest, at)
  }
  const twice = [...buckets]
    .filter(([, n]) => n > 1)
    .map(([bucket]) => {
      const [domain, k] = bucket.split('@') as [string, string]
      const due = Number(k) * INTERVAL_MS + phaseOf(domain, INTERVAL_MS)
      const times = rows.filter((r) => r.domain === domain).map((r) => (toDate(r.checked_at) as Date).getTime() - due)
      return `${domain} due ${new Date(due).toISOString()}: checked ${times.filter((ms) => ms >= 0 && ms < INTERVAL_MS).join(' and ')} ms after`
    })
  t.same(twice, [], `no site checked twice in one interval (${rows.length} scheduled checks)`)
  const missing: string[] = []
  let expected = 0
  for (const domain of domains) {
    const phase = phaseOf(domain, INTERVAL_MS)
    // Every due time from an interval after the start to an interval (and a second) before the stop.
    for (
      let k = Math.ceil((startedAt + INTERVAL_MS - phase) / INTERVAL_MS);
      k * INTERVAL_MS + phase <= stoppedAt - INTERVAL_MS - 1000;
      k++
    ) {
      expected++
      if (!buckets.has(`${domain}@${k}`)) missing.push(`${domain} due ${new Date(k * INTERVAL_MS + phase).toISOString()}`)
    }
  }
  t.ok(expected >= SITES * 3, `${expected} due checks in the window`)
  t.same(missing.slice(0, 20), [], `every due check ran, none later than an interval (${missing.length} missing)`)

  // The dead instance's claims were run by the others, within one interval of their due times.
  const byDomain = new Map<string, number[]>()
  for (const r of rows) {
    const list = byDomain.get(String(r.domain)) ?? []
    list.push((toDate(r.checked_at) as Date).getTime())
    byDomain.set(String(r.domain), list)
  }
  const unrun = claimed.filter((c) => !(byDomain.get(c.domain) ?? []).some((at) => at >= c.dueAt && at < c.dueAt + INTERVAL_MS))
  t.ok(claimed.length > 0, `i2 held ${claimed.length} claims when it was killed`)
  t.same(unrun, [], 'each of them was checked within one interval of its due time')
  const takenOver = claimed.flatMap((c) =>
    (byDomain.get(c.domain) ?? []).filter((at) => at > killedAt && at < c.dueAt + INTERVAL_MS).map((at) => at - c.dueAt)
  )
  lateness.sort((a, b) => a - b)
  // What the instances warned about, for whoever reads a failure (a loaded machine shows here).
  const warnings = instances.flatMap((i, n) =>
    i
      .output()
      .split('\n')
      .filter((l) => /"level":(40|50|60)/.test(l))
      .map((l) => {
        const line = JSON.parse(l) as { time: number; msg: string; err?: { code?: string } }
        return `${names[n]} +${line.time - startedAt} ms: ${line.msg}${line.err?.code ? ` (${line.err.code})` : ''}`
      })
  )
  t.comment(`instance warnings: ${warnings.length === 0 ? 'none' : `\n${warnings.join('\n')}`}`)
  t.comment(
    `figures: ${rows.length} scheduled checks, lateness p50 ${lateness[Math.floor(lateness.length / 2)]} ms, ` +
      `p99 ${lateness[Math.floor(lateness.length * 0.99)]} ms, max ${lateness.at(-1)} ms; i2 killed with ${claimed.length} claims, ` +
      `${takenOver.length} run after its death (lateness ${takenOver.length > 0 ? Math.max(...takenOver) : '-'} ms at most); ` +
      `revocation ${Math.max(...refusedMs)} ms, site known ${Math.max(...knownMs)} ms, gone ${Math.max(...goneMs)} ms, ` +
      `down seen ${Math.max(...seenMs)} ms; last check ${latest - stoppedAt} ms after the stop began; ` +
      `started ${new Date(startedAt).toISOString()}, i2 killed ${new Date(killedAt).toISOString()}, stopped ${new Date(stoppedAt).toISOString()}`
  )
})
