import t from 'tap'
import { EventFeed } from '../../../lib/events/feed.js'
import { EventStreams } from '../../../lib/events/streams.js'
import { createLogger } from '../../../lib/logger.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { announceToOthers, othersAnnounce } from '../../../lib/sharing/events.js'
import { openDb } from '../../../lib/store/db.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { holds } from '../../helpers/poll.js'
import { redisDb, sharedRedis } from '../../helpers/redis.js'

const REDIS_DB = 3
const T0 = Date.parse('2026-11-24T06:00:00.000Z')

/** The ids and types of the event frames a stream wrote, in the order written. */
function frames(text: string): Array<{ id: number; type: string }> {
  return [...text.matchAll(/^id: (\d+)\nevent: ([a-z.]+)\n/gm)].map((m) => ({ id: Number(m[1]), type: m[2] as string }))
}

for (const engine of engines()) {
  t.test(`${engine}: an event committed through instance A reaches a stream on instance B, once and in order`, async (t) => {
    const redisUrl = await redisDb(t, REDIS_DB)
    const { db: dbA, url } = await migratedDb(engine, t)
    // Instance B has a connection pool of its own to the same database, as another process would.
    const dbB = openDb(url)
    t.teardown(() => dbB.destroy())
    const logger = createLogger({ level: 'silent' })
    const a = await sharedRedis(t, redisUrl)
    const b = await sharedRedis(t, redisUrl)
    t.teardown(announceToOthers(a.redis))
    const feedA = new EventFeed({ db: dbA, logger })
    // B polls once in ten minutes and never hears this process's own commits: only Redis can wake it in time.
    const feedB = new EventFeed({ db: dbB, logger, pollMs: 600_000, wakeups: [othersAnnounce(b.redis)] })
    await feedA.start()
    await feedB.start()
    t.teardown(() => feedA.stop())
    t.teardown(() => feedB.stop())
    const streams = new EventStreams({ db: dbB, feed: feedB, logger })
    t.teardown(() => {
      streams.close()
    })
    const out = await streams.open({ key: 'k', since: null })
    let text = ''
    out.setEncoding('utf8')
    out.on('data', (chunk: string) => {
      text += chunk
    })

    await addSites({ db: dbA, entries: [{ domain: 'one.example.com', name: null }], now: new Date(T0) })
    t.ok(await holds(() => frames(text).length === 1, 10_000), 'the first event reached B')
    await addSites({
      db: dbA,
      entries: ['two', 'three', 'four'].map((n) => ({ domain: `${n}.example.com`, name: null })),
      now: new Date(T0)
    })
    await addSites({ db: dbA, entries: [{ domain: 'five.example.com', name: null }], now: new Date(T0) })
    t.ok(await holds(() => frames(text).length >= 5, 10_000), 'and the later ones')
    // A wake-up for nothing new (B's own connection publishing, a duplicate message) writes nothing twice.
    b.redis.publish(b.redis.key('events'), '')
    await addSites({ db: dbA, entries: [{ domain: 'six.example.com', name: null }], now: new Date(T0) })
    t.ok(await holds(() => frames(text).length >= 6, 10_000))
    t.same(
      frames(text),
      [1, 2, 3, 4, 5, 6].map((id) => ({ id, type: 'site.added' })),
      'every event once, in id order'
    )
    t.equal(feedB.lastId, 6)
  })
}
