import t from 'tap'
import net from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { addSites } from '../../../../lib/monitoring/add-sites.js'
import { LeaseScheduler } from '../../../../lib/monitoring/schedule/lease-scheduler.js'
import type { ScheduleLoad } from '../../../../lib/monitoring/schedule/schedule-load.js'
import { openDb, type Db } from '../../../../lib/store/db.js'
import { migratedDb } from '../../../helpers/db.js'
import { holds } from '../../../helpers/poll.js'

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
      // Room for 10 claims (twice the slots) of the 30 sites. That alone did not make both take a
      // share: started together, the two kept one phase on a fixed round period, and the one whose
      // rounds came first claimed every check (CI, 2026-11-26); the rounds' drawn gaps fix that.
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
  // Before the death each took a fair share: at least a sixth. On a fixed round period the shares
  // were 59/1, 11/49, 60/0 and 8/52 in four runs; with drawn gaps 25/35, 29/32, 36/24 and 28/32.
  const ranBy = (owner: string): number => runs.filter((r) => r.owner === owner && r.at < diedAt).length
  const before = ranBy('a') + ranBy('b')
  t.ok(Math.min(ranBy('a'), ranBy('b')) >= before / 6, `both took a share before the death (a ${ranBy('a')}, b ${ranBy('b')})`)
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

/** A TCP relay to MariaDB that can be cut (every connection dropped, new ones refused) and restored on the same port. */
async function cuttableRelay(
  t: { teardown(fn: () => unknown): void },
  to: URL
): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void> }> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(to.port || 3306), to.hostname)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('error', () => s.destroy())
      s.on('close', () => {
        sockets.delete(s)
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream).pipe(client)
  })
  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  await listen(0)
  const port = (server.address() as net.AddressInfo).port
  const cut = async (): Promise<void> => {
    const closed = new Promise<void>((resolve) =>
      server.close(() => {
        resolve()
      })
    )
    for (const s of sockets) s.destroy()
    await closed
  }
  t.teardown(() => (server.listening ? cut() : undefined))
  return { port, cut, restore: () => listen(port) }
}

t.test('a site moved on without a claim just before the database went away is checked without it, at its phase', async (t) => {
  const { db, url } = await migratedDb('mysql', t)
  await addSites({
    db,
    entries: [
      { domain: 'moved.example.com', name: null },
      { domain: 'held.example.com', name: null }
    ],
    now: new Date()
  })
  const relay = await cuttableRelay(t, new URL(url))
  const relayed = new URL(url)
  relayed.port = String(relay.port)
  const conn = openDb(relayed.href)
  t.teardown(() => conn.destroy())
  const runs: Array<{ domain: string; dueAt: number; at: number }> = []
  const scheduler = new LeaseScheduler({
    db: conn,
    owner: 'a',
    // Claims look 1 s ahead; without the database for 2 s the scheduler goes on alone.
    intervalMs: I,
    concurrency: 5,
    tracked: () => true,
    learn: async () => {},
    sites: () => 2,
    runCheck: async (site, dueAt) => {
      runs.push({ domain: site.domain, dueAt, at: Date.now() })
    }
  })
  t.teardown(() => scheduler.stop())
  // moved.example.com is 1.5 intervals overdue: its next occurrence, half an interval ahead, is beyond
  // the look-ahead, so the first round moves it on unclaimed. held.example.com is claimed as usual.
  const start = Date.now()
  await db('sites')
    .where({ domain: 'moved.example.com' })
    .update({ due_at: new Date(start - 1.5 * I) })
  await db('sites')
    .where({ domain: 'held.example.com' })
    .update({ due_at: new Date(start + 200) })
  await scheduler.start()
  const rows = await db('sites').select('domain', 'due_at', 'lease_owner').orderBy('domain')
  const movedDue = new Date(rows.find((r) => r.domain === 'moved.example.com').due_at).getTime()
  t.match(
    rows.map((r) => [r.domain, r.lease_owner]),
    [
      ['held.example.com', 'a'],
      ['moved.example.com', null]
    ],
    'the first round claims one site and moves the other on without a claim'
  )
  t.equal(movedDue, start + 0.5 * I, 'to its next occurrence')
  await relay.cut()
  const cutAt = Date.now()
  const offline = (domain: string) => runs.filter((r) => r.domain === domain && r.at > cutAt)
  t.ok(
    await holds(() => offline('moved.example.com').length >= 2 && offline('held.example.com').length >= 2, 4 * I),
    `both sites are checked without the database (moved: ${offline('moved.example.com').length}, held: ${offline('held.example.com').length})`
  )
  t.same(
    offline('moved.example.com').map((r) => (r.dueAt - movedDue) % I),
    offline('moved.example.com').map(() => 0),
    'the moved site at its phase'
  )
  await relay.restore()
  const backAt = Date.now()
  t.ok(
    await holds(() => runs.some((r) => r.domain === 'moved.example.com' && r.dueAt > backAt + I), 4 * I),
    'and claimed again once the database is back'
  )
  await scheduler.stop()
  const keys = runs.map((r) => `${r.domain}@${r.dueAt}`)
  t.same(
    keys.filter((k, i) => keys.indexOf(k) !== i),
    [],
    'no check ran twice'
  )
})

t.test('over capacity, the figures say the load, what ran and what was shed', async (t) => {
  const { db } = await migratedDb('mysql', t)
  // 60 sites every 3 s, 20 due a second, for one slot and checks of 200 ms: at most 5 run a second.
  const sites = 60
  const intervalMs = 3000
  await addSites({ db, entries: Array.from({ length: sites }, (_, i) => ({ domain: `o${i}.example.com`, name: null })), now: new Date() })
  const warnings: ScheduleLoad[] = []
  const scheduler = new LeaseScheduler({
    db,
    owner: 'a',
    intervalMs,
    concurrency: 1,
    tracked: () => true,
    learn: async () => {},
    sites: () => sites,
    runCheck: () => sleep(200),
    onBehind: (load) => warnings.push(load)
  })
  t.teardown(() => scheduler.stop())
  await scheduler.start()
  t.ok(await holds(() => scheduler.load().seconds >= (3 * intervalMs) / 1000, 10 * intervalMs), 'three intervals')
  const load = scheduler.load()
  t.equal(load.duePerS, 20, `due per second: the sites' load (${load.duePerS})`)
  t.ok(load.runPerS > 2 && load.runPerS <= 5.5, `run per second: what one slot ran (${load.runPerS})`)
  // Each due time in the window was started, shed, or is still to be decided (at most one a site).
  const undecided = load.due - load.started - load.shed
  t.ok(undecided >= 0 && undecided <= sites, `due ${load.due} = started ${load.started} + shed ${load.shed} + ${undecided} undecided`)
  t.ok(load.behind, 'behind')
  t.equal(warnings[0]?.duePerS, 20, 'the warning gives the same load')
})

t.test('checks that fell due while no instance ran are not late: a restart is not behind', async (t) => {
  const { db } = await migratedDb('mysql', t)
  const sites = 4
  const intervalMs = 60_000
  await addSites({ db, entries: Array.from({ length: sites }, (_, i) => ({ domain: `r${i}.example.com`, name: null })), now: new Date() })
  // As after a stop of 20 s: every site's due time went by while nothing ran, within one interval.
  await db('sites').update({ due_at: new Date(Date.now() - 20_000), lease_owner: null, lease_until: null })
  const runs: Array<{ id: number; dueAt: number }> = []
  const scheduler = new LeaseScheduler({
    db,
    owner: 'restarted',
    intervalMs,
    concurrency: 4,
    tracked: () => true,
    learn: async () => {},
    sites: () => sites,
    runCheck: async (site, dueAt) => {
      runs.push({ id: site.id, dueAt })
    }
  })
  t.teardown(() => scheduler.stop())
  const startedAt = Date.now()
  await scheduler.start()
  t.ok(await holds(() => runs.length === sites, 10_000), 'each overdue site is checked at once')
  t.ok(
    runs.every((r) => r.dueAt >= startedAt - 1000),
    'as due from the restart, not from the time that went by before it'
  )
  const load = scheduler.load()
  t.equal(load.late, 0, 'none counted late')
  t.equal(load.shed, 0, 'none shed')
  t.notOk(load.behind, '/healthz says ok')
})
