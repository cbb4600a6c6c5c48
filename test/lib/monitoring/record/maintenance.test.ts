import t from 'tap'
import { addSite } from '../../../../lib/monitoring/add-sites.js'
import { addMaintenanceWindow, removeMaintenanceWindow } from '../../../../lib/monitoring/maintenance-windows.js'
import { recordCheck, recordChecks } from '../../../../lib/monitoring/record/record-check.js'
import type { MaintenanceWindow } from '../../../../lib/rules/maintenance.js'
import { toDate, type Db } from '../../../../lib/store/db.js'
import { scheduledCheck } from '../../../helpers/checks.js'
import { engines, migratedDb } from '../../../helpers/db.js'

const T0 = Date.parse('2026-11-24T06:00:00.000Z')
const MIN = 60_000
const iso = (ms: number): string => new Date(ms).toISOString()

/** The events recorded, oldest first: type, the check time, and for maintenance its end and reason. */
async function events(db: Db): Promise<string[]> {
  const rows = await db('events').orderBy('id').select('type', 'data')
  return rows
    .filter((r: { type: string }) => r.type.startsWith('maintenance.') || r.type.startsWith('outage.'))
    .map((r: { type: string; data: string }) => {
      const data = JSON.parse(r.data) as { at?: string; until?: string; reason?: string | null; started_at?: string; ended_at?: string }
      return r.type.startsWith('maintenance.')
        ? `${r.type} at ${data.at} until ${data.until} (${data.reason})`
        : `${r.type} ${data.started_at} - ${data.ended_at}`
    })
}

async function outages(db: Db, siteId: number): Promise<Array<[string, string | null]>> {
  const rows = await db('outages').where({ site_id: siteId }).orderBy('id').select('started_at', 'ended_at')
  return rows.map((r: Record<string, unknown>) => [(toDate(r.started_at) as Date).toISOString(), toDate(r.ended_at)?.toISOString() ?? null])
}

async function announcedUntil(db: Db, siteId: number): Promise<string | null> {
  return toDate((await db('sites').where({ id: siteId }).first('maintenance_until')).maintenance_until)?.toISOString() ?? null
}

async function site(db: Db, domain: string): Promise<number> {
  await addSite({ db, entry: { domain, name: null }, now: new Date(T0 - 60 * MIN) })
  return Number((await db('sites').where({ domain }).first('id')).id)
}

async function addWindow(db: Db, domain: string, window: MaintenanceWindow): Promise<number> {
  const added = await addMaintenanceWindow({ db, domain, window, now: new Date(T0 - MIN) })
  if (!added.ok) throw new Error(added.reason)
  return added.window.id
}

for (const engine of engines()) {
  t.test(`inside a window no outage opens and its start and end are announced once each, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const id = await site(db, 'deploy.example.com')
    await addWindow(db, 'deploy.example.com', { from: new Date(T0 + 10 * MIN), to: new Date(T0 + 20 * MIN), reason: 'deploy' })

    await recordCheck({ db, check: scheduledCheck(id, 'up', T0) })
    const inside = await recordCheck({ db, check: scheduledCheck(id, 'down', T0 + 10 * MIN) })
    t.match(inside, { current: true, step: 'none', outage: null }, 'a down check inside the window opens nothing')
    t.equal(await announcedUntil(db, id), iso(T0 + 20 * MIN), "the announced end is on the site's row")
    // In one batch, with a stale one (older than what is recorded) that must change nothing.
    await recordChecks({
      db,
      checks: [
        scheduledCheck(id, 'down', T0 + 11 * MIN),
        scheduledCheck(id, 'down', T0 + 5 * MIN),
        scheduledCheck(id, 'down', T0 + 12 * MIN)
      ]
    })
    t.same(await outages(db, id), [], 'still no outage')
    t.equal(Number((await db('checks').where({ site_id: id }).count({ n: '*' }).first())?.n), 5, 'every check is stored')

    // The window holds its start, not its end: a check at its end is after it.
    const after = await recordCheck({ db, check: scheduledCheck(id, 'down', T0 + 20 * MIN) })
    t.match(after, { step: 'open' }, 'a site still down when the window ends opens an outage at its next check')
    await recordCheck({ db, check: scheduledCheck(id, 'down', T0 + 21 * MIN) })
    await recordCheck({ db, check: scheduledCheck(id, 'up', T0 + 22 * MIN) })
    await recordCheck({ db, check: scheduledCheck(id, 'up', T0 + 22 * MIN), retried: true })
    t.same(await outages(db, id), [[iso(T0 + 20 * MIN), iso(T0 + 22 * MIN)]])
    t.equal(await announcedUntil(db, id), null, 'nothing announced any more')
    t.same(
      await events(db),
      [
        `maintenance.started at ${iso(T0 + 10 * MIN)} until ${iso(T0 + 20 * MIN)} (deploy)`,
        `maintenance.ended at ${iso(T0 + 20 * MIN)} until ${iso(T0 + 20 * MIN)} (deploy)`,
        `outage.opened ${iso(T0 + 20 * MIN)} - null`,
        `outage.closed ${iso(T0 + 20 * MIN)} - ${iso(T0 + 22 * MIN)}`
      ],
      'each once, in the order they happened: the maintenance ends before the outage opens'
    )
    const [started] = await db('events').where({ type: 'maintenance.started' }).select('site_id')
    t.equal(Number(started.site_id), id, 'the event names its site (pages, webhook filters)')
  })

  t.test(`an outage open when a window starts stays open and closes as usual, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const id = await site(db, 'broken.example.com')
    await recordCheck({ db, check: scheduledCheck(id, 'down', T0 + 5 * MIN) })
    await addWindow(db, 'broken.example.com', { from: new Date(T0 + 10 * MIN), to: new Date(T0 + 20 * MIN), reason: null })
    await recordChecks({
      db,
      checks: [
        scheduledCheck(id, 'down', T0 + 10 * MIN),
        scheduledCheck(id, 'up', T0 + 12 * MIN),
        scheduledCheck(id, 'down', T0 + 13 * MIN),
        scheduledCheck(id, 'down', T0 + 19 * MIN)
      ]
    })
    t.same(
      await outages(db, id),
      [[iso(T0 + 5 * MIN), iso(T0 + 12 * MIN)]],
      'closed by the up check inside the window, none opened after it'
    )
    t.same(await events(db), [
      `outage.opened ${iso(T0 + 5 * MIN)} - null`,
      `maintenance.started at ${iso(T0 + 10 * MIN)} until ${iso(T0 + 20 * MIN)} (null)`,
      `outage.closed ${iso(T0 + 5 * MIN)} - ${iso(T0 + 12 * MIN)}`
    ])
  })

  t.test(`windows added, joined and removed while a site is checked, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const id = await site(db, 'weekly.example.com')
    // Tuesdays 02:00 Berlin (01:00 UTC in November) for 30 minutes, and a one-off right after it.
    await addWindow(db, 'weekly.example.com', {
      weekly: { day: 'tue', time: '02:00', duration_minutes: 30, zone: 'Europe/Berlin' },
      reason: 'weekly'
    })
    const tuesday = Date.parse('2026-11-24T01:00:00.000Z')
    const extra = await addWindow(db, 'weekly.example.com', {
      from: new Date(tuesday + 30 * MIN),
      to: new Date(tuesday + 45 * MIN),
      reason: 'overrun'
    })
    await recordCheck({ db, check: scheduledCheck(id, 'down', tuesday + 29 * MIN) })
    t.equal(await announcedUntil(db, id), iso(tuesday + 45 * MIN), 'touching windows are one maintenance')
    await removeMaintenanceWindow({ db, domain: 'weekly.example.com', id: extra, now: new Date(tuesday + 30 * MIN) })
    await recordCheck({ db, check: scheduledCheck(id, 'down', tuesday + 31 * MIN) })
    t.equal((await outages(db, id)).length, 1, 'the window removed, the next down check opens an outage')
    await recordCheck({ db, check: scheduledCheck(id, 'up', tuesday + 32 * MIN) })

    // A week later: the weekly window again, started and ended once more.
    const next = tuesday + 7 * 24 * 60 * MIN
    await recordCheck({ db, check: scheduledCheck(id, 'down', next + MIN) })
    await recordCheck({ db, check: scheduledCheck(id, 'down', next + 2 * MIN) })
    await recordCheck({ db, check: scheduledCheck(id, 'down', next + 31 * MIN) })
    t.same(await events(db), [
      `maintenance.started at ${iso(tuesday + 29 * MIN)} until ${iso(tuesday + 45 * MIN)} (weekly)`,
      `maintenance.ended at ${iso(tuesday + 31 * MIN)} until ${iso(tuesday + 31 * MIN)} (null)`,
      `outage.opened ${iso(tuesday + 31 * MIN)} - null`,
      `outage.closed ${iso(tuesday + 31 * MIN)} - ${iso(tuesday + 32 * MIN)}`,
      `maintenance.started at ${iso(next + MIN)} until ${iso(next + 30 * MIN)} (weekly)`,
      `maintenance.ended at ${iso(next + 31 * MIN)} until ${iso(next + 30 * MIN)} (weekly)`,
      `outage.opened ${iso(next + 31 * MIN)} - null`
    ])
  })

  t.test(`instances recording one site at once announce its maintenance once, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const ids = await Promise.all(['a', 'b', 'c'].map((n) => site(db, `${n}.example.com`)))
    for (const domain of ['a', 'b', 'c']) {
      await addWindow(db, `${domain}.example.com`, { from: new Date(T0), to: new Date(T0 + 10 * MIN), reason: null })
    }
    // Each "instance" records its own checks of every site; the row locks put them in some order.
    await Promise.all(
      [1, 2, 3, 4].map((n) =>
        recordChecks({ db, checks: ids.map((id) => scheduledCheck(id, 'down', T0 + n * 1000)), writer: `instance ${n}` })
      )
    )
    const started = await db('events').where({ type: 'maintenance.started' }).select('site_id')
    t.same(started.map((r: { site_id: unknown }) => Number(r.site_id)).sort(), [...ids].sort(), 'one start per site')
    t.equal(Number((await db('outages').count({ n: '*' }).first())?.n), 0)
  })
}
