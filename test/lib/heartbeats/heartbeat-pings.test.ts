import t from 'tap'
import { addHeartbeat } from '../../../lib/heartbeats/manage.js'
import { PingCommitter } from '../../../lib/heartbeats/pings.js'
import { toDate, type Db } from '../../../lib/store/db.js'
import { findHeartbeat } from '../../../lib/store/heartbeats.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { testServer } from '../../helpers/server.js'

const T0 = Date.parse('2026-11-29T03:00:00.000Z')
const settings = { name: 'job', schedule: { every_s: 60 }, grace_s: 30, max_runtime_s: null }

/** Counts the transactions `db` begins from now on. */
function transactions(db: Db): () => number {
  let n = 0
  db.on('query', (q: { sql?: string }) => {
    if (/^\s*begin/i.test(q.sql ?? '')) n++
  })
  return () => n
}

const count = async (db: Db, table: string): Promise<number> => Number((await db(table).count({ n: '*' }))[0]?.n)

/** A trigger that refuses to keep a ping whose rid is `boom`: a write failing inside the pings' transaction. */
async function refuseBoom(db: Db): Promise<() => Promise<void>> {
  if (db.client.config.client === 'mysql2') {
    await db.raw(
      "CREATE TRIGGER refuse_boom BEFORE INSERT ON heartbeat_pings FOR EACH ROW BEGIN IF NEW.rid = 'boom' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused'; END IF; END"
    )
  } else {
    await db.raw(
      "CREATE TRIGGER refuse_boom BEFORE INSERT ON heartbeat_pings WHEN NEW.rid = 'boom' BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
  }
  return async () => {
    await db.raw('DROP TRIGGER refuse_boom')
  }
}

for (const engine of engines()) {
  t.test(`group commit of pings on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    let clock = T0
    const now = (): Date => new Date(clock)

    t.test('pings sent at once through the route are all committed and counted, in few transactions', async (t) => {
      const api = await testServer({ db, now })
      t.teardown(() => api.server.stop())
      const tokens: string[] = []
      for (let i = 0; i < 40; i++) tokens.push((await addHeartbeat({ db, slug: `many-${i}`, settings, now: now() })).token)
      const before = await count(db, 'heartbeat_pings')
      const begun = transactions(db)
      clock = T0 + 1000
      // Three pings to each of 40 heartbeats, all in flight together.
      const answers = await Promise.all(
        [0, 1, 2].flatMap(() => tokens.map((token) => api.server.inject({ method: 'GET', url: `/ping/${token}` })))
      )
      t.same(
        answers.map((a) => [a.statusCode, a.payload]),
        answers.map(() => [200, 'OK']),
        'every ping answered OK'
      )
      t.equal((await count(db, 'heartbeat_pings')) - before, 120, 'and every one stored')
      t.ok(begun() < 120 / 4, `in few transactions (${begun()} for 120 pings)`)
      for (const i of [0, 17, 39]) {
        const row = await findHeartbeat({ db, slug: `many-${i}` })
        t.match(row, { state: 'up', last_ping_at: new Date(T0 + 1000), last_ping_kind: 'success' }, `many-${i} is up`)
        const pings = await db('heartbeat_pings').where({ heartbeat_id: row?.id }).count({ n: '*' })
        t.equal(Number(pings[0]?.n), 3, `many-${i} has its three pings`)
      }
      const sites = await db('sites').where('domain', 'like', 'heartbeat:many-%').select('status', 'first_checked_at')
      t.ok(
        sites.every((s) => s.status === 'up' && s.first_checked_at !== null),
        'each sites row mirrors its first ping'
      )
    })

    t.test('pings to one heartbeat in one batch apply in order: a run paired, an outage opened and closed', async (t) => {
      const { token } = await addHeartbeat({ db, slug: 'ordered', settings, now: now() })
      const row = await findHeartbeat({ db, slug: 'ordered' })
      const committer = new PingCommitter({ db, now })
      const begun = transactions(db)
      clock = T0 + 2000
      const first = [
        committer.record({ token, kind: 'start', rid: 'r1' }),
        committer.record({ token, kind: 'fail', rid: null, message: 'disk full' })
      ]
      // Only once the first transaction is under way: these wait and go in the next.
      const next = new Promise<unknown>((resolve) => {
        setImmediate(() => {
          const start = committer.record({ token, kind: 'start', rid: 'r2' })
          const success = committer.record({ token, kind: 'success', rid: 'r2', message: 'ok again' })
          resolve(Promise.all([start, success]))
        })
      })
      const results = [...(await Promise.all(first)), ...((await next) as unknown[])]
      t.match(results, [{ state: 'up' }, { state: 'down', step: 'open' }, { state: 'down' }, { state: 'up', step: 'close' }])
      t.equal(begun(), 2, 'four pings, two transactions')
      const outages = await db('outages').where({ site_id: row?.site_id }).select('started_at', 'ended_at')
      t.equal(outages.length, 1, 'the fail opened one outage and the success closed it')
      t.ok(outages[0]?.ended_at !== null)
      const types = (await db('events').where({ site_id: row?.site_id }).orderBy('id').pluck('type')).map(String)
      t.same(types, ['outage.opened', 'outage.closed'])
      const after = await findHeartbeat({ db, slug: 'ordered' })
      t.match(after, { state: 'up', failed: false, last_message: 'ok again', open_runs: [], last_run_ms: 0 })
      const kinds = await db('heartbeat_pings').where({ heartbeat_id: row?.id }).orderBy('id').select('kind', 'rid', 'run_ms')
      t.same(
        kinds.map((k) => `${k.kind}:${k.rid ?? ''}:${k.run_ms ?? ''}`),
        ['start:r1:', 'fail::0', 'start:r2:', 'success:r2:0'],
        'kept in the order sent, each end paired with the start before it (a run of 0 ms, not none)'
      )
    })

    t.test('a transaction that fails answers none of its pings OK and keeps none of them', async (t) => {
      const tokens: string[] = []
      for (let i = 0; i < 5; i++) tokens.push((await addHeartbeat({ db, slug: `doomed-${i}`, settings, now: now() })).token)
      const drop = await refuseBoom(db)
      const before = await count(db, 'heartbeat_pings')
      const committer = new PingCommitter({ db, now })
      clock = T0 + 4000
      // Recorded in one turn: one transaction, which the last ping's row makes fail.
      const outcomes = await Promise.allSettled([
        ...tokens.map((token) => committer.record({ token, kind: 'success', rid: null })),
        committer.record({ token: tokens[0] as string, kind: 'success', rid: 'boom' })
      ])
      t.same(
        outcomes.map((o) => o.status),
        outcomes.map(() => 'rejected'),
        'every ping of the failed transaction rejected'
      )
      t.equal(await count(db, 'heartbeat_pings'), before, 'none kept')
      for (let i = 0; i < 5; i++) t.equal((await findHeartbeat({ db, slug: `doomed-${i}` }))?.state, 'new', `doomed-${i} untouched`)

      const api = await testServer({ db, now })
      t.teardown(() => api.server.stop())
      const answers = await Promise.all([
        ...tokens.map((token) => api.server.inject({ method: 'GET', url: `/ping/${token}` })),
        api.server.inject({ method: 'GET', url: `/ping/${tokens[1] as string}?rid=boom` })
      ])
      const refused = answers.at(-1)
      t.ok((refused?.statusCode ?? 0) >= 500, `the refused ping is answered ${refused?.statusCode}, not OK`)
      t.notMatch(refused?.payload, /refused|heartbeat_pings|insert/i, 'and says nothing of the SQL')
      const okAnswers = answers.filter((a) => a.statusCode === 200).length
      t.ok(
        answers.every((a) => a.statusCode === 200 || a.statusCode >= 500),
        'each ping is OK or 5xx'
      )
      t.equal((await count(db, 'heartbeat_pings')) - before, okAnswers, `exactly the ${okAnswers} pings answered OK are kept`)
      await drop()
      const again = await api.server.inject({ method: 'GET', url: `/ping/${tokens[1] as string}?rid=boom` })
      t.equal(again.statusCode, 200, 'the next transaction commits once the cause is gone')
    })

    t.test('a batch writes each heartbeat, its sites row only where the state or the last ping moved', async (t) => {
      const { token: seen } = await addHeartbeat({ db, slug: 'seen', settings, now: now() })
      const { token: fresh } = await addHeartbeat({ db, slug: 'fresh', settings, now: now() })
      const committer = new PingCommitter({ db, now })
      clock = T0 + 6000
      await committer.record({ token: seen, kind: 'success', rid: null })
      const seenRow = await findHeartbeat({ db, slug: 'seen' })
      const freshRow = await findHeartbeat({ db, slug: 'fresh' })
      // A marker only a write of `seen`'s sites row would overwrite.
      await db('sites')
        .where({ id: seenRow?.site_id })
        .update({ checked_at: new Date(T0) })
      const queries: string[] = []
      const listen = (q: { sql?: string }): void => {
        queries.push(q.sql ?? '')
      }
      db.on('query', listen)
      t.teardown(() => db.off('query', listen))
      // The same instant again for `seen`: its state and last ping stay, its run starts.
      await Promise.all([
        committer.record({ token: seen, kind: 'start', rid: 'r9' }),
        committer.record({ token: fresh, kind: 'success', rid: null })
      ])
      t.match(await findHeartbeat({ db, slug: 'seen' }), { state: 'up', open_runs: [{ rid: 'r9' }] }, 'seen has its run started')
      t.match(await findHeartbeat({ db, slug: 'fresh' }), { state: 'up', last_ping_at: new Date(T0 + 6000) }, 'fresh is up')
      const [seenSite, freshSite] = [seenRow?.site_id ?? 0, freshRow?.site_id ?? 0]
      const rows: Array<{ id: unknown; status: string; checked_at: unknown }> = await db('sites')
        .whereIn('id', [seenSite, freshSite])
        .select('id', 'status', 'checked_at')
      const sites = new Map(rows.map((r) => [Number(r.id), r]))
      t.same(toDate(sites.get(seenSite)?.checked_at), new Date(T0), "seen's sites row is not written: nothing it mirrors moved")
      t.match(sites.get(freshSite), { status: 'up' }, "fresh's sites row mirrors its first ping")
      t.notOk(
        queries.some((q) => /outages/i.test(q)),
        'heartbeats stored up have no outage open: the batch reads none'
      )
    })
  })
}
