import t from 'tap'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { LeaseScheduler } from '../../../lib/monitoring/lease-scheduler.js'
import { openDb, type Db } from '../../../lib/store/db.js'
import { migratedDb } from '../../helpers/db.js'
import { holds } from '../../helpers/poll.js'

// Long enough that a dead scheduler's claims (dead after 2 s) are taken over within one interval.
const I = 6000
const SITES = 30

t.test('two schedulers on one database run each due check once; when one dies the other runs what it had claimed', async (t) => {
  const { db, url } = await migratedDb('mysql', t)
  await addSites({ db, entries: Array.from({ length: SITES }, (_, i) => ({ domain: `s${i}.example.com`, name: null })), now: new Date() })
  const other = openDb(url)
  t.teardown(() => other.destroy())
  const runs: Array<{ owner: string; id: number; dueAt: number; at: number }> = []
  const make = (conn: Db, owner: string): LeaseScheduler =>
    new LeaseScheduler({
      db: conn,
      owner,
      intervalMs: I,
      // Room for 10 claims (twice the slots) of the 30 sites: one scheduler cannot take them all, so
      // both must take a share, whatever the timing of their rounds (with room for every site, one
      // fast enough took them all on a loaded machine).
      concurrency: 5,
      tracked: () => true,
      learn: async () => {},
      sites: () => SITES,
      // A check records its time on the site's row, as the recorder would.
      runCheck: async (site, dueAt) => {
        runs.push({ owner, id: site.id, dueAt, at: Date.now() })
        await conn('sites').where({ id: site.id }).update({ checked_at: new Date() })
      }
    })
  const a = make(db, 'a')
  const b = make(other, 'b')
  await Promise.all([a.start(), b.start()])
  t.teardown(() => b.stop())
  t.ok(await holds(() => runs.length >= 2 * SITES, 4 * I), 'both run checks')
  // `a` dies: it stops claiming and beating, and says nothing (no retire); the checks it held are dropped.
  await a.stop()
  const diedAt = Date.now()
  t.ok(await holds(() => runs.filter((r) => r.dueAt > diedAt + I).length >= SITES, 4 * I), 'b goes on with every site')
  await b.stop()

  const keys = runs.map((r) => `${r.id}@${r.dueAt}`)
  t.same(
    keys.filter((k, i) => keys.indexOf(k) !== i),
    [],
    'no check ran twice'
  )
  t.ok(runs.filter((r) => r.owner === 'a').length > 0 && runs.filter((r) => r.owner === 'b').length > 0, 'both took a share')
  const gaps: string[] = []
  for (let id = 1; id <= SITES; id++) {
    const due = runs
      .filter((r) => r.id === id)
      .map((r) => r.dueAt)
      .sort((x, y) => x - y)
    for (let i = 1; i < due.length; i++) if ((due[i] as number) - (due[i - 1] as number) !== I) gaps.push(`site ${id} after ${due[i - 1]}`)
  }
  t.same(gaps, [], 'every site was checked at every one of its due times, before and after the death')
  // What was due by the death (or claimed ahead of it) and run after it.
  const late = runs.filter((r) => r.dueAt <= diedAt + 1000 && r.at > diedAt).map((r) => r.at - r.dueAt)
  t.ok(
    late.every((ms) => ms < I),
    `the checks due around the death were run within one interval of due (${late.length}, at most ${Math.max(0, ...late)} ms late)`
  )
})
