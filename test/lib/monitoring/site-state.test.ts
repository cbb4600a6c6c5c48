import t from 'tap'
import { SiteStates } from '../../../lib/monitoring/site-state.js'
import { removeSite } from '../../../lib/monitoring/remove-site.js'
import { addSite, addSites } from '../../../lib/monitoring/add-sites.js'
import { engines, migratedDb } from '../../helpers/db.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const SEC = 1000

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
