import t from 'tap'
import { engines } from '../helpers/db.js'
import { startDnsServer } from '../helpers/dns-server.js'
import { holds } from '../helpers/poll.js'
import { startTrackedService } from '../helpers/tracked-service.js'

// Names under good.test answer at once; names under hang.test are never answered.
const dns = await startDnsServer([
  { suffix: 'hang.test', A: 'drop', AAAA: 'drop' },
  { suffix: 'good.test', A: ['127.0.0.1'], AAAA: [] }
])
t.teardown(() => dns.close())

const FLOOD = 300

for (const engine of engines()) {
  t.test(`a resolver that never answers some names delays no other check, on ${engine}`, async (t) => {
    const tracked = await startTrackedService(t, {
      engine,
      site: { domain: 'up1.good.test', name: 'Up 1' },
      sites: [{ domain: 'up2.good.test', name: 'Up 2' }],
      // The scheduler's probes apart from the flood of on-demand ones, as in production.
      scheduledActors: true,
      // Every name is dialled as itself (so it is looked up), on the target's ports.
      env: (ports) => ({
        DNS_SERVERS: dns.address,
        CONNECT_TO: `:443::${ports.closed},:80::${ports.http}`,
        // A 7 s DNS budget. A scheduled check held up by a look-up it does not own would run past
        // its 4 s interval and show as skipped; 4 s, not 3, leaves room for a machine short of CPU,
        // where the scheduler's actors run below the test's other work (at 3 s a plain check
        // outran its interval once, with the whole suite running four files at a time on 2 cores).
        PROBE_TIMEOUT_MS: '14000',
        CHECK_INTERVAL_S: '4',
        CACHE_TTL_S: '0'
      })
    })
    const { server, monitoring, db } = tracked.service
    const check = async (domain: string) => {
      const res = await server.inject({
        method: 'POST',
        url: '/api/v1/check',
        headers: { authorization: `Bearer ${tracked.key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ domain })
      })
      return { status: res.statusCode, body: JSON.parse(res.payload) }
    }
    const stats = () => monitoring.scheduler.stats()
    t.ok(
      await holds(() => tracked.hosts.includes('up1.good.test') && tracked.hosts.includes('up2.good.test'), 10_000),
      'the tracked sites were reached through the loopback resolver'
    )

    // The flood: FLOOD checks of never-answered names in flight until the test has seen what it
    // waits for, each replaced by another as it ends. One wave alone may end before a round of the
    // schedule comes: c-ares fits its timeouts to the answers it has had, and gives up on a name
    // well inside the budget (about 4.5 s of 7 here).
    type Answer = Awaited<ReturnType<typeof check>> & { ms: number }
    const flooded: Answer[] = []
    let asked = 0
    let stop = false
    const keepAsking = async (): Promise<void> => {
      while (!stop) {
        const started = performance.now()
        const answer = await check(`h${asked++}.hang.test`)
        flooded.push({ ...answer, ms: performance.now() - started })
      }
    }
    const flood = Promise.all(Array.from({ length: FLOOD }, keepAsking))
    t.teardown(() => {
      stop = true
    })
    t.ok(
      await holds(async () => {
        const seen = new Set(await dns.queries())
        return Array.from({ length: FLOOD }, (_, i) => `A h${i}.hang.test`).every((q) => seen.has(q))
      }, 10_000),
      `${FLOOD} look-ups are pending`
    )
    const before = stats()

    const fastStarted = performance.now()
    const fast = await Promise.all(Array.from({ length: 20 }, (_, i) => check(`f${i}.good.test`)))
    t.comment(`20 checks of answering names took ${Math.round(performance.now() - fastStarted)} ms`)
    t.same(
      fast.map((r) => [r.status, r.body.status, r.body.locations?.map((l: { error: string | null }) => l.error)]),
      fast.map(() => [200, 'up', [null, null, null]]),
      'checks of answering names are up'
    )
    t.equal(flooded.length, 0, 'and answered before any never-answered look-up gave up')
    t.ok(await holds(() => stats().started >= before.started + 2, 10_000), 'scheduled checks go on meanwhile (a round of both sites)')
    stop = true
    await flood

    const shortest = Math.min(...flooded.map((r) => r.ms))
    t.ok(shortest > 2000, `each never-answered name held its check for seconds (the shortest ${Math.round(shortest)} ms)`)
    t.same(new Set(flooded.map((r) => r.status)), new Set([200]))
    t.same(
      new Set(flooded.flatMap((r) => r.body.locations.map((l: { error: string }) => l.error))),
      new Set(["dns: TIMEOUT (this location's resolver)"]),
      'each never-answered name cost its probes their DNS timeout and is reported as such'
    )
    t.same(
      new Set(flooded.flatMap((r) => r.body.locations.map((l: { status: string }) => l.status))),
      new Set(['error']),
      "a resolver that does not answer in time is the location's failure, never the site's down"
    )
    t.equal(stats().late, 0, 'no scheduled check started late')
    t.equal(stats().skipped, 0, 'none was skipped')

    const notUp = await db('checks').whereNot({ status: 'up' }).count({ n: '*' }).first()
    t.equal(Number(notUp?.n), 0, 'no tracked site was recorded anything but up')
    const outages = await db('outages').count({ n: '*' }).first()
    t.equal(Number(outages?.n), 0, 'and no outage was opened')
  })
}
