import FakeTimers from '@sinonjs/fake-timers'
import t from 'tap'
import { bearer } from '../helpers/server.js'
import { trackedServer } from '../helpers/sites.js'

// Unauthenticated routes must not cost what the tracked set costs per request: anyone can ask.
const SITES = 10_000
const sites = Array.from({ length: SITES }, (_, i) => ({ domain: `site${i}.example.com`, name: null }))

t.test(`GET / at ${SITES} sites, asked 200 times a second for 10 s, builds the site list at most once a second`, async (t) => {
  const s = await trackedServer(t, { sites, start: Date.now() })
  const key = await s.issueKey({ limit: 1_000_000 })
  let lists = 0
  const listPage = s.states.listPage.bind(s.states)
  s.states.listPage = (...args) => {
    lists++
    return listPage(...args)
  }
  // The page cache's clock is faked: each second's 200 page and 50 status requests are answered
  // within one instant of it, then it moves on a second. (How fast the API stays under such a load
  // is measured by bench/monitor, which asks for pages, badges and statuses while it runs.)
  const clock = FakeTimers.install({ toFake: ['performance'] })
  t.teardown(() => {
    clock.uninstall()
  })
  clock.tick(1000) // lru-cache takes a start time of 0 for "no clock yet"
  const pages: number[] = []
  const api: number[] = []
  for (let second = 0; second < 10; second++) {
    const [p, a] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, () => s.server.inject('/').then((r) => r.statusCode))),
      Promise.all(
        Array.from({ length: 50 }, () =>
          s.server.inject({ url: '/api/v1/status/site5.example.com', headers: bearer(key) }).then((r) => r.statusCode)
        )
      )
    ])
    pages.push(...p)
    api.push(...a)
    clock.tick(1001)
  }
  t.same(new Set(pages), new Set([200]), `all ${pages.length} page requests were served`)
  t.same(new Set(api), new Set([200]), `and all ${api.length} status requests`)
  // At most once a second: past a second the kept render is served while the next one is made, and
  // here the next second's requests come before that render ends, so some seconds make none.
  t.ok(lists >= 2 && lists <= 10, `the site list was built ${lists} times in 10 s, not once per request`)
})

t.test('a burst of requests for one site page costs one render and its queries', async (t) => {
  const s = await trackedServer(t, { sites: sites.slice(0, 10), start: Date.now() })
  let queries = 0
  s.db.on('query', () => {
    queries++
  })
  const first = await s.server.inject('/sites/site3.example.com')
  t.equal(first.statusCode, 200)
  const perRender = queries
  t.ok(perRender >= 1, `one render asks the database ${perRender} times`)
  queries = 0
  const burst = await Promise.all(Array.from({ length: 100 }, () => s.server.inject('/sites/site4.example.com')))
  t.same(new Set(burst.map((r) => r.statusCode)), new Set([200]))
  t.equal(queries, perRender, '100 requests for a page asked the database as often as one')
  t.equal(new Set(burst.map((r) => r.payload)).size, 1, 'and got the same page')
  t.match(burst[0]?.headers, {
    'content-type': 'text/html; charset=utf-8',
    'x-content-type-options': 'nosniff',
    'content-security-policy': /default-src 'none'/
  })
  queries = 0
  t.equal((await s.server.inject('/sites/untracked.example.com')).statusCode, 404)
  t.equal((await s.server.inject('/sites/bad..name')).statusCode, 400)
  t.equal(queries, 0, 'an untracked or bad domain costs no query')
})
