import t from 'tap'
import { openDb } from '../../../lib/store/db.js'
import {
  appendEvents,
  latestEventId,
  listEventsAfter,
  listSiteEvents,
  oldestEventId,
  pruneEvents,
  type EventInsert
} from '../../../lib/store/events.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { holds } from '../../helpers/poll.js'

const T0 = Date.parse('2026-11-24T06:00:00.000Z')

const event = (type: string, siteId: number | null, at = T0): EventInsert => ({
  type,
  siteId,
  data: JSON.stringify({ type }),
  at: new Date(at)
})

for (const engine of engines()) {
  t.test(`events are appended in id order and read back, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    t.equal(await latestEventId({ db }), 0, 'no event yet')
    t.equal(await oldestEventId({ db }), null)
    await t.rejects(appendEvents({ db, events: [event('site.added', 1)] }), /transaction/, 'outside a transaction it refuses')

    const first = await db.transaction((trx) => appendEvents({ db: trx, events: [event('site.added', 1), event('site.added', 2)] }))
    t.same(
      first.map((e) => e.id),
      [1, 2],
      'ids start at 1 and follow each other'
    )
    await t.rejects(
      db.transaction(async (trx) => {
        await appendEvents({ db: trx, events: [event('site.removed', 1)] })
        throw new Error('the change it announces failed')
      }),
      /failed/
    )
    t.equal(await latestEventId({ db }), 2, 'a rolled-back append takes no id')
    const [third] = await db.transaction((trx) => appendEvents({ db: trx, events: [event('outage.opened', 2, T0 + 1000)] }))
    t.equal(third?.id, 3, 'so ids have no gaps')

    const all = await listEventsAfter({ db, afterId: 0, limit: 10 })
    t.same(
      all.map((e) => [e.id, e.type, e.site_id, e.created_at.toISOString()]),
      [
        [1, 'site.added', 1, new Date(T0).toISOString()],
        [2, 'site.added', 2, new Date(T0).toISOString()],
        [3, 'outage.opened', 2, new Date(T0 + 1000).toISOString()]
      ]
    )
    t.same(JSON.parse(all[2]?.data ?? ''), { type: 'outage.opened' }, 'the payload is kept as written')
    t.same(
      (await listEventsAfter({ db, afterId: 1, limit: 1 })).map((e) => e.id),
      [2],
      'after an id, at most limit'
    )
    t.same(
      (await listSiteEvents({ db, siteId: 2, limit: 10 })).map((e) => e.id),
      [3, 2],
      "a site's events, newest first"
    )
    t.equal(await pruneEvents({ db, before: new Date(T0 + 1) }), 2, 'prune deletes the older ones')
    t.equal(await oldestEventId({ db }), 3)
    t.equal(await latestEventId({ db }), 3, 'pruning does not move the sequence')
  })
}

if (engines().includes('mysql')) {
  t.test('a second appender waits for the first to commit, so ids commit in order, on mysql', async (t) => {
    const { db, url } = await migratedDb('mysql', t)
    const watcher = openDb(url)
    t.teardown(() => watcher.destroy())
    const a = await db.transaction()
    await appendEvents({ db: a, events: [event('site.added', 1)] })
    const b = db.transaction(async (trx) => appendEvents({ db: trx, events: [event('site.added', 2)] }))
    let bDone = false
    void b.finally(() => {
      bDone = true
    })
    // The second appender's update shows in the process list while it waits for the row (InnoDB's
    // own lock tables are a cache refreshed at its leisure, so they may not show it yet).
    const database = new URL(url).pathname.slice(1)
    t.ok(
      await holds(async () => {
        const [rows] = await watcher.raw(
          "select count(*) as n from information_schema.processlist where db = ? and info like 'update `event_sequence`%'",
          [database]
        )
        return Number(rows[0].n) > 0
      }, 10_000),
      'the second appender is at the sequence row'
    )
    t.notOk(bDone, 'and waits there while the first has not committed')
    t.same(await listEventsAfter({ db: watcher, afterId: 0, limit: 10 }), [], 'nothing is visible before the first commits')
    await a.commit()
    const [second] = await b
    t.equal(second?.id, 2, 'the second gets the next id once the first committed')
    t.same(
      (await listEventsAfter({ db: watcher, afterId: 0, limit: 10 })).map((e) => e.id),
      [1, 2]
    )
  })
}
