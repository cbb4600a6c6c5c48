import t from 'tap'
import { sweepDeadlines } from '../../../lib/heartbeats/deadlines.js'
import { addHeartbeat, changeHeartbeat } from '../../../lib/heartbeats/manage.js'
import { recordPing } from '../../../lib/heartbeats/pings.js'
import { migrateDownOne, migrateLatest } from '../../../lib/store/migrate.js'
import { findHeartbeat, listAllHeartbeats, listHeartbeats } from '../../../lib/store/heartbeats.js'
import { migrations } from '../../../migrations/index.js'
import { engines, migratedDb } from '../../helpers/db.js'

const S = 1000
const MIN = 60 * S
const iso = (d: Date | null | undefined): string | null => d?.toISOString() ?? null

for (const engine of engines()) {
  t.test(`cron heartbeats on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    // 03:00 in Berlin is 02:00 UTC in winter.
    let clock = Date.parse('2026-11-29T02:00:05.000Z')
    const now = (): Date => new Date(clock)
    const nightly = { cron: '0 3 * * *', zone: 'Europe/Berlin' }

    t.test('a cron schedule is stored, read back and changed to and from every_s', async (t) => {
      const { row } = await addHeartbeat({
        db,
        slug: 'stored',
        settings: { name: 'Stored', schedule: nightly, grace_s: 600, max_runtime_s: null },
        now: now()
      })
      t.same(row.schedule, nightly)
      t.same((await findHeartbeat({ db, slug: 'stored' }))?.schedule, nightly, 'found with its cron and zone')
      t.match(await db('heartbeats').where({ slug: 'stored' }).first('every_s', 'cron', 'zone'), { every_s: 0, ...nightly })
      await changeHeartbeat({ db, slug: 'stored', patch: { schedule: { every_s: 120 } }, now: now() })
      t.same((await findHeartbeat({ db, slug: 'stored' }))?.schedule, { every_s: 120 })
      t.match(
        await db('heartbeats').where({ slug: 'stored' }).first('every_s', 'cron', 'zone'),
        { every_s: 120, cron: null, zone: null },
        'a simple schedule clears the cron columns'
      )
      const weekly = { cron: '30 4 * * 1', zone: 'America/New_York' }
      await changeHeartbeat({ db, slug: 'stored', patch: { schedule: weekly }, now: now() })
      t.same((await listHeartbeats({ db, limit: 10 })).find((h) => h.slug === 'stored')?.schedule, weekly, 'listed with it')
      t.same((await listAllHeartbeats({ db })).find((h) => h.slug === 'stored')?.schedule, weekly)
    })

    t.test('pinged at 03:00:05 Berlin it is due at the next 03:00, late then, down after grace, up at the next ping', async (t) => {
      clock = Date.parse('2026-11-29T02:00:05.000Z')
      const { row, token } = await addHeartbeat({
        db,
        slug: 'nightly',
        settings: { name: 'Nightly', schedule: nightly, grace_s: 1800, max_runtime_s: null },
        now: now()
      })
      t.equal((await recordPing({ db, ping: { token, kind: 'success', rid: null }, now }))?.state, 'up')
      const due = Date.parse('2026-11-30T02:00:00.000Z')
      t.equal(iso((await findHeartbeat({ db, slug: 'nightly' }))?.next_deadline), new Date(due).toISOString(), 'the next 03:00 in Berlin')
      const state = async (): Promise<string | undefined> => (await findHeartbeat({ db, slug: 'nightly' }))?.state
      clock = due - S
      await sweepDeadlines({ db, now })
      t.equal(await state(), 'up', 'a second before its time')
      clock = due + MIN
      await sweepDeadlines({ db, now })
      t.equal(await state(), 'late', 'late from 03:00')
      t.equal(
        iso((await findHeartbeat({ db, slug: 'nightly' }))?.next_deadline),
        new Date(due + 30 * MIN).toISOString(),
        'down at the grace end'
      )
      clock = due + 31 * MIN
      await sweepDeadlines({ db, now })
      t.equal(await state(), 'down')
      const outages = await db('outages').where({ site_id: row.site_id }).select('started_at', 'ended_at')
      t.equal(outages.length, 1, 'one outage')
      t.equal(new Date(outages[0].started_at).getTime(), due + 30 * MIN, 'from the end of grace')
      clock = due + 40 * MIN
      t.equal((await recordPing({ db, ping: { token, kind: 'success', rid: null }, now }))?.step, 'close', 'the next success closes it')
      t.equal(
        iso((await findHeartbeat({ db, slug: 'nightly' }))?.next_deadline),
        '2026-12-01T02:00:00.000Z',
        "a ping after 03:00 is for that night's run: due the next night"
      )
    })

    t.test('across the autumn change the next 03:00 is 25 hours on, stored so', async (t) => {
      clock = Date.parse('2026-10-24T01:00:00.000Z')
      const { token } = await addHeartbeat({
        db,
        slug: 'autumn',
        settings: { name: 'Autumn', schedule: nightly, grace_s: 60, max_runtime_s: null },
        now: now()
      })
      await recordPing({ db, ping: { token, kind: 'success', rid: null }, now })
      const next = (await findHeartbeat({ db, slug: 'autumn' }))?.next_deadline?.getTime()
      t.equal(next, clock + 25 * 60 * MIN)
    })
  })
}

for (const engine of engines()) {
  t.test(`migration 21 down removes cron heartbeats as the API would, keeping their history, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const now = new Date('2026-11-29T02:00:00.000Z')
    const every = { name: 'Every', schedule: { every_s: 60 }, grace_s: 30, max_runtime_s: null }
    await addHeartbeat({ db, slug: 'every', settings: every, now })
    const cron = await addHeartbeat({
      db,
      slug: 'cron',
      settings: { ...every, name: 'Cron', schedule: { cron: '0 3 * * *', zone: 'Europe/Berlin' } },
      now
    })
    const later = migrations.slice(migrations.findIndex((m) => m.name === '20261129-21-heartbeat-cron')).map((m) => m.name)
    const reverted: string[] = []
    for (let i = 0; i < later.length; i++) reverted.push(...(await migrateDownOne(db)))
    t.same(reverted, [...later].reverse())
    t.same(await db('heartbeats').orderBy('slug').pluck('slug'), ['every'], 'the simple one stays')
    const site: { domain: string; removed_at: unknown } = await db('sites').where({ id: cron.row.site_id }).first('domain', 'removed_at')
    t.equal(site.domain, `heartbeat:cron~${cron.row.site_id}`, 'its sites row stays, its slug freed')
    t.not(site.removed_at, null, 'marked removed')
    await migrateLatest(db)
    t.same((await findHeartbeat({ db, slug: 'every' }))?.schedule, { every_s: 60 }, 'and reads back after up')
  })
}
