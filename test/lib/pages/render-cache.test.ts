import t from 'tap'
import { RenderCache } from '../../../lib/pages/render-cache.js'
import type { RenderedPage } from '../../../lib/pages/render-cache.js'

const html = (text: string): RenderedPage => ({ status: 200, html: Buffer.from(text) })

t.test('renders are reused for their maximum age, and stale ones do not pile up', async (t) => {
  let now = 10_000
  const cache = new RenderCache({ maxAgeMs: 1000, staleMs: 5000, now: () => now })
  let renders = 0
  const page = (key: string) =>
    cache.get(key, async () => {
      renders++
      return html(`<p>${key} ${renders}</p>`)
    })
  const first = await page('/sites/a')
  t.equal((await page('/sites/a')).html, first.html, 'the same render within the maximum age')
  t.equal(renders, 1)
  for (let i = 0; i < 100; i++) await page(`/sites/s${i}`)
  t.equal(cache.size, 101)
  now = 15_500
  t.not((await page('/sites/a')).html.toString(), first.html.toString(), 'past the stale limit: a request waits for a new render')
  t.equal(cache.size, 1, 'storing a render drops the stale ones, not only when the cache is full')
})

t.test('a render past its maximum age is served while the next is made, up to the stale limit', async (t) => {
  let now = 10_000
  const cache = new RenderCache({ maxAgeMs: 1000, staleMs: 5000, now: () => now })
  const releases: Array<(page: RenderedPage) => void> = []
  let renders = 0
  // Each render waits until the test lets it finish.
  const page = () =>
    cache.get(
      '/',
      () =>
        new Promise<RenderedPage>((resolve) => {
          renders++
          releases.push(resolve)
        })
    )
  const waiting = page()
  t.equal(renders, 1)
  releases.shift()?.(html('one'))
  t.equal((await waiting).html.toString(), 'one', 'the first request waits for the first render')

  now = 12_000
  t.equal((await page()).html.toString(), 'one', 'past the maximum age, the kept render is answered at once')
  t.equal(renders, 2, 'and the next render begins')
  t.equal((await page()).html.toString(), 'one', 'a request while it is made gets the kept one too')
  t.equal(renders, 2, 'one render at a time')
  releases.shift()?.(html('two'))
  await new Promise((resolve) => setImmediate(resolve))
  t.equal((await page()).html.toString(), 'two', 'then the new render')
  t.equal(renders, 2)
})

t.test('a render that fails in the background leaves the kept one served until the stale limit', async (t) => {
  let now = 20_000
  const failing = new RenderCache({ maxAgeMs: 1000, staleMs: 5000, now: () => now })
  await failing.get('/', async () => html('kept'))
  now = 21_500
  let failed = 0
  const broken = () =>
    failing.get('/', async () => {
      failed++
      throw new Error('the database is away')
    })
  t.equal((await broken()).html.toString(), 'kept', 'a failing render in the background leaves the kept one served')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(failed, 1)
  now = 25_500
  await t.rejects(broken(), /the database is away/, 'past the stale limit, the request waits for a render and sees its failure')
})

t.test('a forgotten page is rendered anew, and a render begun before is not kept', async (t) => {
  const now = 10_000
  const cache = new RenderCache({ maxAgeMs: 1000, staleMs: 5000, now: () => now })
  const releases: Array<(page: RenderedPage) => void> = []
  const page = (key = '/status/a.json') => cache.get(key, () => new Promise<RenderedPage>((resolve) => releases.push(resolve)))
  const first = page()
  releases.shift()?.(html('one'))
  t.equal((await first).html.toString(), 'one')
  t.equal((await page()).html.toString(), 'one', 'kept within its maximum age')
  t.equal(releases.length, 0)

  cache.forget('/status/a.json')
  const before = page()
  t.equal(releases.length, 1, 'forgotten: the next request waits for a new render at once, within the maximum age')
  cache.forget('/status/a.json')
  const after = page()
  t.equal(releases.length, 2, 'forgotten while a render is under way: the next request does not join it')
  releases.shift()?.(html('old'))
  t.equal((await before).html.toString(), 'old', 'the render under way still answers who waited for it')
  releases.shift()?.(html('new'))
  t.equal((await after).html.toString(), 'new')
  t.equal((await page()).html.toString(), 'new', 'the render begun after forget is the one kept')
  t.equal(releases.length, 0)

  const other = page('/status/b.json')
  releases.shift()?.(html('b'))
  await other
  cache.forget('/status/a.json')
  t.equal((await page('/status/b.json')).html.toString(), 'b', 'other keys stay')
  t.equal(releases.length, 0)
})
