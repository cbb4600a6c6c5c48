import t from 'tap'
import { recordCheck, recordChecks } from '../../../../lib/monitoring/record/record-check.js'
import { removeSite } from '../../../../lib/monitoring/remove-site.js'
import type { CheckRecord } from '../../../../lib/store/checks.js'
import type { Db } from '../../../../lib/store/db.js'
import { toDate } from '../../../../lib/store/db.js'
import { addSite } from '../../../../lib/monitoring/add-sites.js'
import { scheduledCheck } from '../../../helpers/checks.js'
import { engines, migratedDb } from '../../../helpers/db.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')

const check = scheduledCheck

for (const engine of engines()) {
  t.test(`a retried write whose first attempt was committed is not stored twice, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'retry.example.com', name: null }, now: new Date(T0 - 60_000) })
    const siteId = Number((await db('sites').first('id')).id)

    const opened = await recordCheck({ db, check: check(siteId, 'down', T0) })
    t.equal(opened.step, 'open')
    // The connection was lost after the commit: the recorder cannot tell, and writes it again.
    const again = await recordCheck({ db, check: check(siteId, 'down', T0), retried: true })
    t.same(again, opened, 'the retry reports the outage the first attempt opened')
    t.equal((await db('checks')).length, 1, 'one check row')

    const closed = await recordCheck({ db, check: check(siteId, 'up', T0 + 60_000) })
    t.equal(closed.step, 'close')
    t.same(
      await recordCheck({ db, check: check(siteId, 'up', T0 + 60_000), retried: true }),
      closed,
      'and the outage the first attempt closed'
    )
    const plain = await recordCheck({ db, check: check(siteId, 'up', T0 + 120_000) })
    t.same(await recordCheck({ db, check: check(siteId, 'up', T0 + 120_000), retried: true }), plain, 'and a check that changed no outage')
    t.equal((await db('checks')).length, 3, 'still one row per check')
    const outages = await db('outages')
    t.equal(outages.length, 1)
    t.equal(toDate(outages[0].started_at)?.getTime(), T0)
    t.equal(toDate(outages[0].ended_at)?.getTime(), T0 + 60_000)

    const fresh = await recordCheck({ db, check: check(siteId, 'down', T0 + 180_000), retried: true })
    t.equal(fresh.step, 'open', 'a retry of a write that never landed records it normally')
    t.equal((await db('checks')).length, 4)
  })
}

const MIN = 60_000

/** Three sites: one flapping, one with a check arriving late, one removed before its checks land. */
async function batchFixture(db: Db): Promise<{ checks: CheckRecord[]; ids: number[] }> {
  for (const domain of ['flap.example.com', 'late.example.com', 'gone.example.com']) {
    await addSite({ db, entry: { domain, name: null }, now: new Date(T0 - MIN) })
  }
  const ids = (await db('sites').orderBy('id').pluck('id')).map(Number)
  const [flap, late, gone] = ids as [number, number, number]
  await recordCheck({ db, check: check(flap, 'down', T0 - 30_000) })
  await removeSite({ db, domain: 'gone.example.com', now: new Date(T0) })
  const checks = [
    check(flap, 'down', T0),
    check(late, 'up', T0 + MIN),
    check(flap, 'up', T0 + MIN),
    check(gone, 'down', T0 + MIN),
    check(flap, 'unconfirmed', T0 + 2 * MIN),
    check(late, 'down', T0 + 30_000),
    check(flap, 'down', T0 + 3 * MIN),
    check(late, 'down', T0 + 3 * MIN),
    check(flap, 'up', T0 + 4 * MIN),
    check(flap, 'down', T0 + 5 * MIN)
  ]
  return { checks, ids }
}

async function contents(db: Db): Promise<unknown> {
  const outages = (await db('outages').orderBy('id').select('id', 'site_id', 'started_at', 'ended_at', 'open_site_id')).map((o) => ({
    ...o,
    started_at: toDate(o.started_at)?.getTime(),
    ended_at: toDate(o.ended_at)?.getTime() ?? null
  }))
  const sites = (await db('sites').orderBy('id').select('id', 'status', 'checked_at', 'response_ms')).map((r) => ({
    ...r,
    checked_at: toDate(r.checked_at)?.getTime() ?? null
  }))
  const checks = (await db('checks').orderBy(['site_id', 'checked_at']).select('site_id', 'checked_at', 'status')).map((c) => ({
    ...c,
    checked_at: toDate(c.checked_at)?.getTime()
  }))
  return { outages, sites, checks }
}

for (const engine of engines()) {
  t.test(`a batch does exactly what one transaction per check does, in each site's order, on ${engine}`, async (t) => {
    const one = (await migratedDb(engine, t)).db
    const batched = (await migratedDb(engine, t)).db
    const { checks } = await batchFixture(one)
    await batchFixture(batched)
    const singly = []
    for (const c of checks) singly.push(await recordCheck({ db: one, check: c }))
    const together = await recordChecks({ db: batched, checks })
    t.same(together, singly, 'each check reports the same step, outage and currency')
    t.same(await contents(batched), await contents(one), 'and leaves the same checks, sites and outages')
    t.same(
      together.map((r) => r?.step),
      ['none', 'none', 'close', 'none', 'none', 'none', 'open', 'open', 'close', 'open']
    )
    t.equal(together[5]?.current, false, 'the late check changed nothing')
  })

  t.test(`a retried batch whose first attempt was committed is not stored twice, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const { checks } = await batchFixture(db)
    const first = await recordChecks({ db, checks })
    const before = await contents(db)
    t.same(await recordChecks({ db, checks, retried: true }), first, 'the retry reports what the committed attempt did')
    t.same(await contents(db), before, 'and writes nothing more')
  })
}

/** The outbox as stored: each event's id, type, site and parsed payload. */
async function storedEvents(db: Db): Promise<Array<{ id: number; type: string; site_id: number | null; data: any }>> {
  const rows = await db('events').orderBy('id').select('id', 'type', 'site_id', 'data')
  return rows.map((r) => ({
    id: Number(r.id),
    type: String(r.type),
    site_id: r.site_id === null ? null : Number(r.site_id),
    data: JSON.parse(r.data)
  }))
}

for (const engine of engines()) {
  t.test(`a batch announces each outage it opens or closes, once, in the batch's order, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const { checks, ids } = await batchFixture(db)
    await db('events').delete()
    const [flap, late] = ids as [number, number]
    await db('sites').where({ id: flap }).update({ name: 'Flapper' })
    await recordChecks({ db, checks })
    const events = await storedEvents(db)
    t.same(
      events.map((e) => [e.type, e.site_id]),
      [
        ['outage.closed', flap],
        ['outage.opened', flap],
        ['outage.opened', late],
        ['outage.closed', flap],
        ['outage.opened', flap]
      ]
    )
    t.same(events[0]?.data, {
      domain: 'flap.example.com',
      name: 'Flapper',
      started_at: new Date(T0 - 30_000).toISOString(),
      ended_at: new Date(T0 + MIN).toISOString(),
      duration_seconds: 90,
      site: { domain: 'flap.example.com', name: 'Flapper' }
    })
    t.same(events[2]?.data, {
      domain: 'late.example.com',
      name: 'late.example.com',
      started_at: new Date(T0 + 3 * MIN).toISOString(),
      ended_at: null,
      duration_seconds: 0,
      site: { domain: 'late.example.com', name: 'late.example.com' }
    })
    t.same(
      events.map((e) => e.id),
      events.map((_, i) => (events[0]?.id ?? 0) + i),
      'ids without gaps'
    )
  })

  t.test(`a retried batch announces once, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const { checks } = await batchFixture(db)
    await recordChecks({ db, checks })
    const before = await storedEvents(db)
    await recordChecks({ db, checks, retried: true })
    t.same(await storedEvents(db), before, 'the committed attempt announced it; the retry adds nothing')
  })

  t.test(`a batch rolled back announces nothing and records nothing, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const { checks } = await batchFixture(db)
    const before = await contents(db)
    const events = await storedEvents(db)
    // A row in the way of the next id makes the append, the batch's last write, fail.
    const next = Number((await db('event_sequence').first('last_id')).last_id) + 1
    await db('events').insert({ id: next, type: 'site.added', site_id: null, data: '{}', created_at: new Date(T0) })
    await t.rejects(recordChecks({ db, checks }))
    t.same(await contents(db), before, 'no check, outage or state change committed')
    t.same((await storedEvents(db)).slice(0, -1), events, 'and no event')
    t.equal(Number((await db('event_sequence').first('last_id')).last_id), next - 1, 'the sequence rolled back too')
  })
}

for (const engine of engines()) {
  t.test(`the first recorded check of a tracking period is kept on the site's row, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'first.example.com', name: null }, now: new Date(T0 - 30_000) })
    await addSite({ db, entry: { domain: 'batch.example.com', name: null }, now: new Date(T0 - 30_000) })
    const [siteId, batchId] = (await db('sites').orderBy('id').pluck('id')).map(Number) as [number, number]
    const firstOf = async (id: number) => toDate((await db('sites').where({ id }).first('first_checked_at')).first_checked_at)

    t.equal(await firstOf(siteId), null, 'none before any check')
    await recordCheck({ db, check: check(siteId, 'down', T0) })
    t.equal((await firstOf(siteId))?.getTime(), T0, 'set by the first check')
    await recordCheck({ db, check: check(siteId, 'up', T0 + MIN) })
    await recordCheck({ db, check: check(siteId, 'up', T0 - MIN) })
    t.equal((await firstOf(siteId))?.getTime(), T0, 'later checks, and a stale one, leave it')

    await recordChecks({ db, checks: [check(batchId, 'up', T0 + 2 * MIN), check(batchId, 'down', T0 + 3 * MIN)] })
    t.equal((await firstOf(batchId))?.getTime(), T0 + 2 * MIN, 'the earliest check of a first batch')

    await removeSite({ db, domain: 'first.example.com', now: new Date(T0 + 5 * MIN) })
    await addSite({ db, entry: { domain: 'first.example.com', name: null }, now: new Date(T0 + 10 * MIN) })
    t.equal(await firstOf(siteId), null, 'tracked again: a new period, no check yet')
    await recordCheck({ db, check: check(siteId, 'up', T0 + 11 * MIN) })
    t.equal((await firstOf(siteId))?.getTime(), T0 + 11 * MIN, 'its first check starts it')
  })
}

for (const engine of engines()) {
  t.test(`a slow spell begins and ends with exactly one event each, kept on the site's row, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({
      db,
      entry: {
        domain: 'slow.example.com',
        name: 'Slow',
        settings: { interval_s: null, expect: { status: null, body_contains: null, max_response_ms: 500 }, check: null }
      },
      now: new Date(T0 - MIN)
    })
    const siteId = Number((await db('sites').first('id')).id)
    await db('events').delete()
    const timed = (i: number, ms: number | null, status: CheckRecord['status'] = 'up'): CheckRecord => ({
      ...check(siteId, status, T0 + i * MIN),
      responseMs: ms
    })
    // One slow check alone, then a down check in a slow streak, then two slow in a row; in batches and one by one.
    const seen: boolean[] = []
    for (const batch of [[timed(0, 900), timed(1, 100)], [timed(2, 900)], [timed(3, null, 'down'), timed(4, 900)], [timed(5, 950)]]) {
      for (const r of await recordChecks({ db, checks: batch })) seen.push(Boolean(r?.slow))
    }
    t.same(
      seen,
      [false, false, false, false, false, true],
      'slow after the second slow up check in a row, a down one between breaking the streak'
    )
    t.same(
      await db('sites')
        .where({ id: siteId })
        .first('slow', 'slow_streak')
        .then((r) => [Boolean(r.slow), Number(r.slow_streak)]),
      [true, 0]
    )
    const again = await recordChecks({ db, checks: [timed(6, 100), timed(7, 2000), timed(8, 100), timed(9, 120), timed(10, 90)] })
    t.same(
      again.map((r) => r?.slow),
      [true, true, true, false, false],
      'ends after two fast checks in a row, not one'
    )
    const events = (await storedEvents(db)).filter((e) => e.type.startsWith('site.slow'))
    t.same(
      events.map((e) => [e.type, e.site_id]),
      [
        ['site.slow', siteId],
        ['site.slow_ended', siteId]
      ]
    )
    t.same(events[0]?.data, {
      site: { domain: 'slow.example.com', name: 'Slow' },
      response_ms: 950,
      max_response_ms: 500,
      at: new Date(T0 + 5 * MIN).toISOString()
    })
    const all = (await storedEvents(db)).length
    await recordChecks({ db, checks: [timed(9, 120), timed(10, 90)], retried: true })
    t.equal((await storedEvents(db)).length, all, 'a retried write announces nothing again')

    await recordChecks({ db, checks: [timed(11, 900), timed(12, 900)] })
    await db('sites').where({ id: siteId }).update({ max_response_ms: null })
    const cleared = await recordChecks({ db, checks: [timed(13, 900)] })
    t.equal(cleared[0]?.slow, false, 'a threshold cleared ends the spell at the next check')
    t.same(
      (await storedEvents(db))
        .filter((e) => e.type.startsWith('site.slow'))
        .slice(2)
        .map((e) => [e.type, (e.data as { max_response_ms: unknown }).max_response_ms]),
      [
        ['site.slow', 500],
        ['site.slow_ended', null]
      ]
    )
  })
}
