import t from 'tap'
import { loadStatusPageView } from '../../../lib/pages/status-page-model.js'
import { engines } from '../../helpers/db.js'
import { NOW, OUTAGE_DAY, seededPage } from '../../helpers/status-pages.js'

for (const engine of engines()) {
  t.test(`a page's view: its sites' states, 90 daily bars and incidents, from a recorded history, on ${engine}`, async (t) => {
    const api = await seededPage(t, engine)
    let queries = 0
    api.db.on('query', () => queries++)
    const view = await loadStatusPageView({ db: api.db, states: api.states, slug: 'acme', now: new Date(NOW) })
    if (view === null) throw new Error('no view')
    t.ok(queries <= 5, `a handful of queries whatever the history (${queries})`)

    t.match(view, {
      slug: 'acme',
      title: 'Acme & Co <status>',
      description: 'Our services',
      logo_url: null,
      state: 'partial outage',
      generated_at: new Date(NOW).toISOString(),
      updated_at: new Date(NOW - 3_600_000).toISOString()
    })
    t.same(
      view.sites.map((s) => [s.domain, s.name, s.status, s.maintenance?.reason ?? null]),
      [
        [null, 'Web shop', 'down', null],
        ['blog.example.com', 'Blog', 'up', 'weekly upgrade'],
        ['api.example.com', 'API', 'up', null],
        ['new.example.com', 'New', 'pending', null]
      ],
      "the page's order and names (a display name hides the domain); blog is in its maintenance window now; new is not checked yet"
    )
    t.same(
      view.sites.map((s) => s.anchor),
      [`s${api.ids.get('shop.example.com')}`, 'blog.example.com', 'api.example.com', 'new.example.com'],
      'an anchor that does not name the domain behind a display name'
    )
    t.same(
      view.sites.map((s) => s.uptime_percent),
      [view.sites[0]?.uptime_percent, 100, 100, null],
      'uptime per site over 30 days; none for a site never checked'
    )
    t.ok((view.sites[0]?.uptime_percent ?? 100) < 100, 'the shop lost some')
    t.equal(view.sites[1]?.maintenance?.until, '2026-11-28T13:00:00.000Z')

    const [shop, blog, apiSite, fresh] = view.sites
    for (const site of view.sites) t.equal(site.days.length, 90, `${site.name}: 90 days`)
    t.match(
      shop?.days.find((d) => d.date === OUTAGE_DAY),
      { uptime_percent: 75, down_seconds: 6 * 3600, outages: 1 },
      'the day with a 6-hour outage shows 75'
    )
    t.match(
      shop?.days.find((d) => d.date === '2026-11-17'),
      { down_seconds: 2 * 3600, outages: 1 },
      'across midnight: 2 h the first day'
    )
    t.match(
      shop?.days.find((d) => d.date === '2026-11-18'),
      { down_seconds: 2 * 3600, outages: 1 },
      'and 2 h the next'
    )
    t.match(
      shop?.days.at(-1),
      { date: '2026-11-28', uptime_percent: Math.round(((100 * 11) / 12) * 1000) / 1000 },
      'today: 1 of 12 hours down'
    )
    t.ok(
      blog?.days.every((d) => d.uptime_percent === 100),
      'maintenance is neither down nor missing data'
    )
    t.equal(blog?.days.filter((d) => d.maintenance_seconds > 0).length, 13, 'but is counted on its own: a weekly window over 90 days')
    t.same(
      apiSite?.days.map((d) => d.uptime_percent === null),
      [...Array<boolean>(84).fill(true), ...Array<boolean>(6).fill(false)],
      'before its first check (5 days ago, at noon) a day has no data'
    )
    t.ok(
      fresh?.days.every((d) => d.uptime_percent === null),
      'never checked: no data on any day'
    )

    t.same(
      view.incidents.map((i) => [i.domain, i.name, i.started_at, i.ended_at]),
      [
        [null, 'Web shop', '2026-11-28T11:00:00.000Z', null],
        [null, 'Web shop', '2026-11-20T06:00:00.000Z', '2026-11-20T12:00:00.000Z'],
        [null, 'Web shop', '2026-11-17T22:00:00.000Z', '2026-11-18T02:00:00.000Z']
      ],
      'ongoing first, then newest first; never a site the page does not list'
    )
    t.equal(view.incidents[0]?.duration_seconds, 3600)
    t.equal(new Set(view.incidents.map((i) => i.id)).size, 3, 'each with its own id')
    t.notMatch(JSON.stringify(view), /secret|Secret|settings|expect|key/, 'nothing of other sites, settings or keys')
    t.notMatch(JSON.stringify(view), /shop\.example\.com/, 'nor the domain behind a display name')

    t.equal(await loadStatusPageView({ db: api.db, states: api.states, slug: 'nope', now: new Date(NOW) }), null, 'no such page: null')
  })
}
