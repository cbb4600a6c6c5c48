import t from 'tap'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sweepDeadlines } from '../../../lib/heartbeats/deadlines.js'
import { addHeartbeat } from '../../../lib/heartbeats/manage.js'
import { recordPing } from '../../../lib/heartbeats/pings.js'
import { generateKey, hashKey } from '../../../lib/keys.js'
import { openDb, toDate, type Db } from '../../../lib/store/db.js'
import { createKey } from '../../../lib/store/keys.js'
import { startServe } from '../../helpers/cli.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { startHaproxy } from '../../helpers/haproxy.js'
import { until } from '../../helpers/poll.js'

const T0 = Date.parse('2026-11-29T03:00:00.000Z')
const S = 1000
const HEARTBEATS = 300

for (const engine of engines().filter((e) => e === 'mysql')) {
  t.test(`three instances sweeping at once open exactly one outage per overdue heartbeat, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    let clock = T0
    const now = (): Date => new Date(clock)
    const settings = { name: 'job', schedule: { every_s: 60 }, grace_s: 30, max_runtime_s: null }
    for (let i = 0; i < HEARTBEATS; i++) {
      const { token } = await addHeartbeat({ db, slug: `job-${i}`, settings, now: now() })
      await recordPing({ db, ping: { token, kind: 'success', rid: null }, now })
    }
    // Each instance has a pool of its own, as separate processes would.
    const instances = [openDb(url), openDb(url), openDb(url)]
    t.teardown(() => Promise.all(instances.map((i) => i.destroy())))
    clock = T0 + 95 * S
    const judged = await Promise.all(instances.map((db) => sweepDeadlines({ db, now })))
    t.equal(
      judged.reduce((a, b) => a + b, 0),
      HEARTBEATS,
      `each overdue heartbeat judged once among the instances (${judged.join(' + ')})`
    )
    await Promise.all(instances.map((db) => sweepDeadlines({ db, now })))
    const perSite = await db('outages').groupBy('site_id').select('site_id').count({ n: '*' })
    t.equal(perSite.length, HEARTBEATS, 'every heartbeat has an outage')
    t.ok(
      perSite.every((r) => Number(r.n) === 1),
      'and only one'
    )
    const opened = await db('events').where({ type: 'outage.opened' }).count({ n: '*' })
    t.equal(Number(opened[0]?.n), HEARTBEATS, 'one outage.opened each')
  })
}

/** Heartbeats made overdue at once while the instances run. */
const DUE = 3
/** Pings in flight at the kill. */
const FLIGHT = 40

/**
 * Time passing for heartbeats without waiting for it: their last pings and deadlines move `ms`
 * into the past, as if that long had gone by since (every_s is at least 30 s by the API).
 */
async function age(db: Db, slugs: readonly string[], ms: number): Promise<void> {
  const back = (v: unknown): Date | null => {
    const at = toDate(v)
    return at === null ? null : new Date(at.getTime() - ms)
  }
  for (const slug of slugs) {
    const row = await db('heartbeats').where({ slug }).first('last_ping_at', 'last_success_at', 'next_deadline')
    await db('heartbeats')
      .where({ slug })
      .update({ last_ping_at: back(row.last_ping_at), last_success_at: back(row.last_success_at), next_deadline: back(row.next_deadline) })
  }
}

for (const engine of engines().filter((e) => e === 'mysql')) {
  t.test(
    `three instances behind HAProxy, one killed mid-run: one outage per overdue heartbeat, no acknowledged ping lost, on ${engine}`,
    async (t) => {
      const { db, url } = await migratedDb(engine, t)
      const key = generateKey()
      await createKey({ db, name: 'ops', keyHash: hashKey(key), rateLimit: null, scopes: 'read,manage', now: new Date() })
      const dir = mkdtempSync(join(tmpdir(), 'site-status-heartbeat-instances-'))
      t.teardown(() => {
        rmSync(dir, { recursive: true, force: true })
      })
      const names = ['i1', 'i2', 'i3']
      const env = (name: string) => ({
        DATABASE_URL: url,
        INSTANCE_ID: name,
        LOCATIONS: '[{"label":"Loopback 1, Test"}]',
        LOG_LEVEL: 'info'
      })
      const instances = await Promise.all(names.map((name) => startServe(t, { env: env(name), cwd: dir })))
      const haproxy = (
        await startHaproxy(
          t,
          instances.map((i) => Number(new URL(i.uri).port)),
          { servedBy: true }
        )
      ).uri
      const api = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
        const res = await fetch(`${haproxy}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        return (await res.json()) as Record<string, unknown>
      }
      const pingPaths = new Map<string, string>()
      for (const slug of [...Array.from({ length: DUE }, (_, i) => `due-${i}`), 'kept']) {
        const created = await api('POST', '/api/v1/heartbeats', { name: slug, schedule: { every_s: 30 }, grace_s: 5 })
        pingPaths.set(slug, new URL(created.ping_url as string).pathname)
      }
      const ping = (slug: string, query = ''): Promise<Response> => fetch(`${haproxy}${pingPaths.get(slug) as string}${query}`)
      for (const slug of pingPaths.keys()) t.equal((await ping(slug)).status, 200, `${slug} pinged through HAProxy`)
      const due = [...pingPaths.keys()].filter((s) => s.startsWith('due-'))

      // Overdue past their grace at once, while every instance sweeps every second.
      await age(db, due, 36_000)

      // Meanwhile pings to `kept` through HAProxy, each with a rid of its own; the first instance to
      // acknowledge one is killed with SIGKILL while the others are in flight.
      const acknowledged: Array<{ rid: string; by: string }> = []
      let victim = null as string | null
      let killed: Promise<unknown> = Promise.resolve()
      await Promise.all(
        Array.from({ length: FLIGHT }, async (_, i) => {
          try {
            const res = await ping('kept', `?rid=p${i}`)
            const by = res.headers.get('x-served-by') ?? '?'
            if (res.status === 200 && (await res.text()) === 'OK') {
              acknowledged.push({ rid: `p${i}`, by })
              if (victim === null) {
                victim = by
                const child = instances[names.indexOf(by)]?.child
                killed = child === undefined ? Promise.resolve() : once(child, 'exit')
                child?.kill('SIGKILL')
              }
            }
          } catch {
            // Cut by the kill: not acknowledged.
          }
        })
      )
      await killed
      t.ok(victim !== null && names.includes(victim), `${String(victim)} acknowledged a ping and was killed`)
      const byVictim = acknowledged.filter((a) => a.by === victim).length
      const kept = await db('heartbeats').where({ slug: 'kept' }).first('id')
      const stored = new Set((await db('heartbeat_pings').where({ heartbeat_id: kept.id }).whereNotNull('rid').pluck('rid')).map(String))
      t.same(
        acknowledged.filter((a) => !stored.has(a.rid)),
        [],
        `every acknowledged ping is stored (${acknowledged.length} acknowledged, ${byVictim} by the killed instance; ${stored.size} stored)`
      )

      const states = await until(
        async () => db('heartbeats').whereIn('slug', due).pluck('state'),
        (s) => s.length === DUE && s.every((x) => x === 'down'),
        15_000
      )
      t.same(
        states,
        due.map(() => 'down'),
        'every overdue heartbeat is down'
      )
      const sites = await db('heartbeats').whereIn('slug', due).pluck('site_id')
      const perSite = await db('outages').whereIn('site_id', sites).groupBy('site_id').select('site_id').count({ n: '*' })
      t.same(
        perSite.map((r) => Number(r.n)),
        due.map(() => 1),
        'each opened exactly one outage'
      )
      const opened = await db('events').whereIn('site_id', sites).where({ type: 'outage.opened' }).count({ n: '*' })
      t.equal(Number(opened[0]?.n), DUE, 'and one outage.opened each')

      // The survivors take pings: the next one closes its outage.
      t.equal((await ping('due-0')).status, 200, 'a ping through HAProxy after the kill is answered')
      t.equal(String((await api('GET', '/api/v1/heartbeats/due-0')).state), 'up', 'and closes the outage')
      t.equal(Number((await db('outages').whereIn('site_id', sites).whereNull('ended_at').count({ n: '*' }))[0]?.n), DUE - 1)
    }
  )
}
