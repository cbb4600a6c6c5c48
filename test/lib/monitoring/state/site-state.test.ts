import t from 'tap'
import { SiteStates } from '../../../../lib/monitoring/state/site-state.js'
import { removeSite } from '../../../../lib/monitoring/remove-site.js'
import { addSite, addSites } from '../../../../lib/monitoring/add-sites.js'
import { engines, migratedDb } from '../../../helpers/db.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const SEC = 1000

/** Applies a scheduled check of `domain` from three locations, as the recorder does once it is stored. */
function applyCheck(states: SiteStates, domain: string, checkedAt: Date, status: 'up' | 'down'): void {
  states.apply(
    {
      siteId: states.siteId(domain) as number,
      checkedAt,
      status,
      blocked: false,
      partial: false,
      responseMs: 10,
      locationsAnswered: 3,
      locationsTotal: 3,
      source: 'schedule',
      locations: []
    },
    { current: true, step: 'none', outage: null, slow: false }
  )
}

/** Counts the event loop's turns (one immediate after another) until `stop`. */
function countTurns(): { readonly seen: number; stop(): void } {
  let seen = 0
  let stopped = false
  const tick = (): void => {
    seen++
    if (!stopped) setImmediate(tick)
  }
  setImmediate(tick)
  return {
    get seen() {
      return seen
    },
    stop() {
      stopped = true
    }
  }
}

for (const engine of engines()) {
  t.test(`refresh reads the site list again only when a site was added, renamed, resumed or removed, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSites({
      db,
      entries: [
        { domain: 'a.example.com', name: null },
        { domain: 'b.example.com', name: 'B' }
      ],
      now: new Date(T0)
    })
    const states = new SiteStates({ intervalMs: 60 * SEC, publicUrl: 'http://x' })
    let reads = 0
    db.on('query', (q: { sql: string }) => {
      if (/\bremoved_at\b/i.test(q.sql) && /\bdomain\b/i.test(q.sql)) reads++
    })
    const domains = (list: Array<{ domain: string }>): string[] => list.map((s) => s.domain).sort()

    const first = await states.refresh(db, new Date(T0 + SEC))
    t.same(domains(first), ['a.example.com', 'b.example.com'])
    const readsAfterFirst = reads
    t.ok(readsAfterFirst > 0, 'the first refresh reads the list')
    const same = await states.refresh(db, new Date(T0 + 11 * SEC))
    t.equal(same, first, 'nothing changed: the same list, not read again')
    t.equal(reads, readsAfterFirst)

    await addSite({ db, entry: { domain: 'c.example.com', name: null }, now: new Date(T0 + 12 * SEC) })
    t.same(domains(await states.refresh(db, new Date(T0 + 21 * SEC))), ['a.example.com', 'b.example.com', 'c.example.com'], 'an added site')
    await addSite({ db, entry: { domain: 'b.example.com', name: 'Bee' }, now: new Date(T0 + 22 * SEC) })
    await states.refresh(db, new Date(T0 + 31 * SEC))
    t.equal(states.current('b.example.com', new Date(T0 + 31 * SEC))?.name, 'Bee', 'a rename')
    t.ok(await removeSite({ db, domain: 'a.example.com', now: new Date(T0 + 32 * SEC) }))
    t.same(domains(await states.refresh(db, new Date(T0 + 41 * SEC))), ['b.example.com', 'c.example.com'], 'a removal')
    await addSite({ db, entry: { domain: 'a.example.com', name: null }, now: new Date(T0 + 42 * SEC) })
    t.same(
      domains(await states.refresh(db, new Date(T0 + 51 * SEC))),
      ['a.example.com', 'b.example.com', 'c.example.com'],
      'a resumed site'
    )

    // A change made behind the store's back (no changed_at) is picked up by the full read a minute on.
    await db('sites').where({ domain: 'c.example.com' }).update({ name: 'Sea' })
    await states.refresh(db, new Date(T0 + 61 * SEC))
    t.equal(states.current('c.example.com', new Date(T0 + 61 * SEC))?.name, 'c.example.com', 'not seen while the version stands')
    await states.refresh(db, new Date(T0 + 112 * SEC))
    t.equal(states.current('c.example.com', new Date(T0 + 112 * SEC))?.name, 'Sea', 'seen at the next full read')
  })
}

t.test('a serialised status record is served for under a second, and only recent ones are kept', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const I = 60 * SEC
  await addSites({ db, entries: Array.from({ length: 50 }, (_, i) => ({ domain: `s${i}.example.com`, name: null })), now: new Date(T0) })
  const states = new SiteStates({ intervalMs: I, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  const checkedAt = new Date(T0 + SEC)
  for (let i = 0; i < 50; i++) {
    applyCheck(states, `s${i}.example.com`, checkedAt, 'up')
  }
  // Three intervals after its check a site shows as unavailable: just before, the record says up.
  const turn = checkedAt.getTime() + 3 * I
  const at = (ms: number) => new Date(turn + ms)
  const first = states.statusJson('s0.example.com', at(-500)) as string
  t.equal(JSON.parse(first).status, 'up')
  t.equal(first, JSON.stringify(states.statusRecord('s0.example.com', at(-500))), 'the record, serialised')
  t.equal(states.statusJson('s0.example.com', at(400)), first, 'served again within the second, though the record has moved on')
  t.equal(states.statusRecord('s0.example.com', at(400))?.status, 'unavailable')
  t.equal(JSON.parse(states.statusJson('s0.example.com', at(500)) as string).status, 'unavailable', 'serialised again a second on')

  for (let i = 0; i < 50; i++) states.statusJson(`s${i}.example.com`, at(600))
  t.ok(states.serialisedKept >= 50, 'the sites asked for are kept')
  states.statusJson('s1.example.com', at(1700))
  t.ok(states.serialisedKept <= 51, 'a second on, the older generation goes with the next new record')
  states.statusJson('s2.example.com', at(5000))
  t.equal(states.serialisedKept, 1, 'long after, only the newest record is kept, not one per site ever asked for')
})

t.test('a page of the site list counts every site, giving the event loop turns while it counts', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const I = 60 * SEC
  const SITES = 12_000
  await addSites({
    db,
    entries: Array.from({ length: SITES }, (_, i) => ({ domain: `s${String(i).padStart(5, '0')}.example.com`, name: null })),
    now: new Date(T0)
  })
  const states = new SiteStates({ intervalMs: I, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  const checkedAt = new Date(T0 + SEC)
  // Every third site checked down, the rest up; one site never checked stays unavailable.
  for (let i = 1; i < SITES; i++) {
    applyCheck(states, `s${String(i).padStart(5, '0')}.example.com`, checkedAt, i % 3 === 0 ? 'down' : 'up')
  }
  const turns = countTurns()
  const list = await states.listPage(new Date(T0 + 2 * SEC), 2, 500)
  turns.stop()
  t.equal(list.total, SITES)
  t.same(list.counts, { up: 8000, down: 3999, unconfirmed: 0, unavailable: 0, pending: 1 }, 'a site never checked is pending')
  t.same(list.records.map((r) => r.domain).slice(0, 2), ['s00500.example.com', 's00501.example.com'], 'the second page, in domain order')
  t.equal(list.records.length, 500)
  t.ok(turns.seen >= 2, `the loop turned while 12,000 sites were counted (${turns.seen} turns)`)
})

t.test('a full read of the site list gives the event loop turns, and refreshes never interleave', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const SITES = 12_000
  await addSites({
    db,
    entries: Array.from({ length: SITES }, (_, i) => ({ domain: `r${i}.example.com`, name: null })),
    now: new Date(T0)
  })
  const states = new SiteStates({ intervalMs: 60 * SEC, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  t.equal(states.size, SITES)

  // Removed behind the store's back: only a full read notices, and the comparison takes turns.
  await db('sites')
    .where({ domain: 'r7.example.com' })
    .update({ removed_at: new Date(T0 + SEC) })
  states.changed()
  const turns = countTurns()
  const first = states.refresh(db, new Date(T0 + 2 * SEC))
  const second = states.refresh(db, new Date(T0 + 2 * SEC))
  const [a, b] = await Promise.all([first, second])
  turns.stop()
  t.equal(a.length, SITES - 1)
  t.notOk(states.has('r7.example.com'), 'the removed site is gone')
  t.equal(b, a, 'the second call ran after the first, found nothing new and handed back the same list')
  t.ok(turns.seen >= 4, `the loop turned while 12,000 sites were compared (${turns.seen} turns)`)
})

t.test("the freshness rule counts a site's own intervals, and follows a change of interval", async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const I = 60 * SEC
  await addSites({
    db,
    entries: [
      { domain: 'default.example.com', name: null },
      { domain: 'slow.example.com', name: null },
      { domain: 'fast.example.com', name: null }
    ],
    now: new Date(T0)
  })
  await db('sites')
    .where({ domain: 'slow.example.com' })
    .update({ interval_s: 300, changed_at: new Date(T0) })
  await db('sites')
    .where({ domain: 'fast.example.com' })
    .update({ interval_s: 30, changed_at: new Date(T0) })
  const states = new SiteStates({ intervalMs: I, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  for (const domain of ['default.example.com', 'slow.example.com', 'fast.example.com']) applyCheck(states, domain, new Date(T0), 'up')
  const status = (domain: string, atS: number): string | undefined => states.statusRecord(domain, new Date(T0 + atS * SEC))?.status
  t.equal(status('fast.example.com', 90), 'up', '30 s: up for 90 s')
  t.equal(status('fast.example.com', 91), 'unavailable', '30 s: then unavailable')
  t.equal(status('default.example.com', 181), 'unavailable', 'the default: unavailable after three minutes')
  t.equal(status('slow.example.com', 900), 'up', '300 s: still up after 15 minutes')
  t.equal(status('slow.example.com', 901), 'unavailable', '300 s: then unavailable')
  t.equal(states.current('slow.example.com', new Date(T0 + 600 * SEC))?.status, 'up', 'badges apply the same rule')
  let counts = (await states.listPage(new Date(T0 + 600 * SEC), 1, 10)).counts
  t.match(counts, { up: 1, unavailable: 2 }, 'and so does the list')

  await db('sites')
    .where({ domain: 'slow.example.com' })
    .update({ interval_s: null, changed_at: new Date(T0 + 601 * SEC) })
  await states.refresh(db, new Date(T0 + 602 * SEC))
  t.equal(status('slow.example.com', 602), 'unavailable', 'its interval cleared: three default intervals')
  counts = (await states.listPage(new Date(T0 + 602 * SEC), 1, 10)).counts
  t.match(counts, { up: 0, unavailable: 3 })
})
