import t from 'tap'
import { EventFeed } from '../../../lib/events/feed.js'
import { createLogger } from '../../../lib/logger.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import type { EventRow } from '../../../lib/store/events.js'
import { migratedDb } from '../../helpers/db.js'
import { LogCapture } from '../../helpers/server.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')

function until(cond: () => boolean, ms = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const end = Date.now() + ms
    const check = (): void => {
      if (cond()) resolve()
      else if (Date.now() > end) reject(new Error('timed out'))
      else setImmediate(check)
    }
    check()
  })
}

t.test('the feed starts after the newest event and hands every later one to each subscriber, in order', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  await addSites({ db, entries: [{ domain: 'before.example.com', name: null }], now: new Date(T0) })
  // A poll far away: only the wake-up after this process's commits can deliver in time.
  const feed = new EventFeed({ db, logger: createLogger({ level: 'info', stream: new LogCapture() }), pollMs: 600_000 })
  await feed.start()
  t.teardown(() => feed.stop())
  t.equal(feed.lastId, 1, 'starts at the newest committed')
  const a: EventRow[] = []
  const b: number[] = []
  feed.subscribe((e) => a.push(e))
  const stopB = feed.subscribe((e) => b.push(e.id))
  const entries = Array.from({ length: 1100 }, (_, i) => ({ domain: `s${i}.example.com`, name: null }))
  await addSites({ db, entries, now: new Date(T0) })
  await until(() => a.length === 1100)
  t.same(
    a.map((e) => e.id),
    Array.from({ length: 1100 }, (_, i) => i + 2),
    'every event after the start, once, in id order (more than one page)'
  )
  t.match(a[0], {
    type: 'site.added',
    data: JSON.stringify({ site: { domain: 's0.example.com', name: 's0.example.com' }, at: new Date(T0).toISOString() })
  })
  t.same(
    b,
    a.map((e) => e.id),
    'each subscriber gets them all'
  )
  stopB()
  t.equal(feed.subscribers, 1)
  await addSites({ db, entries: [{ domain: 'after.example.com', name: null }], now: new Date(T0) })
  await until(() => a.length === 1101)
  t.equal(b.length, 1100, 'an unsubscribed listener gets nothing more')
})

t.test('the feed survives an unreadable database: one warning, then it reads again from where it was', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const logs = new LogCapture()
  const feed = new EventFeed({ db, logger: createLogger({ level: 'info', stream: logs }), pollMs: 10 })
  await feed.start()
  t.teardown(() => feed.stop())
  const got: number[] = []
  feed.subscribe((e) => got.push(e.id))
  await addSites({ db, entries: [{ domain: 'a.example.com', name: null }], now: new Date(T0) })
  await until(() => got.length === 1)

  await db.raw('ALTER TABLE events RENAME TO events_away')
  const warned = () => logs.lines.filter((l) => l.includes('reading events failed')).length
  await until(() => warned() === 1)
  // Many polls fail meanwhile; the log says it once.
  await until(() => feed.failedReads >= 5)
  t.equal(warned(), 1, 'one warning however many polls failed')
  await db.raw('ALTER TABLE events_away RENAME TO events')
  await addSites({ db, entries: [{ domain: 'b.example.com', name: null }], now: new Date(T0) })
  await until(() => got.length === 2)
  t.same(got, [1, 2], 'the event committed meanwhile arrives, nothing twice')
  await until(() => logs.lines.some((l) => l.includes('reading events again')))
  t.notMatch(logs.lines.join('\n'), /select/i, 'no SQL in the log')
})
