import { Readable } from 'node:stream'
import { gunzipSync } from 'node:zlib'
import t from 'tap'
import FeedParser from 'feedparser'
import sax from 'sax'
import { BADGE_CACHE_CONTROL } from '../../../lib/badge/renderer.js'
import { statusPageKeys } from '../../../lib/pages/status-page.js'
import { deleteStatusPage, updateStatusPage } from '../../../lib/store/status-pages.js'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { holds } from '../../helpers/poll.js'
import { NOW, OUTAGE_DAY, seededPage, storePage, type SeededPage } from '../../helpers/status-pages.js'

/** The feed read by a real feed parser (strict): its meta and items, or the parser's error. */
function parseFeed(xml: string): Promise<{ meta: FeedParser.Meta; items: FeedParser.Item[] }> {
  return new Promise((resolve, reject) => {
    // `strict` (sax's strict mode: any XML error is an error) is an option its types leave out.
    const options = { strict: true, feedurl: 'https://status.example.net/status/acme/feed.atom' }
    const parser = new FeedParser(options)
    const items: FeedParser.Item[] = []
    parser.on('error', reject)
    parser.on('readable', () => {
      let item: FeedParser.Item | null
      while ((item = parser.read() as FeedParser.Item | null) !== null) items.push(item)
    })
    parser.on('end', () => {
      resolve({ meta: parser.meta as FeedParser.Meta, items })
    })
    Readable.from([xml]).pipe(parser)
  })
}

/**
 * The elements of a document under a strict, namespace-aware XML parser, each with its text:
 * throws when it is not well-formed.
 */
function strictElements(xml: string): Array<{ name: string; uri: string; text: string }> {
  const parser = sax.parser(true, { xmlns: true })
  const seen: Array<{ name: string; uri: string; text: string }> = []
  const open: Array<{ text: string }> = []
  parser.onopentag = (tag) => {
    const element = { name: tag.name, uri: (tag as sax.QualifiedTag).uri, text: '' }
    seen.push(element)
    open.push(element)
  }
  parser.onclosetag = () => open.pop()
  parser.ontext = (text) => {
    const inner = open.at(-1)
    if (inner) inner.text += text
  }
  parser.onerror = (err) => {
    throw err
  }
  parser.write(xml).close()
  return seen
}

/** badge-maker's named colours (lib/color.js). */
const COLOURS: Record<string, string> = { green: '#67ac09', yellow: '#d8b800', orange: '#ea7233', red: '#dd4343', blue: '#007ec6' }

async function addPage(api: SeededPage, slug: string, title: string, domains: string[]): Promise<void> {
  await storePage(
    api.db,
    { slug, title, description: null, logo_url: null },
    domains.map((domain) => ({ domain })),
    new Date(NOW)
  )
}

for (const engine of engines()) {
  t.test(`GET /status/{slug}.json answers the page's view, documented, on ${engine}`, async (t) => {
    const api = await seededPage(t, engine)
    const res = await api.server.inject('/status/acme.json')
    t.equal(res.statusCode, 200)
    matchesOpenApi(t, res, 'the JSON answer')
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.headers['access-control-allow-origin'], '*', 'widgets on any origin may read it')
    const body = JSON.parse(res.payload)
    t.equal(body.state, 'partial outage', 'one site of four down (decisions.md, Status pages)')
    t.same(
      body.sites.map((s: { domain: string; status: string }) => [s.domain, s.status]),
      [
        [null, 'down'],
        ['blog.example.com', 'up'],
        ['api.example.com', 'up'],
        ['new.example.com', 'pending']
      ],
      'a site the page names by a display name shows no domain; one never checked is pending'
    )
    t.notMatch(res.payload, /shop\.example\.com/, 'the domain behind a display name is nowhere in the JSON')
    t.ok(
      body.sites.every((s: { days: unknown[] }) => s.days.length === 90),
      '90 days each'
    )
    t.match(
      body.sites[0].days.find((d: { date: string }) => d.date === OUTAGE_DAY),
      { uptime_percent: 75 },
      'the 6-hour outage day shows 75'
    )
    t.equal(body.sites[3].days[89].uptime_percent, null, 'a never-checked site has no data, not 100')
    t.same(
      body.incidents.map((i: { started_at: string }) => i.started_at),
      ['2026-11-28T11:00:00.000Z', '2026-11-20T06:00:00.000Z', '2026-11-17T22:00:00.000Z'],
      'incidents newest first'
    )
    t.notMatch(res.payload, /secret\.example\.com|Secret internal|"settings"|"expect"|ssk_/, 'nothing the page does not list')

    // The render is kept: a change within the second is not seen until the key is forgotten.
    await api.feed('blog.example.com', 'down', NOW - 1000)
    const kept = await api.server.inject('/status/acme.json')
    t.equal(kept.payload, res.payload, 'served from the render kept')
    api.statusPageRenders.forget(statusPageKeys('acme').json)
    const fresh = JSON.parse((await api.server.inject('/status/acme.json')).payload)
    t.equal(fresh.sites[1].maintenance?.reason, 'weekly upgrade', 'blog down inside its window is still in maintenance')
    t.equal(fresh.state, 'partial outage')
  })

  t.test(`a slug that is no page is a 404, a malformed one a 400, and neither is kept, on ${engine}`, async (t) => {
    const api = await seededPage(t, engine)
    for (const path of ['/status/later.json', '/status/later/feed.atom', '/api/badge/page/later', '/api/badge/page/later/endpoint']) {
      const res = await api.server.inject(path)
      t.same([res.statusCode, JSON.parse(res.payload)], [404, { error: 'no such status page' }], `${path}: 404`)
      if (path.startsWith('/api/badge/')) t.equal(res.headers['cache-control'], 'no-store', `${path}: never kept`)
      matchesOpenApi(t, res, path)
    }
    for (const slug of ['ACME', 'a_b', 'a'.repeat(65), 'caf%C3%A9']) {
      for (const path of [`/status/${slug}.json`, `/status/${slug}/feed.atom`, `/api/badge/page/${slug}`]) {
        const res = await api.server.inject(path)
        t.equal(res.statusCode, 400, `${path}: 400`)
        t.match(JSON.parse(res.payload), { error: '"slug" must be 1 to 64 lower-case letters, digits and hyphens' })
        matchesOpenApi(t, res, path)
      }
    }
    await addPage(api, 'later', 'Later', ['api.example.com'])
    api.clock.now = NOW + 1500
    t.ok(
      await holds(async () => (await api.server.inject('/status/later.json')).statusCode === 200, 5000),
      'a page created since answers within about a second'
    )
    t.equal((await api.server.inject('/api/badge/page/later')).statusCode, 200)
    t.equal((await api.server.inject('/status/later/feed.atom')).statusCode, 200)
  })

  t.test(`GET /status/{slug}/feed.atom is valid Atom with one entry per incident, on ${engine}`, async (t) => {
    const api = await seededPage(t, engine)
    const res = await api.server.inject('/status/acme/feed.atom')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-type'], 'application/atom+xml; charset=utf-8')
    matchesOpenApi(t, res, 'the feed')
    const elements = strictElements(res.payload)
    t.match(elements[0], { name: 'feed', uri: 'http://www.w3.org/2005/Atom' }, 'well-formed, an Atom feed')
    t.equal(elements.find((e) => e.name === 'title')?.text, 'Acme & Co <status>', 'the title escaped, and read back whole')
    t.equal(elements.filter((e) => e.name === 'entry').length, 3)

    const { meta, items } = await parseFeed(res.payload)
    t.equal(meta['#type'], 'atom')
    t.match(meta.title, /^Acme & Co/, 'the title (the parser drops what looks like markup from titles)')
    t.equal(meta.link, 'https://status.example.net/status/acme', 'the alternate link is the HTML page')
    t.equal(meta.xmlurl, 'https://status.example.net/status/acme/feed.atom', 'the self link is the feed')
    t.equal(
      meta.date?.toISOString(),
      new Date(NOW - 3_600_000).toISOString(),
      'updated: the newest change, the outage that began an hour ago'
    )
    t.same(
      items.map((i) => [i.title, i.date?.toISOString()]),
      [
        ['Web shop is down', '2026-11-28T11:00:00.000Z'],
        ['Web shop was down for 6 h', '2026-11-20T12:00:00.000Z'],
        ['Web shop was down for 4 h', '2026-11-18T02:00:00.000Z']
      ],
      'titles, and updated: the start while ongoing, else the end'
    )
    t.match(items[1]?.description, /^Web shop was down from 2026-11-20 06:00:00 UTC to 2026-11-20 12:00:00 UTC/)
    const ids = items.map((i) => i.guid)
    t.ok(
      ids.every((id) => /^tag:status\.example\.net,2026:status\/acme\/outage\/\d+$/.test(id)),
      `tag URIs: ${ids.join(' ')}`
    )
    t.equal(new Set(ids).size, 3)

    // The ongoing outage ends: its entry keeps its id, and says so.
    await api.feed('shop.example.com', 'up', NOW - 500)
    api.statusPageRenders.forget(statusPageKeys('acme').feed)
    const after = await parseFeed((await api.server.inject('/status/acme/feed.atom')).payload)
    t.equal(after.items[0]?.guid, ids[0], 'the same entry id once it ended')
    t.match(after.items[0]?.title, /^Web shop was down for 59 min 59 s$/)
  })

  t.test(`GET /api/badge/page/{slug} says the page state, cached as the site badge is, on ${engine}`, async (t) => {
    const api = await seededPage(t, engine)
    await addPage(api, 'ok', 'All good', ['api.example.com'])
    await addPage(api, 'meh', 'Meh', ['api.example.com', 'new.example.com'])
    await addPage(api, 'part', 'Part', ['shop.example.com', 'api.example.com', 'blog.example.com'])
    await addPage(api, 'major', 'Major', ['shop.example.com', 'api.example.com'])
    await addPage(api, 'works', 'Works', ['blog.example.com', 'api.example.com'])
    await addPage(api, 'long', 'L'.repeat(65), ['api.example.com'])
    const cases: Array<[string, string, string, string]> = [
      ['ok', 'All good', 'operational', 'green'],
      ['meh', 'Meh', 'degraded', 'yellow'],
      ['part', 'Part', 'partial outage', 'orange'],
      ['major', 'Major', 'major outage', 'red'],
      ['works', 'Works', 'maintenance', 'blue'],
      ['acme', 'Acme &amp; Co &lt;status&gt;', 'partial outage', 'orange'],
      ['long', 'status', 'operational', 'green']
    ]
    for (const [slug, label, message, colour] of cases) {
      const res = await api.server.inject(`/api/badge/page/${slug}`)
      t.equal(res.statusCode, 200, `${slug}: 200`)
      matchesOpenApi(t, res, slug)
      t.match(res.payload, `<title>${label}: ${message}</title>`, `${slug}: ${message}`)
      t.match(res.payload, `fill="${COLOURS[colour]}"`, `${slug}: ${colour}`)
    }
    const custom = await api.server.inject('/api/badge/page/ok?label=Acme&style=flat-square')
    t.match(custom.payload, '<title>Acme: operational</title>', 'the label may be replaced')
    t.equal((await api.server.inject('/api/badge/page/ok?style=round')).statusCode, 400, 'an unknown style is a 400')

    const plain = await api.server.inject('/api/badge/page/ok')
    t.match(plain.headers, {
      'content-type': 'image/svg+xml',
      'cache-control': BADGE_CACHE_CONTROL,
      'access-control-allow-origin': '*',
      etag: /^"[^"]+"$/
    })
    const again = await api.server.inject({ url: '/api/badge/page/ok', headers: { 'if-none-match': String(plain.headers.etag) } })
    t.equal(again.statusCode, 304, 'a matching ETag is a 304')
    matchesOpenApi(t, again, '304')
    const zipped = await api.server.inject({ url: '/api/badge/page/ok', headers: { 'accept-encoding': 'gzip' } })
    t.equal(zipped.headers['content-encoding'], 'gzip')
    t.equal(gunzipSync(zipped.rawPayload).toString(), plain.payload, 'gzip: the same badge')

    let queries = 0
    api.db.on('query', () => queries++)
    for (let i = 0; i < 50; i++) await api.server.inject('/api/badge/page/part')
    for (let i = 0; i < 50; i++) await api.server.inject('/api/badge/page/no-such-page')
    t.equal(queries, 0, 'no query per hit, for a page or a slug that is none')

    // The page's sites change: the badge follows once its copy is a second old.
    await api.db.transaction((trx) => updateStatusPage({ db: trx, slug: 'ok', fields: { title: 'Renamed' }, now: new Date(NOW + 1) }))
    api.clock.now = NOW + 1100
    t.ok(
      await holds(
        async () => (await api.server.inject('/api/badge/page/ok')).payload.includes('<title>Renamed: operational</title>'),
        5000
      ),
      'a changed page is read again'
    )

    await deleteStatusPage({ db: api.db, slug: 'ok' })
    api.clock.now = NOW + 2200
    t.ok(await holds(async () => (await api.server.inject('/api/badge/page/ok')).statusCode === 404, 5000), 'a deleted page is a 404 again')
    t.equal((await api.server.inject('/status/ok.json')).statusCode, 404)
  })
}
