import t from 'tap'
import { createLogger } from '../../../../lib/logger.js'
import { addSite } from '../../../../lib/monitoring/add-sites.js'
import { CheckRecorder } from '../../../../lib/monitoring/record/recorder.js'
import { SiteStates } from '../../../../lib/monitoring/state/site-state.js'
import { StateSync } from '../../../../lib/monitoring/state/state-sync.js'
import type { CheckResult } from '../../../../lib/probing/supervisor.js'
import { listChangedStates } from '../../../../lib/store/site-states.js'
import { updateSiteStates } from '../../../../lib/store/checks.js'
import { engines, migratedDb } from '../../../helpers/db.js'

const MIN = 60_000

function result(domain: string, status: 'up' | 'down', at: Date): CheckResult {
  return {
    domain,
    status,
    locations_answered: 3,
    locations_total: 3,
    response_ms: 12,
    cached: false,
    locations: [],
    checked_at: at.toISOString(),
    partial: false,
    blocked: false
  }
}

for (const engine of engines()) {
  t.test(`${engine}: the freshness poll reads the states others wrote, not its own`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const started = new Date()
    const addedAt = new Date(started.getTime() - MIN)
    await addSite({ db, entry: { domain: 'a.example.com', name: null }, now: addedAt })
    await addSite({ db, entry: { domain: 'b.example.com', name: null }, now: addedAt })
    await addSite({ db, entry: { domain: 'old.example.com', name: null }, now: addedAt })
    const logger = createLogger({ level: 'silent' })
    // Two instances' memories on one database, each recording its own checks.
    const mine = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
    const theirs = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
    for (const states of [mine, theirs]) await states.refresh(db, started)
    t.not(mine.writer, theirs.writer, 'each process writes under a token of its own')
    const recorders = [new CheckRecorder({ db, states: mine, logger }), new CheckRecorder({ db, states: theirs, logger })]
    t.teardown(() => {
      for (const r of recorders) r.close()
    })
    const [myRecorder, theirRecorder] = recorders as [CheckRecorder, CheckRecorder]
    myRecorder.record(result('a.example.com', 'up', started), 'schedule')
    theirRecorder.record(result('b.example.com', 'up', started), 'schedule')
    t.same(await Promise.all(recorders.map((r) => r.flush(10_000))), [true, true], 'both recorded')
    // A state written without a writer (by a version before `state_by`) is everyone's to read.
    const oldId = mine.siteId('old.example.com') as number
    await updateSiteStates({
      db,
      checks: [
        {
          siteId: oldId,
          checkedAt: started,
          status: 'up',
          blocked: false,
          partial: false,
          responseMs: 5,
          locationsAnswered: 3,
          locationsTotal: 3,
          source: 'schedule',
          locations: []
        }
      ]
    })
    const since = new Date(started.getTime() - 5000)
    const domainsOf = async (except: string | null) => {
      const rows = await listChangedStates({ db, since, except })
      const ids = new Set(rows.map((r) => r.id))
      return ['a.example.com', 'b.example.com', 'old.example.com'].filter((d) => ids.has(mine.siteId(d) as number))
    }
    t.same(await domainsOf(mine.writer), ['b.example.com', 'old.example.com'], 'mine: the others’ and the unattributed, not my own')
    t.same(await domainsOf(theirs.writer), ['a.example.com', 'old.example.com'], 'theirs: likewise')
    t.same(await domainsOf(null), ['a.example.com', 'b.example.com', 'old.example.com'], 'nobody in particular: all of them')

    // The poll itself: each memory ends up with every site's check.
    for (const states of [mine, theirs]) {
      const sync = new StateSync({ db, states, logger, now: () => new Date() })
      await sync.syncNow()
      await sync.stop()
      for (const domain of ['a.example.com', 'b.example.com', 'old.example.com'])
        t.match(
          states.statusRecord(domain, new Date()),
          { status: 'up', checked_at: started.toISOString() },
          `${domain} is up in each memory`
        )
    }
  })
}

for (const engine of engines()) {
  t.test(`${engine}: the poll's look moves on with this process's own writes, which it does not read`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'own.example.com', name: null }, now: new Date(Date.now() - MIN) })
    const logger = createLogger({ level: 'silent' })
    const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
    await states.refresh(db, new Date())
    const sync = new StateSync({ db, states, logger, now: () => new Date() })
    const recorder = new CheckRecorder({ db, states, logger })
    t.teardown(() => {
      recorder.close()
    })
    recorder.record(result('own.example.com', 'up', new Date()), 'schedule')
    t.equal(await recorder.flush(10_000), true, 'recorded')
    const writtenAt = new Date((await db('sites').where({ domain: 'own.example.com' }).first('state_at')).state_at).getTime()
    const bounds: number[] = []
    db.on('query', (q: { sql: string; bindings?: unknown[] }) => {
      if (/state_at/.test(q.sql) && /state_by/.test(q.sql)) bounds.push(new Date(q.bindings?.[0] as Date | number | string).getTime())
    })
    await sync.syncNow()
    await sync.syncNow()
    await sync.stop()
    t.equal(bounds.length, 2, 'two looks')
    t.equal(bounds[1], writtenAt - 2000, "the second looks from two seconds before this process's newest write, not from its start")
  })
}
