import t from 'tap'
import { createLogger } from '../../../lib/logger.js'
import { addSite } from '../../../lib/monitoring/add-sites.js'
import { CheckRecorder } from '../../../lib/monitoring/recorder.js'
import { SiteStates } from '../../../lib/monitoring/site-state.js'
import { StateSync } from '../../../lib/monitoring/state-sync.js'
import type { CheckResult } from '../../../lib/probing/supervisor.js'
import { listChangedStates } from '../../../lib/store/site-states.js'
import { updateSiteStates } from '../../../lib/store/checks.js'
import { engines, migratedDb } from '../../helpers/db.js'

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
