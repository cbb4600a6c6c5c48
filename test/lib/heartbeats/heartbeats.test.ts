import t from 'tap'
import { sweepDeadlines } from '../../../lib/heartbeats/deadlines.js'
import { addHeartbeat, changeHeartbeat, removeHeartbeat, rotateToken } from '../../../lib/heartbeats/manage.js'
import { recordPing } from '../../../lib/heartbeats/pings.js'
import type { Db } from '../../../lib/store/db.js'
import { findHeartbeat, listPings, prunePings } from '../../../lib/store/heartbeats.js'
import { insertMaintenanceWindow } from '../../../lib/store/maintenance.js'
import { listTrackedSites } from '../../../lib/store/sites.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-29T03:00:00.000Z')
const S = 1000

async function events(db: Db): Promise<Array<{ type: string; data: Record<string, unknown>; site_id: number | null }>> {
  const rows = await db('events').orderBy('id').select('type', 'data', 'site_id')
  return rows.map((r) => ({
    type: String(r.type),
    data: JSON.parse(String(r.data)) as Record<string, unknown>,
    site_id: Number(r.site_id)
  }))
}

async function outages(db: Db, siteId: number): Promise<Array<{ started_at: number; ended_at: number | null }>> {
  const rows = await db('outages').where({ site_id: siteId }).orderBy('id').select('started_at', 'ended_at')
  return rows.map((r) => ({
    started_at: new Date(r.started_at).getTime(),
    ended_at: r.ended_at === null ? null : new Date(r.ended_at).getTime()
  }))
}

for (const engine of engines()) {
  t.test(`heartbeats on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    let clock = T0
    const now = (): Date => new Date(clock)
    const settings = { name: 'Nightly backup', schedule: { every_s: 60 }, grace_s: 30, max_runtime_s: null }

    t.test('pinged on time it stays up; silent it goes late, then down with one outage, closed by the next ping', async (t) => {
      const { row, token } = await addHeartbeat({ db, slug: 'backup', settings, now: now() })
      t.equal(row.state, 'new')
      t.same(await listTrackedSites({ db }), [], 'a heartbeat is no site the scheduler probes')
      for (let i = 0; i < 3; i++) {
        clock = T0 + i * 55 * S
        t.equal((await recordPing({ db, ping: { token, kind: 'success', rid: null }, now }))?.state, 'up')
        await sweepDeadlines({ db, now })
      }
      t.equal((await findHeartbeat({ db, slug: 'backup' }))?.state, 'up')
      const last = clock
      clock = last + 59 * S
      t.equal(await sweepDeadlines({ db, now }), 0, 'nothing is due before its time')
      clock = last + 61 * S
      t.equal(await sweepDeadlines({ db, now }), 1)
      t.equal((await findHeartbeat({ db, slug: 'backup' }))?.state, 'late')
      t.same(await outages(db, row.site_id), [], 'late opens no outage')
      clock = last + 95 * S
      await Promise.all([sweepDeadlines({ db, now }), sweepDeadlines({ db, now })])
      await sweepDeadlines({ db, now })
      t.equal((await findHeartbeat({ db, slug: 'backup' }))?.state, 'down')
      t.same(await outages(db, row.site_id), [{ started_at: last + 90 * S, ended_at: null }], 'one outage, from the end of grace')
      const opened = (await events(db)).filter((e) => e.type === 'outage.opened')
      t.equal(opened.length, 1, 'one outage.opened')
      t.same(opened[0]?.data.heartbeat, { slug: 'backup', name: 'Nightly backup' })
      t.same(opened[0]?.data.monitor, { kind: 'heartbeat', slug: 'backup' })
      clock = last + 200 * S
      t.equal((await recordPing({ db, ping: { token, kind: 'success', rid: null }, now }))?.step, 'close')
      t.same(await outages(db, row.site_id), [{ started_at: last + 90 * S, ended_at: last + 200 * S }])
      const all = await events(db)
      t.same(
        all.map((e) => e.type),
        ['heartbeat.late', 'heartbeat.late_ended', 'outage.opened', 'outage.closed']
      )
      t.match(all[0]?.data, {
        domain: null,
        monitor: { kind: 'heartbeat', slug: 'backup' },
        heartbeat: { slug: 'backup', name: 'Nightly backup' },
        state: 'late',
        due_at: new Date(last + 60 * S).toISOString(),
        down_at: new Date(last + 90 * S).toISOString(),
        at: new Date(last + 60 * S).toISOString()
      })
      t.match(all[1]?.data, { state: 'down', due_at: null, down_at: null, at: new Date(last + 90 * S).toISOString() })
    })

    t.test('late, then pinged within grace: heartbeat.late and heartbeat.late_ended, no outage', async (t) => {
      clock = T0
      const { row, token } = await addHeartbeat({ db, slug: 'tardy', settings, now: now() })
      await recordPing({ db, ping: { token, kind: 'success', rid: null }, now })
      clock = T0 + 70 * S
      await sweepDeadlines({ db, now })
      await sweepDeadlines({ db, now })
      clock = T0 + 80 * S
      t.equal((await recordPing({ db, ping: { token, kind: 'success', rid: null }, now }))?.state, 'up')
      const mine = (await events(db)).filter((e) => e.site_id === row.site_id)
      t.same(
        mine.map((e) => [e.type, e.data.state, e.data.at]),
        [
          ['heartbeat.late', 'late', new Date(T0 + 60 * S).toISOString()],
          ['heartbeat.late_ended', 'up', new Date(T0 + 80 * S).toISOString()]
        ],
        'one each way, late from its due time'
      )
      t.same(await outages(db, row.site_id), [])
    })

    t.test('a failure is down at once; start and end report the run', async (t) => {
      clock = T0
      const { row, token } = await addHeartbeat({ db, slug: 'billing', settings: { ...settings, max_runtime_s: 20 }, now: now() })
      await recordPing({ db, ping: { token, kind: 'start', rid: 'r1' }, now })
      clock += 12 * S
      await recordPing({ db, ping: { token, kind: 'success', rid: 'r1' }, now })
      t.equal((await findHeartbeat({ db, slug: 'billing' }))?.last_run_ms, 12 * S)
      t.same(
        (await listPings({ db, heartbeatId: row.id, limit: 5 })).map((p) => [p.kind, p.rid, p.run_ms]),
        [
          ['success', 'r1', 12 * S],
          ['start', 'r1', null]
        ]
      )
      clock += S
      t.equal((await recordPing({ db, ping: { token, kind: 'fail', rid: null, message: 'exit 3' }, now }))?.state, 'down')
      t.equal((await outages(db, row.site_id)).length, 1)
      t.equal((await findHeartbeat({ db, slug: 'billing' }))?.last_message, 'exit 3')
      clock += S
      await recordPing({ db, ping: { token, kind: 'start', rid: null }, now })
      t.equal(
        (await findHeartbeat({ db, slug: 'billing' }))?.state,
        'down',
        'a start after a failure is still down, as healthchecks.io has it'
      )
      clock += S
      await recordPing({ db, ping: { token, kind: 'success', rid: null }, now })
      t.equal((await findHeartbeat({ db, slug: 'billing' }))?.state, 'up', 'the next success is up')
      t.equal((await outages(db, row.site_id))[0]?.ended_at, clock, 'and ends the outage')
      await recordPing({ db, ping: { token, kind: 'start', rid: null }, now })
      clock += 21 * S
      await sweepDeadlines({ db, now })
      t.equal((await findHeartbeat({ db, slug: 'billing' }))?.state, 'down', 'a run past its max runtime is down')
      t.equal((await outages(db, row.site_id)).length, 2)
    })

    t.test('maintenance silences lateness; pausing stops the deadlines', async (t) => {
      clock = T0
      const { row, token } = await addHeartbeat({ db, slug: 'queue', settings, now: now() })
      await db.transaction((trx) =>
        insertMaintenanceWindow({
          db: trx,
          siteId: row.site_id,
          window: { from: new Date(T0 + 50 * S), to: new Date(T0 + 300 * S), reason: 'upgrade' },
          now: now()
        })
      )
      await recordPing({ db, ping: { token, kind: 'success', rid: null }, now })
      clock = T0 + 200 * S
      await sweepDeadlines({ db, now })
      t.equal((await findHeartbeat({ db, slug: 'queue' }))?.state, 'up', 'inside the window it is not late')
      clock = T0 + 301 * S
      await sweepDeadlines({ db, now })
      t.equal((await findHeartbeat({ db, slug: 'queue' }))?.state, 'late', 'late from the window end')
      await changeHeartbeat({ db, slug: 'queue', patch: { paused: true }, now: now() })
      clock = T0 + 1000 * S
      t.equal((await findHeartbeat({ db, slug: 'queue' }))?.next_deadline, null, 'a paused heartbeat has no deadline')
      await sweepDeadlines({ db, now })
      t.equal((await findHeartbeat({ db, slug: 'queue' }))?.state, 'paused')
      t.same(await outages(db, row.site_id), [])
    })

    t.test('pings older than the retention are pruned, newer ones kept', async (t) => {
      const total = async (): Promise<number> => Number((await db('heartbeat_pings').count({ n: '*' }))[0]?.n)
      const all = await total()
      const older = Number(
        (
          await db('heartbeat_pings')
            .where('at', '<', new Date(T0 + 10 * S))
            .count({ n: '*' })
        )[0]?.n
      )
      t.ok(older > 0 && older < all, 'some pings on each side of the cut')
      t.equal(await prunePings({ db, before: new Date(T0 + 10 * S) }), older)
      t.equal(await total(), all - older)
    })

    t.test('a rotated token replaces the old; removal ends the outage and frees the slug', async (t) => {
      clock = T0
      const first = await addHeartbeat({ db, slug: 'rotate', settings, now: now() })
      const rotated = await rotateToken({ db, slug: 'rotate', now: now() })
      t.not(rotated?.token, first.token)
      t.equal(await recordPing({ db, ping: { token: first.token, kind: 'success', rid: null }, now }), null, 'the old token is unknown')
      await recordPing({ db, ping: { token: rotated?.token ?? '', kind: 'fail', rid: null }, now })
      clock += S
      t.ok(await removeHeartbeat({ db, slug: 'rotate', now: now() }))
      t.same(await outages(db, first.row.site_id), [{ started_at: T0, ended_at: T0 + S }])
      t.notOk(await removeHeartbeat({ db, slug: 'rotate', now: now() }))
      const again = await addHeartbeat({ db, slug: 'rotate', settings, now: now() })
      t.not(again.row.site_id, first.row.site_id, 'a new heartbeat of the slug starts its own history')
    })
  })
}
