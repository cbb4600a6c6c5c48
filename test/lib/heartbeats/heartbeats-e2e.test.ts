import t from 'tap'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKey, hashKey } from '../../../lib/keys.js'
import { openDb, toDate, type Db } from '../../../lib/store/db.js'
import { createKey } from '../../../lib/store/keys.js'
import { startServe } from '../../helpers/cli.js'
import { createMigratedDatabase, engines } from '../../helpers/db.js'
import { until } from '../../helpers/poll.js'

type Json = Record<string, any>

/**
 * Time passing for one heartbeat without waiting for it: its last pings and its deadline move
 * `ms` into the past, as if that long had gone by since (every_s is at least 30 s by the API).
 */
async function age(db: Db, slug: string, ms: number): Promise<void> {
  const row = await db('heartbeats').where({ slug }).first('last_ping_at', 'last_success_at', 'next_deadline')
  const back = (v: unknown): Date | null => {
    const at = toDate(v)
    return at === null ? null : new Date(at.getTime() - ms)
  }
  await db('heartbeats')
    .where({ slug })
    .update({ last_ping_at: back(row.last_ping_at), last_success_at: back(row.last_success_at), next_deadline: back(row.next_deadline) })
}

for (const engine of engines()) {
  t.test(
    `heartbeats end to end on ${engine}: up, late, down with one outage, closed; fail; kill -9 after an acknowledged ping`,
    async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'site-status-heartbeats-'))
      t.teardown(() => {
        rmSync(dir, { recursive: true, force: true })
      })
      const test = await createMigratedDatabase(engine)
      t.teardown(() => test.cleanup())
      const db = openDb(test.url)
      t.teardown(() => db.destroy())
      const key = generateKey()
      await createKey({ db, name: 'ops', keyHash: hashKey(key), rateLimit: null, scopes: 'read,manage', now: new Date() })
      const env = { DATABASE_URL: test.url, INSTANCE_ID: `hb-${engine}`, LOCATIONS: '[{"label":"Loopback 1, Test"}]', LOG_LEVEL: 'info' }
      const first = await startServe(t, { env, cwd: dir })
      const api = async (uri: string, method: string, path: string, body?: unknown): Promise<Json> => {
        const res = await fetch(`${uri}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        return (await res.json()) as Json
      }
      const created = await api(first.uri, 'POST', '/api/v1/heartbeats', { name: 'backup', schedule: { every_s: 30 }, grace_s: 5 })
      const pingPath = new URL(created.ping_url as string).pathname
      const ping = async (uri: string, suffix = '', body?: string): Promise<Response> =>
        fetch(`${uri}${pingPath}${suffix}`, { method: body === undefined ? 'GET' : 'POST', ...(body === undefined ? {} : { body }) })
      const state = async (uri: string): Promise<string> => String((await api(uri, 'GET', '/api/v1/heartbeats/backup')).state)
      const outages = async () =>
        db('outages').join('heartbeats as h', 'h.site_id', 'outages.site_id').select('outages.started_at', 'outages.ended_at')
      const events = async () =>
        (await db('events').orderBy('id').select('type', 'data')).map((e) => ({ type: e.type, data: JSON.parse(e.data) }))

      for (let i = 0; i < 3; i++) t.equal(await (await ping(first.uri)).text(), 'OK')
      t.equal(await state(first.uri), 'up', 'pinged on time: up')
      await age(db, 'backup', 20_000)
      t.equal(
        await until(
          () => state(first.uri),
          (s) => s !== 'up',
          2500
        ),
        'up',
        'still within its period: up, after the loop has looked twice'
      )
      await age(db, 'backup', 11_000)
      t.equal(
        await until(
          () => state(first.uri),
          (s) => s === 'late',
          5000
        ),
        'late',
        'past due: late'
      )
      t.same(await outages(), [], 'late opens no outage')
      await age(db, 'backup', 5_000)
      t.equal(
        await until(
          () => state(first.uri),
          (s) => s === 'down',
          5000
        ),
        'down',
        'past grace: down'
      )
      t.equal((await outages()).length, 1, 'one outage')
      const opened = (await events()).filter((e) => e.type === 'outage.opened')
      t.equal(opened.length, 1, 'one outage.opened')
      t.match(opened[0]?.data, { monitor: { kind: 'heartbeat', slug: 'backup' }, heartbeat: { slug: 'backup', name: 'backup' } })
      t.equal((await ping(first.uri)).status, 200)
      t.equal(await state(first.uri), 'up', 'the next ping: up')
      t.notOk((await outages())[0]?.ended_at === null, 'the outage is closed')
      t.same(
        (await events()).map((e) => e.type),
        ['heartbeat.late', 'heartbeat.late_ended', 'outage.opened', 'outage.closed'],
        'late, then down: its lateness ends as its outage opens'
      )

      t.equal((await ping(first.uri, '/fail')).status, 200)
      t.equal(await state(first.uri), 'down', '/fail is down at once')
      t.equal((await outages()).length, 2)
      await ping(first.uri)

      // Pings in flight when the instance is killed: each one answered OK is stored.
      const before = Number((await db('heartbeat_pings').count({ n: '*' }))[0]?.n)
      let acknowledged = 0
      const gone = once(first.child, 'exit')
      const flight = Array.from({ length: 20 }, async (_, i) => {
        try {
          const res = await ping(first.uri, '', `run ${i}`)
          if ((await res.text()) === 'OK') {
            acknowledged++
            if (acknowledged === 5) first.child.kill('SIGKILL')
          }
        } catch {
          // Cut by the kill: not acknowledged.
        }
      })
      await Promise.all(flight)
      await gone
      t.ok(acknowledged >= 5, `${acknowledged} pings acknowledged before the kill`)
      const after = Number((await db('heartbeat_pings').count({ n: '*' }))[0]?.n)
      t.ok(after - before >= acknowledged, `every acknowledged ping is stored (${after - before} stored, ${acknowledged} acknowledged)`)
      const second = await startServe(t, { env, cwd: dir })
      t.equal(await state(second.uri), 'up', 'the restarted instance reads the state the pings left')
      t.match((await api(second.uri, 'GET', '/api/v1/heartbeats/backup')).last_message, /^run \d+$/)
    }
  )
}
