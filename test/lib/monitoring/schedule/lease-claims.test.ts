import t, { type Test } from 'tap'
import { claimDueChecks, keepOwnClaims, scheduleNewSites, takeOverClaims } from '../../../../lib/monitoring/schedule/lease-claims.js'
import { addSites } from '../../../../lib/monitoring/add-sites.js'
import { phaseOf } from '../../../../lib/monitoring/schedule/phase-wheel.js'
import { SiteIntervals } from '../../../../lib/monitoring/schedule/site-intervals.js'
import { openDb, toDate, type Db } from '../../../../lib/store/db.js'
import { migratedDb } from '../../../helpers/db.js'

// Leases are how several instances share one MySQL database; SQLite keeps one instance and its phase wheel.
const I = 60_000
const CYCLE = 1_000_000 * I

async function sites(t: Test, n: number): Promise<{ db: Db; url: string; domains: string[] }> {
  const { db, url } = await migratedDb('mysql', t)
  const domains = Array.from({ length: n }, (_, i) => `site${i}.example.com`)
  await addSites({ db, entries: domains.map((domain) => ({ domain, name: null })), now: new Date(CYCLE) })
  return { db, url, domains }
}

async function rows(db: Db): Promise<Map<string, { due: number | null; owner: string | null; until: number | null }>> {
  const all = await db('sites').select('domain', 'due_at', 'lease_owner', 'lease_until')
  return new Map(
    all.map((r) => [
      String(r.domain),
      {
        due: toDate(r.due_at)?.getTime() ?? null,
        owner: r.lease_owner === null ? null : String(r.lease_owner),
        until: toDate(r.lease_until)?.getTime() ?? null
      }
    ])
  )
}

t.test('new sites are first due at their phase, and scheduled once', async (t) => {
  const { db, domains } = await sites(t, 50)
  t.equal(await scheduleNewSites({ db, now: CYCLE + 1, intervalMs: I, limit: 1000 }), 50)
  for (const [domain, row] of await rows(db)) {
    const phase = phaseOf(domain, I)
    t.equal(row.due, phase >= 1 ? CYCLE + phase : CYCLE + I + phase, `${domain} at its phase`)
  }
  t.equal(await scheduleNewSites({ db, now: CYCLE + 2, intervalMs: I, limit: 1000 }), 0, 'nothing left to schedule')
  t.equal(domains.length, 50)
})

t.test("new sites beyond one statement's limit are all scheduled in the same round, against the same now", async (t) => {
  const { db } = await sites(t, 250)
  t.equal(await scheduleNewSites({ db, now: CYCLE + 1, intervalMs: I, limit: 100 }), 250, 'three statements, one round')
  for (const [domain, row] of await rows(db)) {
    const phase = phaseOf(domain, I)
    t.equal(row.due, phase >= 1 ? CYCLE + phase : CYCLE + I + phase, `${domain} at its phase in this interval`)
  }
})

t.test('due times set under a much longer interval are scheduled again at their phase in the shorter one', async (t) => {
  const { db } = await sites(t, 40)
  const DAY = 86_400_000
  await scheduleNewSites({ db, now: CYCLE + 1, intervalMs: DAY, limit: 1000 })
  const far = [...(await rows(db)).values()].filter((r) => (r.due ?? 0) > CYCLE + 1 + 2 * I).length
  t.ok(far > 30, `${far} of 40 due two short intervals ahead or more under a day's interval`)
  t.equal(await scheduleNewSites({ db, now: CYCLE + 1, intervalMs: I, limit: 1000 }), far, 'those are scheduled again')
  t.equal([...(await rows(db)).values()].filter((r) => (r.due ?? 0) > CYCLE + 1 + 2 * I).length, 0, 'none waits two intervals or more')
})

t.test('two instances claiming at once each get checks of their own, all of those due and none of the others', async (t) => {
  const { db, url, domains } = await sites(t, 400)
  await scheduleNewSites({ db, now: CYCLE, intervalMs: I, limit: 1000 })
  const other = openDb(url)
  t.teardown(() => other.destroy())
  const now = CYCLE + I / 2
  const horizon = now + 1000
  const due = [...(await rows(db))].filter(([, r]) => (r.due as number) <= horizon).map(([d]) => d)
  t.ok(due.length > 100 && due.length < 400, `${due.length} due by the horizon`)
  // Small batches, many rounds, both at once: SKIP LOCKED must keep them apart.
  const claimAll = async (conn: Db, owner: string): Promise<string[]> => {
    const got: string[] = []
    for (;;) {
      const { claims } = await claimDueChecks({ db: conn, owner, now, horizon, intervalMs: I, limit: 7 })
      got.push(...claims.map((c) => c.site.domain))
      if (claims.length === 0) return got
    }
  }
  const [a, b] = await Promise.all([claimAll(db, 'a'), claimAll(other, 'b')])
  t.same([...a, ...b].sort(), [...due].sort(), 'together they claimed every due check once')
  t.ok(a.length > 0 && b.length > 0, `both got some (${a.length} and ${b.length})`)
  const after = await rows(db)
  for (const domain of due) {
    const row = after.get(domain)
    const phase = phaseOf(domain, I)
    t.same(
      row,
      { due: CYCLE + I + phase, owner: a.includes(domain) ? 'a' : 'b', until: CYCLE + I + phase },
      `${domain}: next due an interval later, claimed until then`
    )
  }
  t.same(
    await claimDueChecks({ db, owner: 'a', now, horizon, intervalMs: I, limit: 1000 }),
    { claims: [], passed: [] },
    'claimed checks are not claimed again'
  )
  t.equal(domains.length, 400)
})

t.test('a check overdue by an interval or more is passed over for the next one, at its phase', async (t) => {
  const { db } = await sites(t, 1)
  await db('sites').update({ due_at: new Date(CYCLE) })
  const near = await claimDueChecks({ db, owner: 'a', now: CYCLE + 2.5 * I, horizon: CYCLE + 3 * I, intervalMs: I, limit: 10 })
  t.same(near.passed, [], 'the next occurrence within the horizon: claimed')
  t.match(near.claims, [{ dueAt: CYCLE + 3 * I, missed: 3, overdueAt: CYCLE }])
  t.match([...(await rows(db)).values()][0], { due: CYCLE + 4 * I, owner: 'a' })
})

t.test('a row overdue by an interval or more whose next occurrence is beyond the horizon is moved to it, not claimed', async (t) => {
  const { db } = await sites(t, 3)
  await db('sites').update({ due_at: new Date(CYCLE), lease_owner: null })
  const now = CYCLE + 2.5 * I
  const got = await claimDueChecks({ db, owner: 'a', now, horizon: now + 1000, intervalMs: I, limit: 10 })
  t.same(got.claims, [], 'nothing held in memory for half an interval: over capacity that room is what runs checks')
  t.same(
    got.passed.map(({ overdueAt, missed, dueAt }) => ({ overdueAt, missed, dueAt })),
    [0, 1, 2].map(() => ({ overdueAt: CYCLE, missed: 3, dueAt: CYCLE + 3 * I })),
    'each counted with the occurrences it missed'
  )
  for (const row of (await rows(db)).values()) t.match(row, { due: CYCLE + 3 * I, owner: null }, 'due at its next phase, unclaimed')
  const later = await claimDueChecks({ db, owner: 'b', now: CYCLE + 3 * I, horizon: CYCLE + 3 * I + 1000, intervalMs: I, limit: 10 })
  t.match(
    later,
    { claims: [{ dueAt: CYCLE + 3 * I, missed: 0 }, { dueAt: CYCLE + 3 * I }, { dueAt: CYCLE + 3 * I }], passed: [] },
    'claimed when it comes'
  )
})

t.test('over capacity: on-time checks before late ones, the most recently due first; expired ones moved on', async (t) => {
  const { db, domains } = await sites(t, 9)
  const now = CYCLE + 10 * I
  // On time (due 1 s ago, in 0.5 s, 3 s ago, in 0.9 s), late (by 10 s, 30 s, 50 s), expired (by 1.5 and 3.2 intervals).
  const dueAt = [now - 1000, now + 500, now - 10_000, now - 30_000, now - 50_000, now - 1.5 * I, now - 3.2 * I, now - 3000, now + 900]
  for (const [i, domain] of domains.entries())
    await db('sites')
      .where({ domain })
      .update({ due_at: new Date(dueAt[i] as number), lease_owner: null })
  const horizon = now + 1000
  const first = await claimDueChecks({ db, owner: 'a', now, horizon, intervalMs: I, limit: 3, passLimit: 10 })
  t.same(
    first.claims.map((c) => c.site.domain),
    [domains[0], domains[7], domains[1]],
    'room for three: the ones due now that can be on time, the most recently due first, then the soonest due within the horizon'
  )
  t.same(
    first.passed.map((p) => [p.site.domain, p.dueAt, p.overdueAt, p.missed]),
    [
      [domains[6], now + 0.8 * I, now - 3.2 * I, 4],
      [domains[5], now + 0.5 * I, now - 1.5 * I, 2]
    ],
    'the expired ones are moved on whatever the room, to their next occurrence, with the occurrences they missed'
  )
  const after = await rows(db)
  t.match(after.get(domains[5] as string), { due: now + 0.5 * I, owner: null }, 'moved to its next occurrence, at its phase, unclaimed')
  t.match(after.get(domains[6] as string), { due: now + 0.8 * I, owner: null }, 'moved to its next occurrence, at its phase, unclaimed')
  const second = await claimDueChecks({ db, owner: 'a', now, horizon, intervalMs: I, limit: 2, passLimit: 10 })
  t.same(
    second.claims.map((c) => [c.site.domain, c.dueAt, c.missed]),
    [
      [domains[8], now + 900, 0],
      [domains[2], now - 10_000, 0]
    ],
    'then the rest within the horizon, then the late ones, the most recently due first, at their own due times'
  )
  t.same(second.passed, [], 'nothing left to move')
  const third = await claimDueChecks({ db, owner: 'a', now, horizon, intervalMs: I, limit: 1, passLimit: 10 })
  t.same(
    third.claims.map((c) => c.site.domain),
    [domains[3]],
    'the next late one'
  )
  const none = await claimDueChecks({ db, owner: 'a', now, horizon, intervalMs: I, limit: 0, passLimit: 10 })
  t.same(none, { claims: [], passed: [] }, 'no room: nothing claimed')
})

t.test("a dead instance's claims are taken over: the unrecorded ones to be run, the recorded ones only handed over", async (t) => {
  const { db } = await sites(t, 40)
  await scheduleNewSites({ db, now: CYCLE, intervalMs: I, limit: 1000 })
  const now = CYCLE + I
  const { claims } = await claimDueChecks({ db, owner: 'dead', now, horizon: now, intervalMs: I, limit: 1000 })
  t.equal(claims.length, 40)
  const recorded = claims.slice(0, 15)
  for (const c of recorded)
    await db('sites')
      .where({ id: c.site.id })
      .update({ checked_at: new Date(c.dueAt + 10) })
  // Half an interval later: the claims due in the first half have lapsed (their checks are a whole
  // interval late, the next ones are due and claimed as usual); the others are still the dead one's.
  const later = now + I / 2
  const live = claims.filter((c) => c.dueAt + I > later)
  t.ok(live.length > 5 && live.length < 35, `${live.length} claims still running`)
  const taken = await takeOverClaims({ db, owner: 'alive', dead: ['dead'], now: later, intervalMs: I, limit: 1000 })
  t.same(
    taken.map((c) => [c.site.domain, c.dueAt]).sort(),
    live
      .filter((c) => !recorded.includes(c))
      .map((c) => [c.site.domain, c.dueAt])
      .sort(),
    'the running claims whose checks were never recorded, at their own due times'
  )
  const owners = await rows(db)
  for (const c of claims) {
    t.equal(
      owners.get(c.site.domain)?.owner,
      live.includes(c) ? 'alive' : 'dead',
      `${c.site.domain}: ${live.includes(c) ? 'taken' : 'lapsed, left'}`
    )
  }
  t.same(await takeOverClaims({ db, owner: 'alive', dead: ['dead'], now: later, intervalMs: I, limit: 1000 }), [], 'none is taken twice')
})

t.test('after a spell without the database an instance keeps only the claims still its own', async (t) => {
  const { db } = await sites(t, 10)
  await scheduleNewSites({ db, now: CYCLE, intervalMs: I, limit: 1000 })
  const { claims } = await claimDueChecks({ db, owner: 'a', now: CYCLE + I, horizon: CYCLE + I, intervalMs: I, limit: 1000 })
  const lost = claims.slice(0, 3)
  await db('sites')
    .whereIn(
      'id',
      lost.map((c) => c.site.id)
    )
    .update({ lease_owner: 'b' })
  const reached = claims.map((c) => ({ id: c.site.id, dueAt: c.dueAt + 5 * I }))
  const kept = await keepOwnClaims({ db, owner: 'a', claims: reached })
  t.same(
    [...kept].sort(),
    claims
      .slice(3)
      .map((c) => c.site.id)
      .sort(),
    'the claims b took are not kept'
  )
  const after = await db('sites').select('id', 'due_at', 'lease_owner')
  for (const r of after) {
    const claim = claims.find((c) => c.site.id === Number(r.id))
    if (kept.has(Number(r.id)))
      t.equal(toDate(r.due_at)?.getTime(), (claim?.dueAt as number) + 5 * I, 'kept: the due time reached is written back')
    else t.equal(String(r.lease_owner), 'b', 'lost: left as b has it')
  }
})

/** Gives the site `domain` its own interval, as the sites API does (a change bumps `changed_at`). */
async function setInterval(db: Db, domain: string, intervalS: number | null, at: number): Promise<void> {
  await db('sites')
    .where({ domain })
    .update({ interval_s: intervalS, changed_at: new Date(at) })
}

t.test('each site is first due, claimed and held at its own interval', async (t) => {
  const { db, domains } = await sites(t, 3)
  const [short, usual, long] = domains as [string, string, string]
  await setInterval(db, short, 30, CYCLE)
  await setInterval(db, long, 300, CYCLE)
  const ms = new Map([
    [short, 30_000],
    [usual, I],
    [long, 300_000]
  ])
  t.equal(await scheduleNewSites({ db, now: CYCLE + 1, intervalMs: I, limit: 1000 }), 3)
  const first = await rows(db)
  for (const [domain, row] of first) {
    const own = ms.get(domain) as number
    const phase = phaseOf(domain, own)
    t.equal(row.due, phase >= 1 ? CYCLE + phase : CYCLE + own + phase, `${domain}: at its phase in ${own / 1000} s`)
  }
  const { claims } = await claimDueChecks({ db, owner: 'a', now: CYCLE + 1, horizon: CYCLE + 300_000, intervalMs: I, limit: 10 })
  t.equal(claims.length, 3)
  for (const claim of claims) t.equal(claim.intervalMs, ms.get(claim.site.domain), `${claim.site.domain}: claimed with its interval`)
  for (const [domain, row] of await rows(db)) {
    const next = (first.get(domain)?.due as number) + (ms.get(domain) as number)
    t.same(row, { due: next, owner: 'a', until: next }, `${domain}: next due one interval of its own later, claimed until then`)
  }
})

t.test('a row overdue past the shortest interval is judged by its own: late within it, passed over beyond it', async (t) => {
  const { db, domains } = await sites(t, 3)
  const [short, long, usual] = domains as [string, string, string]
  await setInterval(db, short, 30, CYCLE)
  await setInterval(db, long, 300, CYCLE)
  const now = CYCLE + 10 * I
  for (const domain of domains)
    await db('sites')
      .where({ domain })
      .update({ due_at: new Date(now - 40_000) })
  const got = await claimDueChecks({ db, owner: 'a', now, horizon: now + 1000, intervalMs: I, limit: 10 })
  t.same(
    got.claims.map((c) => [c.site.domain, c.dueAt, c.missed]),
    [
      [usual, now - 40_000, 0],
      [long, now - 40_000, 0]
    ],
    'the 60 s and 300 s sites are 40 s late: run late'
  )
  t.same(
    got.passed.map((p) => [p.site.domain, p.dueAt, p.missed]),
    [[short, now + 20_000, 2]],
    'the 30 s site is past its interval: moved to its next occurrence'
  )
  const after = await rows(db)
  t.match(after.get(long), { due: now + 260_000, owner: 'a' }, 'the 300 s site is next due 300 s after the late one')
})

t.test("a dead instance's claims are taken over by each site's own interval", async (t) => {
  const { db, domains } = await sites(t, 2)
  const [short, long] = domains as [string, string]
  await setInterval(db, short, 30, CYCLE)
  await setInterval(db, long, 300, CYCLE)
  await scheduleNewSites({ db, now: CYCLE, intervalMs: I, limit: 1000 })
  const { claims } = await claimDueChecks({ db, owner: 'dead', now: CYCLE, horizon: CYCLE + 300_000, intervalMs: I, limit: 10 })
  const taken = await takeOverClaims({ db, owner: 'alive', dead: ['dead'], now: CYCLE, intervalMs: I, limit: 10 })
  t.same(
    taken.map((c) => [c.site.domain, c.dueAt, c.intervalMs]).sort(),
    claims.map((c) => [c.site.domain, c.dueAt, c.intervalMs]).sort(),
    'each unrecorded claim again, at the due time it was claimed for'
  )
})

t.test('a changed interval moves the due time to the phase in the new one; the next look leaves it', async (t) => {
  const { db, domains } = await sites(t, 4)
  const [shortened, lengthened, renamed, removed] = domains as [string, string, string, string]
  const L = 300_000
  const S = 30_000
  await setInterval(db, shortened, 300, CYCLE)
  await setInterval(db, lengthened, 30, CYCLE)
  await setInterval(db, removed, 30, CYCLE)
  const intervals = new SiteIntervals()
  await scheduleNewSites({ db, now: CYCLE, intervalMs: I, limit: 1000, intervals })
  t.equal(intervals.duePerS.toFixed(6), (1 / 300 + 1 / 30 + 1 / 60 + 1 / 30).toFixed(6), 'the load: each site once per its own interval')
  // 200 s on: the shortened site was last checked 100 s ago and is next due in up to 300 s; the
  // lengthened one was checked 5 s ago and is next due in 25 s.
  const now = CYCLE + 200_000
  await db('sites')
    .where({ domain: shortened })
    .update({ due_at: new Date(now + 200_000 + 1), checked_at: new Date(now - 100_000) })
  await db('sites')
    .where({ domain: lengthened })
    .update({ due_at: new Date(now + 25_000 + phaseOf(lengthened, S)), checked_at: new Date(now - 5000) })
  await setInterval(db, shortened, 30, now - 100)
  await setInterval(db, lengthened, 300, now - 100)
  await db('sites')
    .where({ domain: renamed })
    .update({ name: 'Renamed', changed_at: new Date(now - 100) })
  await db('sites')
    .where({ domain: removed })
    .update({ removed_at: new Date(now - 100), changed_at: new Date(now - 100) })
  const before = await rows(db)
  t.equal(await scheduleNewSites({ db, now, intervalMs: I, limit: 1000, changedSince: now - 2000, intervals }), 2, 'two moved')
  const after = await rows(db)
  const movedShort = after.get(shortened)?.due as number
  t.ok(movedShort >= now && movedShort < now + S, `shortened: due ${movedShort - now} ms from now, within 30 s`)
  t.equal((movedShort - phaseOf(shortened, S)) % S, 0, 'at its phase in 30 s')
  const movedLong = after.get(lengthened)?.due as number
  t.ok(movedLong >= now - 5000 + L / 2, `lengthened: due ${movedLong - (now - 5000)} ms after its last check, half of 300 s at least`)
  t.ok(movedLong < now + L, 'and within 300 s from now')
  t.equal((movedLong - phaseOf(lengthened, L)) % L, 0, 'at its phase in 300 s')
  t.same(after.get(renamed), before.get(renamed), 'renamed: left as it was')
  t.equal(intervals.duePerS.toFixed(6), (1 / 30 + 1 / 300 + 1 / 60).toFixed(6), 'the load follows the changes and the removal')
  t.equal(
    await scheduleNewSites({ db, now: now + 300, intervalMs: I, limit: 1000, changedSince: now - 2000, intervals }),
    0,
    'another look (or another instance) moves nothing more'
  )
  t.same(await rows(db), after)
})
