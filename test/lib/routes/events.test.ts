import t, { type Test } from 'tap'
import { EventFeed } from '../../../lib/events/feed.js'
import { EventStreams } from '../../../lib/events/streams.js'
import { createLogger } from '../../../lib/logger.js'
import { addSite, addSites } from '../../../lib/monitoring/add-sites.js'
import { recordCheck } from '../../../lib/monitoring/record/record-check.js'
import type { Db } from '../../../lib/store/db.js'
import { scheduledCheck } from '../../helpers/checks.js'
import { openApiProblems } from '../../helpers/openapi.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { bearer, LogCapture, testServer } from '../../helpers/server.js'
import { SseClient } from '../../helpers/sse.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')

/** A listening server with a feed and streams over a fresh database; everything torn down with `t`. */
async function eventServer(
  t: Test,
  { engine = 'sqlite', heartbeatMs = 10_000 }: { engine?: 'sqlite' | 'mysql'; heartbeatMs?: number } = {}
) {
  const { db } = await migratedDb(engine, t)
  const logger = createLogger({ level: 'info', stream: new LogCapture() })
  const feed = new EventFeed({ db, logger, pollMs: 50 })
  await feed.start()
  const streams = new EventStreams({ db, feed, logger, heartbeatMs })
  const { server, issueKey } = await testServer({ db, events: streams })
  await server.start()
  t.teardown(async () => {
    streams.close()
    await server.stop()
    await feed.stop()
  })
  const key = await issueKey({ limit: 1000 })
  const url = `http://127.0.0.1:${server.info.port}/api/v1/events`
  const connect = (query = '', headers: Record<string, string> = {}) => SseClient.connect(url + query, { ...bearer(key), ...headers })
  return { db, feed, streams, server, key, issueKey, url, connect }
}

let n = 0
const add = (db: Db, count = 1) =>
  addSites({ db, entries: Array.from({ length: count }, () => ({ domain: `s${++n}.example.com`, name: null })), now: new Date(T0) })

t.test('a stream answers text/event-stream, uncompressed, and carries each event as it commits', async (t) => {
  const { db, connect } = await eventServer(t)
  const client = await connect('', { 'accept-encoding': 'gzip, deflate, br' })
  t.equal(client.status, 200)
  t.match(client.headers['content-type'], /^text\/event-stream/)
  t.equal(client.headers['content-encoding'], undefined, 'not compressed although the client accepts gzip')
  t.equal(client.headers['cache-control'], 'no-cache')
  t.equal(client.headers['x-accel-buffering'], 'no')
  t.ok(client.headers['ratelimit-remaining'], 'a keyed answer with its budget')

  await addSite({ db, entry: { domain: 'shop.example.com', name: 'Shop' }, now: new Date(T0) })
  const id = Number((await db('sites').first('id')).id)
  await recordCheck({ db, check: scheduledCheck(id, 'down', T0 + 60_000) })
  await recordCheck({ db, check: scheduledCheck(id, 'up', T0 + 180_000) })
  await client.waitFor((c) => c.events.length >= 3)
  const site = { domain: 'shop.example.com', name: 'Shop' }
  t.same(client.events, [
    { kind: 'event', id: 1, type: 'site.added', data: { site, at: new Date(T0).toISOString() } },
    {
      kind: 'event',
      id: 2,
      type: 'outage.opened',
      data: { ...site, started_at: new Date(T0 + 60_000).toISOString(), ended_at: null, duration_seconds: 0, site }
    },
    {
      kind: 'event',
      id: 3,
      type: 'outage.closed',
      data: {
        ...site,
        started_at: new Date(T0 + 60_000).toISOString(),
        ended_at: new Date(T0 + 180_000).toISOString(),
        duration_seconds: 120,
        site
      }
    }
  ])
  client.close()
})

for (const engine of engines()) {
  t.test(`a client reconnecting with Last-Event-ID gets exactly what it missed, then what follows, on ${engine}`, async (t) => {
    const { db, connect } = await eventServer(t, { engine })
    const first = await connect()
    await add(db, 3)
    await first.waitFor((c) => c.events.length === 3)
    const seen = first.events.at(-1)?.id as number
    first.close()

    await add(db, 2)
    const again = await connect('?since=1', { 'last-event-id': String(seen) })
    await again.waitFor((c) => c.events.length === 2)
    await add(db, 1)
    await again.waitFor((c) => c.events.length === 3)
    t.same(
      again.events.map((e) => e.id),
      [seen + 1, seen + 2, seen + 3],
      'Last-Event-ID wins over since; the missed ones, then the live one'
    )
    again.close()
  })

  t.test(`a long replay while events keep committing has no gap and no duplicate, on ${engine}`, async (t) => {
    const { db, connect } = await eventServer(t, { engine })
    await add(db, 1200)
    const client = await connect('?since=0')
    // Transactions committing while the replay reads its pages.
    for (let i = 0; i < 10; i++) await add(db, 3)
    const last = Number((await db('event_sequence').first('last_id')).last_id)
    await client.waitFor((c) => c.events.at(-1)?.id === last, 20_000)
    t.same(
      client.events.map((e) => e.id),
      Array.from({ length: last }, (_, i) => i + 1),
      `every id from 1 to ${last}, once each, in order`
    )
    client.close()
  })
}

t.test('a burst of events reaches live, replaying and newly opened streams once each, in order', async (t) => {
  const { db, connect, streams, feed } = await eventServer(t)
  await add(db, 5)
  const live = [await connect(), await connect()]
  const replaying = await connect('?since=0')
  await replaying.waitFor((c) => c.events.length === 5)
  // 600 events in one transaction: the feed reads them in two pages and hands them over in two turns.
  await add(db, 600)
  const late = await connect('?since=300')
  await add(db, 2)
  const last = Number((await db('event_sequence').first('last_id')).last_id)
  for (const client of [...live, replaying, late]) await client.waitFor((c) => c.events.at(-1)?.id === last, 20_000)
  const ids = (from: number) => Array.from({ length: last - from }, (_, i) => from + i + 1)
  for (const [i, client] of live.entries())
    t.same(
      client.events.map((e) => e.id),
      ids(5),
      `live stream ${i + 1}: 6 to ${last}, once each`
    )
  t.same(
    replaying.events.map((e) => e.id),
    ids(0),
    `the replaying stream: 1 to ${last}, once each`
  )
  t.same(
    late.events.map((e) => e.id),
    ids(300),
    `the stream opened during the burst: 301 to ${last}, once each`
  )
  t.same(late.events.at(-1), live[0]?.events.at(-1), 'the same frame on every stream')
  for (const client of [...live, replaying, late]) client.close()
  await new Promise<void>((resolve) => {
    const check = (): void => {
      if (streams.count() === 0) resolve()
      else setImmediate(check)
    }
    check()
  })
  t.equal(feed.subscribers, 0, 'no stream open: no subscription')
})

t.test('a replay from an id already pruned starts at the oldest kept and says so first', async (t) => {
  const { db, connect } = await eventServer(t)
  await add(db, 6)
  await db('events').where('id', '<=', 4).delete()
  const client = await connect('?since=2')
  await client.waitFor((c) => c.events.length === 2)
  t.same(client.blocks[0], { kind: 'comment', text: 'events 3 to 4 were pruned; replaying from 5' })
  t.same(
    client.events.map((e) => e.id),
    [5, 6]
  )
  client.close()

  const ahead = await connect('?since=99')
  await ahead.waitFor((c) => c.blocks.length > 0)
  t.match(ahead.blocks[0], { kind: 'comment', text: /^no event 99 here/ }, 'an id from elsewhere streams from the newest')
  await add(db, 1)
  await ahead.waitFor((c) => c.events.length === 1)
  t.equal(ahead.events[0]?.id, 7)
  ahead.close()
})

t.test('bad since or Last-Event-ID is 400 JSON', async (t) => {
  const { server, key } = await eventServer(t)
  for (const [url, headers] of [
    ['/api/v1/events?since=abc', {}],
    ['/api/v1/events?since=-1', {}],
    ['/api/v1/events?since=1e3', {}],
    ['/api/v1/events', { 'last-event-id': 'x1' }],
    ['/api/v1/events?other=1', {}]
  ] as const) {
    const res = await server.inject({ url, headers: { ...bearer(key), ...headers } })
    t.equal(res.statusCode, 400, url)
    t.match(JSON.parse(res.payload), { error: String }, 'with a JSON error')
    t.notMatch(res.payload, /stack|select/i)
    t.same(openApiProblems(res), [], 'as documented')
  }
  const res = await server.inject({ url: '/api/v1/events' })
  t.equal(res.statusCode, 401, 'a key is needed')
})

t.test('a comment keeps every stream alive', async (t) => {
  const { connect } = await eventServer(t, { heartbeatMs: 50 })
  const client = await connect()
  await client.waitFor((c) => c.blocks.filter((b) => b.kind === 'comment' && b.text === '').length >= 2)
  t.pass('heartbeats arrive')
  client.close()
})

t.test('a key holds ten streams; the eleventh is 429 and costs nothing; a client leaving frees its slot at once', async (t) => {
  const { connect, streams, feed, issueKey, url } = await eventServer(t)
  const open = []
  for (let i = 0; i < 10; i++) open.push(await connect())
  const other = await SseClient.connect(url, bearer(await issueKey({ name: 'other' })))
  t.equal(other.status, 200, 'another key is not affected')
  const eleventh = await connect()
  t.equal(eleventh.status, 429)
  t.match(JSON.parse(eleventh.body), { error: /too many open event streams/ })
  t.equal(eleventh.headers['ratelimit-remaining'], open[9]?.headers['ratelimit-remaining'], 'the refused stream consumed nothing')
  t.equal(streams.count(), 11)

  open.pop()?.close()
  other.close()
  await new Promise<void>((resolve) => {
    const check = (): void => {
      if (streams.count() === 9) resolve()
      else setImmediate(check)
    }
    check()
  })
  t.equal(feed.subscribers, 1, 'the open streams share one subscription to the feed')
  const again = await connect()
  t.equal(again.status, 200, 'the slot is free again')
  for (const c of [...open, again]) c.close()
})

t.test('closing the streams ends each cleanly and refuses new ones', async (t) => {
  const { connect, streams, feed } = await eventServer(t)
  const a = await connect()
  const b = await connect('?since=0')
  await b.waitFor((c) => c.blocks.length > 0)
  streams.close()
  t.equal(await a.ended, true, 'the first ended cleanly')
  t.equal(await b.ended, true, 'and the second')
  t.match(a.blocks.at(-1), { kind: 'comment', text: /stopping/ })
  t.equal(streams.count(), 0)
  t.equal(feed.subscribers, 0)
  const late = await connect()
  t.equal(late.status, 503)
  t.match(JSON.parse(late.body), { error: String })
})
