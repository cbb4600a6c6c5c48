import t, { type Test } from 'tap'
import { decide, type LocationVerdict } from '../../../lib/rules/consensus.js'
import { SiteStates } from '../../../lib/monitoring/state/site-state.js'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer, testServer } from '../../helpers/server.js'
import { MIN, trackedServer, type TrackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const HOUR = 60 * MIN

async function statusOf(t: Test, server: TrackedServer['server'], key: string, domain: string) {
  const res = await server.inject({ url: `/api/v1/status/${domain}`, headers: bearer(key) })
  matchesOpenApi(t, res)
  t.equal(res.statusCode, 200, `status of ${domain}`)
  return JSON.parse(res.payload)
}

for (const engine of engines()) {
  t.test(`blocked and partial checks show through the status endpoint, on ${engine}`, async (t) => {
    const site = await trackedServer(t, { engine, sites: [{ domain: 'guarded.example.com', name: 'Guarded' }], start: T0 })
    const key = await site.issueKey({ limit: 1000 })
    // Each row: what the three locations saw, and what the status record must then say.
    const cases: Array<[LocationVerdict[], { status: string; blocked: boolean; partial: boolean }]> = [
      [['blocked', 'blocked', 'blocked'], { status: 'up', blocked: true, partial: false }],
      [['blocked', 'down', 'error'], { status: 'up', blocked: true, partial: true }],
      [['up', 'up', 'down'], { status: 'up', blocked: false, partial: true }],
      [['up', 'down', 'down'], { status: 'down', blocked: false, partial: true }],
      [['up', 'blocked', 'up'], { status: 'up', blocked: false, partial: false }]
    ]
    let at = T0
    for (const [seen, expected] of cases) {
      at += MIN
      const consensus = decide(seen.map((status) => ({ status, response_ms: 100 })))
      await site.feed('guarded.example.com', consensus.status, at, {
        blocked: consensus.blocked,
        partial: consensus.partial,
        responseMs: consensus.response_ms
      })
      site.clock.now = at + 1000
      t.match(
        await statusOf(t, site.server, key, 'guarded.example.com'),
        { ...expected, checked_at: new Date(at).toISOString() },
        seen.join(', ')
      )
    }
    site.clock.now = at + 3 * MIN + 1
    t.match(
      await statusOf(t, site.server, key, 'guarded.example.com'),
      { status: 'unavailable', blocked: false, partial: false },
      'not once the check is stale'
    )
  })

  t.test(`uptime for outages straddling the window edge, from memory and from the database, on ${engine}`, async (t) => {
    // trackedServer tracks the sites from an hour before `start`.
    const site = await trackedServer(t, {
      engine,
      sites: [
        { domain: 'edge.example.com', name: null },
        { domain: 'ongoing.example.com', name: null }
      ],
      start: T0
    })
    const key = await site.issueKey({ limit: 1000 })
    await site.feed('edge.example.com', 'up', T0)
    await site.feed('edge.example.com', 'down', T0 + HOUR)
    await site.feed('edge.example.com', 'up', T0 + 3 * HOUR)
    await site.feed('ongoing.example.com', 'down', T0 + HOUR)
    site.clock.now = T0 + 26 * HOUR
    // The day window starts at T0 + 2 h: one hour of the edge outage is inside it, one before it.
    // The week and month reach back to each site's first check, not to the start of tracking
    // (T0 - 1 h): 26 hours monitored for edge; ongoing was down from its first check on.
    const round = (x: number) => Math.round(x * 1000) / 1000
    const expected = {
      'edge.example.com': { day: round(100 * (1 - 1 / 24)), week: round(100 * (1 - 2 / 26)), month: round(100 * (1 - 2 / 26)) },
      'ongoing.example.com': { day: 0, week: 0, month: 0 }
    }
    for (const [domain, uptime] of Object.entries(expected)) {
      t.same((await statusOf(t, site.server, key, domain)).uptime_percent, uptime, `${domain}: kept in memory as checks were recorded`)
    }

    // As after a restart: the state read back from the database gives the same figures.
    const reloaded = new SiteStates({ intervalMs: MIN, publicUrl: 'https://status.example.net' })
    await reloaded.refresh(site.db, new Date(site.clock.now))
    const restarted = await testServer({ db: site.db, now: () => new Date(site.clock.now), states: reloaded })
    for (const [domain, uptime] of Object.entries(expected)) {
      t.same((await statusOf(t, restarted.server, key, domain)).uptime_percent, uptime, `${domain}: read back from the database`)
    }
    site.clock.now = T0 + 27 * HOUR + 30 * MIN
    t.same(
      (await statusOf(t, restarted.server, key, 'edge.example.com')).uptime_percent.day,
      100,
      'once the outage has left the day window it no longer counts there'
    )
  })
}

t.test('a polled status is built once per state and second, and anew after a check', async (t) => {
  const site = await trackedServer(t, { sites: [{ domain: 'polled.example.com', name: 'Polled' }], start: T0 })
  const key = await site.issueKey({ limit: 100_000 })
  let built = 0
  const build = site.states.statusRecord.bind(site.states)
  site.states.statusRecord = (domain: string, now: Date) => {
    built++
    return build(domain, now)
  }
  await site.feed('polled.example.com', 'up', T0 - 1000)
  const bodies = new Set<string>()
  for (let i = 0; i < 50; i++)
    bodies.add((await site.server.inject({ url: '/api/v1/status/polled.example.com', headers: bearer(key) })).payload)
  t.equal(built, 1, '50 polls within a second built the record once')
  t.equal(bodies.size, 1)
  await site.feed('polled.example.com', 'down', T0)
  t.match(await statusOf(t, site.server, key, 'polled.example.com'), { status: 'down' }, 'a new check shows at once')
  t.equal(built, 2)
  site.clock.now += 1000
  await statusOf(t, site.server, key, 'polled.example.com')
  t.equal(built, 3, 'and a second later the record is built again, so durations and uptime move with the clock')
})
