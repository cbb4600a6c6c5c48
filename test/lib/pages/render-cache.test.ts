import t from 'tap'
import { RenderCache } from '../../../lib/pages/render-cache.js'

t.test('renders are reused for their maximum age, and stale ones do not pile up', async (t) => {
  let now = 10_000
  const cache = new RenderCache({ maxAgeMs: 1000, now: () => now })
  let renders = 0
  const page = (key: string) =>
    cache.get(key, async () => {
      renders++
      return { status: 200, html: Buffer.from(`<p>${key} ${renders}</p>`) }
    })
  const first = await page('/sites/a')
  t.equal((await page('/sites/a')).html, first.html, 'the same render within the maximum age')
  t.equal(renders, 1)
  for (let i = 0; i < 100; i++) await page(`/sites/s${i}`)
  t.equal(cache.size, 101)
  now = 11_500
  t.not((await page('/sites/a')).html.toString(), first.html.toString(), 'rendered again once stale')
  t.equal(cache.size, 1, 'storing a render drops the stale ones, not only when the cache is full')
})
