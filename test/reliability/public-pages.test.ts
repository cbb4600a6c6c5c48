import t from 'tap'
import { bearer } from '../helpers/server.js'
import { trackedServer } from '../helpers/sites.js'

// Unauthenticated routes must not cost what the tracked set costs per request: anyone can ask.
const SITES = 10_000
const sites = Array.from({ length: SITES }, (_, i) => ({ domain: `site${i}.example.com`, name: null }))

const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number

t.test(`GET / at ${SITES} sites, driven at 200 requests/s for 10 s, leaves the API fast`, async (t) => {
  const s = await trackedServer(t, { sites, start: Date.now() })
  const key = await s.issueKey({ limit: 1_000_000 })
  let lists = 0
  const list = s.states.list.bind(s.states)
  s.states.list = (now: Date) => { lists++; return list(now) }

  const pages: Array<Promise<number>> = []
  const api: Array<Promise<number>> = []
  // A steady load for 10 s: one page request every 5 ms, one status request every 20 ms.
  await new Promise<void>((resolve) => {
    const started = performance.now()
    const pageTimer = setInterval(() => { pages.push(s.server.inject('/').then((r) => r.statusCode)) }, 5)
    const apiTimer = setInterval(() => {
      const t0 = performance.now()
      api.push(s.server.inject({ url: '/api/v1/status/site5.example.com', headers: bearer(key) }).then((r) => {
        t.equal(r.statusCode, 200)
        return performance.now() - t0
      }))
      if (performance.now() - started >= 10_000) {
        clearInterval(pageTimer)
        clearInterval(apiTimer)
        resolve()
      }
    }, 20)
  })
  const statuses = await Promise.all(pages)
  const latencies = await Promise.all(api)
  t.ok(pages.length >= 1000, `${pages.length} page requests were made`)
  t.same(new Set(statuses), new Set([200]), 'every page was served')
  t.ok(lists <= 12, `the site list was built ${lists} times in 10 s, at most once a second, not once per request`)
  const p99 = percentile(latencies, 0.99)
  t.ok(p99 < 50, `status API p99 ${p99.toFixed(1)} ms over ${latencies.length} requests (p50 ${percentile(latencies, 0.5).toFixed(1)} ms)`)
})

t.test('a burst of requests for one site page costs one render and its queries', async (t) => {
  const s = await trackedServer(t, { sites: sites.slice(0, 10), start: Date.now() })
  let queries = 0
  s.db.on('query', () => { queries++ })
  const first = await s.server.inject('/sites/site3.example.com')
  t.equal(first.statusCode, 200)
  const perRender = queries
  t.ok(perRender >= 1, `one render asks the database ${perRender} times`)
  queries = 0
  const burst = await Promise.all(Array.from({ length: 100 }, () => s.server.inject('/sites/site4.example.com')))
  t.same(new Set(burst.map((r) => r.statusCode)), new Set([200]))
  t.equal(queries, perRender, '100 requests for a page asked the database as often as one')
  t.equal(new Set(burst.map((r) => r.payload)).size, 1, 'and got the same page')
  t.match(burst[0]?.headers, { 'content-type': 'text/html; charset=utf-8', 'x-content-type-options': 'nosniff', 'content-security-policy': /default-src 'none'/ })
  queries = 0
  t.equal((await s.server.inject('/sites/untracked.example.com')).statusCode, 404)
  t.equal((await s.server.inject('/sites/bad..name')).statusCode, 400)
  t.equal(queries, 0, 'an untracked or bad domain costs no query')
})
