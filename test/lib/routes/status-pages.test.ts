import t, { type Test } from 'tap'
import { MAX_PAGE_SITES } from '../../../lib/rules/status-page-fields.js'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { until } from '../../helpers/poll.js'
import { bearer } from '../../helpers/server.js'
import { MIN, trackedServer, type TrackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-20T12:00:00.000Z')
const SITES = [
  { domain: 'shop.example.com', name: 'Shop' },
  { domain: 'blog.example.com', name: 'Blog' },
  { domain: 'api.example.com', name: 'API' }
]
const PUBLIC_URL = 'https://status.example.net'

/** Calls the API with a key; every answer must match the OpenAPI document. */
function caller(t: Test, api: TrackedServer) {
  return async (method: string, url: string, key: string, payload?: unknown) => {
    const res = await api.server.inject({ method, url, headers: bearer(key), payload: payload as object | undefined })
    matchesOpenApi(t, res, `${method} ${url} ${res.statusCode}`)
    return { status: res.statusCode, body: res.payload === '' ? null : JSON.parse(res.payload), headers: res.headers }
  }
}

const iso = (ms: number): string => new Date(ms).toISOString()

for (const engine of engines()) {
  t.test(`pages are created, read, listed, changed and deleted, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: SITES, start: T0 })
    const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const call = caller(t, api)

    const created = await call('POST', '/api/v1/pages', manager, {
      slug: 'acme',
      title: '  Acme services ',
      description: 'Everything we run.\nUpdated live.',
      logo_url: 'https://cdn.example.com/logo one.png',
      sites: [
        { domain: 'HTTPS://Blog.Example.com/' },
        { domain: 'shop.example.com', name: ' Storefront ' },
        { domain: 'api.example.com', name: null }
      ]
    })
    const acme = {
      slug: 'acme',
      title: 'Acme services',
      description: 'Everything we run.\nUpdated live.',
      logo_url: 'https://cdn.example.com/logo%20one.png',
      sites: [
        { domain: 'blog.example.com', name: null },
        { domain: 'shop.example.com', name: 'Storefront' },
        { domain: 'api.example.com', name: null }
      ],
      heartbeats: [],
      monitors: [],
      url: `${PUBLIC_URL}/status/acme`,
      created_at: iso(T0),
      changed_at: iso(T0)
    }
    t.same(created.body, acme, 'the page in its normal form, sites in the order given')
    t.equal(created.status, 201)
    t.equal(created.headers.location, '/api/v1/pages/acme')
    t.same((await call('GET', '/api/v1/pages/acme', manager)).body, acme, 'read back as written')

    api.clock.now = T0 + MIN
    const small = await call('POST', '/api/v1/pages', manager, { slug: '0-shop', title: 'Shop', sites: [{ domain: 'shop.example.com' }] })
    t.same(small.body.sites, [{ domain: 'shop.example.com', name: null }], 'a site may be on two pages')
    t.same(small.body, { ...small.body, description: null, logo_url: null }, 'description and logo are optional')
    const empty = await call('POST', '/api/v1/pages', manager, { slug: 'soon', title: 'Soon', sites: [] })
    t.same([empty.status, empty.body.sites], [201, []], 'a page may list no site yet')
    const list = await call('GET', '/api/v1/pages', manager)
    t.same(
      list.body.pages.map((p: { slug: string }) => p.slug),
      ['0-shop', 'acme', 'soon'],
      'every page, by slug'
    )
    t.same(list.body.pages[1], acme)

    api.clock.now = T0 + 2 * MIN
    const retitled = await call('PATCH', '/api/v1/pages/acme', manager, { title: 'Acme', description: null })
    t.same(retitled.body, { ...acme, title: 'Acme', description: null, changed_at: iso(T0 + 2 * MIN) }, 'fields not given are kept')
    api.clock.now = T0 + 3 * MIN
    const reordered = await call('PATCH', '/api/v1/pages/acme', manager, {
      sites: [{ domain: 'api.example.com', name: 'Public API' }, { domain: 'blog.example.com' }],
      logo_url: null
    })
    t.same(
      reordered.body,
      {
        ...acme,
        title: 'Acme',
        description: null,
        logo_url: null,
        sites: [
          { domain: 'api.example.com', name: 'Public API' },
          { domain: 'blog.example.com', name: null }
        ],
        changed_at: iso(T0 + 3 * MIN)
      },
      'sites replaced whole, in the new order; null clears the logo'
    )
    t.same((await call('GET', '/api/v1/pages/acme', manager)).body, reordered.body)
    t.same((await call('GET', '/api/v1/pages/0-shop', manager)).body, small.body, 'the other page is untouched')

    const deleted = await call('DELETE', '/api/v1/pages/acme', manager)
    t.same([deleted.status, deleted.body], [204, null], 'deleted: 204')
    t.match(await call('GET', '/api/v1/pages/acme', manager), { status: 404, body: { error: 'no status page has the slug "acme"' } })
    t.match(await call('DELETE', '/api/v1/pages/acme', manager), { status: 404 }, 'deleting it again: 404')
    t.same(
      (await call('GET', '/api/v1/pages', manager)).body.pages.map((p: { slug: string }) => p.slug),
      ['0-shop', 'soon']
    )
    t.equal((await call('GET', '/api/v1/status/api.example.com', manager)).status, 200, 'its sites stay tracked')
    t.equal(Number((await api.db('status_page_sites').count({ n: '*' }).first())?.n), 1, 'its list of sites went with it')
    const again = await call('POST', '/api/v1/pages', manager, { slug: 'acme', title: 'Acme again', sites: [] })
    t.equal(again.status, 201, 'its slug is free again')
  })
}

for (const engine of engines()) {
  t.test(`a bad page is a 400 saying what is wrong, and nothing is stored, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: [...SITES, { domain: 'gone.example.com', name: null }], start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const call = caller(t, api)
    t.equal((await call('DELETE', '/api/v1/sites/gone.example.com', key)).status, 204, 'a site tracked once, no longer')
    const page = { slug: 'acme', title: 'Acme', sites: [{ domain: 'shop.example.com' }] }
    const many = Array.from({ length: MAX_PAGE_SITES + 1 }, (_, i) => ({ domain: `s${i}.example.com` }))
    const cases: Array<[string, unknown, string | RegExp]> = [
      ['a list', [], /^request body must be a JSON object with "slug", "title"/],
      ['no slug', { ...page, slug: undefined }, '"slug" must be 1 to 64 lower-case letters, digits and hyphens'],
      ['an upper-case slug', { ...page, slug: 'Acme' }, '"slug" must be 1 to 64 lower-case letters, digits and hyphens'],
      ['a slug of 65', { ...page, slug: 'a'.repeat(65) }, /^"slug" must be 1 to 64/],
      ['a slug with a slash', { ...page, slug: 'a/b' }, /^"slug" must be 1 to 64/],
      ['no title', { ...page, title: undefined }, '"title" must be 1 to 200 printable characters'],
      ['a blank title', { ...page, title: '   ' }, '"title" must be 1 to 200 printable characters'],
      ['a long title', { ...page, title: 't'.repeat(201) }, '"title" must be 1 to 200 printable characters'],
      ['a title with a bell', { ...page, title: 'a\u0007' }, '"title" must be 1 to 200 printable characters'],
      ['a number as title', { ...page, title: 5 }, '"title" must be 1 to 200 printable characters'],
      ['an empty description', { ...page, description: '' }, /^"description" must be 1 to 1000 characters/],
      ['a long description', { ...page, description: 'd'.repeat(1001) }, /^"description" must be 1 to 1000 characters/],
      ['a description with NUL', { ...page, description: 'a\u0000b' }, /no other control characters/],
      ['an ftp logo', { ...page, logo_url: 'ftp://example.com/logo.png' }, /^"logo_url" must be an http:\/\/ or https:\/\/ URL/],
      ['a logo with a password', { ...page, logo_url: 'https://u:p@example.com/logo.png' }, /without a user name or password/],
      ['a relative logo', { ...page, logo_url: '/logo.png' }, /^"logo_url" must be/],
      ['a wildcard host (every host in img-src)', { ...page, logo_url: 'https://*/x.png' }, /its host a name or an address/],
      [
        'a host that adds a CSP directive',
        { ...page, logo_url: "https://a;script-src,'unsafe-inline'/x" },
        /its host a name or an address/
      ],
      ['a host with a comma', { ...page, logo_url: 'https://a,b/x.png' }, /its host a name or an address/],
      ['a long logo', { ...page, logo_url: `https://example.com/${'l'.repeat(2040)}` }, /at most 2048 characters/],
      ['no sites', { ...page, sites: undefined }, /^"sites" must be a list of at most 100 sites/],
      ['sites as text', { ...page, sites: 'shop.example.com' }, /^"sites" must be a list/],
      [`${MAX_PAGE_SITES + 1} sites`, { ...page, sites: many }, /^"sites" must be a list of at most 100 sites/],
      ['a site as text', { ...page, sites: ['shop.example.com'] }, 'site 1 must be an object with a "domain" and an optional "name"'],
      ['a site with another field', { ...page, sites: [{ domain: 'shop.example.com', url: 'x' }] }, /^site 1 must be an object/],
      [
        'a bad domain',
        { ...page, sites: [{ domain: 'shop.example.com' }, { domain: 'localhost' }] },
        'site 2: domain must be a fully qualified name such as example.com'
      ],
      ['a port', { ...page, sites: [{ domain: 'shop.example.com:8080' }] }, 'site 1: domain must not include a port'],
      [
        'an empty name',
        { ...page, sites: [{ domain: 'shop.example.com', name: ' ' }] },
        'site 1: name must be 1 to 200 printable characters'
      ],
      [
        'a long name',
        { ...page, sites: [{ domain: 'shop.example.com', name: 'n'.repeat(201) }] },
        'site 1: name must be 1 to 200 printable characters'
      ],
      [
        'a domain twice',
        { ...page, sites: [{ domain: 'shop.example.com' }, { domain: 'blog.example.com' }, { domain: 'HTTP://SHOP.example.com/' }] },
        'shop.example.com is listed twice'
      ],
      [
        'an untracked domain',
        { ...page, sites: [{ domain: 'shop.example.com' }, { domain: 'Never.Example.com' }, { domain: 'other.example.com' }] },
        'never.example.com is not tracked; track it before listing it on a page'
      ],
      [
        'a removed site',
        { ...page, sites: [{ domain: 'gone.example.com' }] },
        'gone.example.com is not tracked; track it before listing it on a page'
      ],
      [
        'an unknown field',
        { ...page, theme: 'dark' },
        /^request body may hold only "slug", "title", "description", "logo_url", "sites", "heartbeats" and "monitors", not "theme"$/
      ]
    ]
    for (const [what, payload, error] of cases) {
      const res = await api.server.inject({
        method: 'POST',
        url: '/api/v1/pages',
        headers: { ...bearer(key), 'content-type': 'application/json' },
        payload: JSON.stringify(payload)
      })
      t.equal(res.statusCode, 400, `${what}: 400`)
      t.match(JSON.parse(res.payload), { error }, `${what}: says why`)
      matchesOpenApi(t, res, what)
    }
    t.equal(Number((await api.db('status_pages').count({ n: '*' }).first())?.n), 0, 'no page was stored')

    t.equal((await call('POST', '/api/v1/pages', key, page)).status, 201)
    const changes: Array<[string, unknown, string | RegExp]> = [
      [
        'an empty change',
        {},
        'request body must change at least one of "title", "description", "logo_url", "sites", "heartbeats" and "monitors"'
      ],
      [
        'a new slug',
        { slug: 'other' },
        'request body may hold only "title", "description", "logo_url", "sites", "heartbeats" and "monitors", not "slug"'
      ],
      ['a null title', { title: null }, '"title" must be 1 to 200 printable characters'],
      [
        'an untracked domain',
        { sites: [{ domain: 'blog.example.com' }, { domain: 'never.example.com' }] },
        /^never\.example\.com is not tracked/
      ],
      ['a domain twice', { sites: [{ domain: 'blog.example.com' }, { domain: 'blog.example.com' }] }, 'blog.example.com is listed twice'],
      ['null sites', { sites: null }, /^"sites" must be a list/]
    ]
    for (const [what, payload, error] of changes) {
      t.match(await call('PATCH', '/api/v1/pages/acme', key, payload), { status: 400, body: { error } }, `a change with ${what}: 400`)
    }
    t.same((await call('GET', '/api/v1/pages/acme', key)).body.sites, [{ domain: 'shop.example.com', name: null }], 'the page is unchanged')

    for (const [method, payload] of [
      ['GET', undefined],
      ['PATCH', { title: 'x' }],
      ['DELETE', undefined]
    ] as const) {
      for (const slug of ['Acme', 'a_b', 'a'.repeat(65), '%C3%A9']) {
        t.match(
          await call(method, `/api/v1/pages/${slug}`, key, payload),
          { status: 400, body: { error: '"slug" must be 1 to 64 lower-case letters, digits and hyphens' } },
          `${method} of the slug ${slug}: 400`
        )
      }
      t.match(
        await call(method, '/api/v1/pages/nowhere', key, payload),
        { status: 404, body: { error: 'no status page has the slug "nowhere"' } },
        `${method} of an unknown slug: 404`
      )
    }
    t.match(
      await call('PATCH', '/api/v1/pages/nowhere', key, { sites: [{ domain: 'never.example.com' }] }),
      { status: 404 },
      'an unknown page is a 404 before its sites are judged'
    )
    t.match(
      await call('POST', '/api/v1/pages', key, { ...page, title: 'Another' }),
      { status: 409, body: { error: 'a status page with the slug "acme" already exists' } },
      'a slug taken: 409'
    )
    t.equal((await call('GET', '/api/v1/pages/acme', key)).body.title, 'Acme', 'the page keeps its title')

    for (const [what, request, code] of [
      ['no body', { headers: { 'content-type': 'application/json' } }, 400],
      ['malformed JSON', { payload: '{"slug":', headers: { 'content-type': 'application/json' } }, 400],
      ['a text body', { payload: 'slug=acme', headers: { 'content-type': 'text/plain' } }, 415],
      ['a body over 64 KiB', { payload: { ...page, slug: 'big', description: 'x'.repeat(70_000) } }, 413]
    ] as const) {
      const res = await api.server.inject({
        method: 'POST',
        url: '/api/v1/pages',
        ...request,
        headers: { ...bearer(key), ...('headers' in request ? request.headers : {}) }
      })
      t.equal(res.statusCode, code, `${what}: ${code}`)
      t.match(JSON.parse(res.payload), { error: String }, `${what}: JSON error`)
      matchesOpenApi(t, res, what)
    }
    const full = Array.from({ length: MAX_PAGE_SITES }, (_, i) => ({
      domain: `${'d'.repeat(60)}.site-${i}.example.com`,
      name: 'n'.repeat(200)
    }))
    const fits = await call('POST', '/api/v1/pages', key, { ...page, slug: 'full', sites: full })
    t.match(
      fits,
      { status: 400, body: { error: `${full[0]?.domain} is not tracked; track it before listing it on a page` } },
      `${MAX_PAGE_SITES} long entries fit in a body`
    )
    t.notOk(
      api.logs.lines.some((l) => /select|insert|status_page/i.test(l)),
      'no SQL reaches the log'
    )
  })

  t.test(`a read key reads pages and cannot write them, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: SITES, start: T0 })
    const manager = await api.issueKey({ limit: 10_000, scopes: 'manage' })
    const reader = await api.issueKey({ limit: 10_000, scopes: 'read' })
    const checker = await api.issueKey({ limit: 10_000, scopes: 'check' })
    const call = caller(t, api)
    const page = { slug: 'acme', title: 'Acme', sites: [{ domain: 'shop.example.com' }] }
    t.equal((await call('POST', '/api/v1/pages', manager, page)).status, 201, 'manage creates')
    t.equal((await call('GET', '/api/v1/pages', reader)).status, 200, 'read lists')
    t.equal((await call('GET', '/api/v1/pages/acme', reader)).status, 200, 'read reads one')
    for (const [method, url, payload] of [
      ['POST', '/api/v1/pages', { ...page, slug: 'other' }],
      ['PATCH', '/api/v1/pages/acme', { title: 'Hacked' }],
      ['DELETE', '/api/v1/pages/acme', undefined]
    ] as const) {
      t.match(await call(method, url, reader, payload), { status: 403, body: { error: /"manage" scope/ } }, `${method} ${url} needs manage`)
    }
    t.match(await call('GET', '/api/v1/pages', checker), { status: 403, body: { error: /"read" scope/ } }, 'listing needs read')
    t.match(await call('GET', '/api/v1/pages/acme', checker), { status: 403 }, 'reading one needs read')
    t.match(
      (await call('GET', '/api/v1/pages/acme', reader)).body,
      { title: 'Acme', sites: [{ domain: 'shop.example.com' }] },
      'nothing changed'
    )
  })

  t.test(`a page made, changed or deleted here shows on its public answers at once, on ${engine}`, async (t) => {
    // The clock stands still: nothing here waits for the pages' once-a-second read.
    const api = await trackedServer(t, { engine, sites: SITES, start: T0 })
    const manager = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const call = caller(t, api)
    const get = (url: string) => api.server.inject({ method: 'GET', url })
    t.equal((await get('/api/badge/page/acme')).statusCode, 404, 'no page yet: the badge is a 404')
    t.equal((await get('/status/acme.json')).statusCode, 404, 'and so is the JSON')
    t.equal(
      (await call('POST', '/api/v1/pages', manager, { slug: 'acme', title: 'Acme', sites: [{ domain: 'shop.example.com' }] })).status,
      201
    )
    t.match((await get('/api/badge/page/acme')).payload, /Acme/, 'the new page has its badge at once')
    t.match(JSON.parse((await get('/status/acme.json')).payload), { title: 'Acme' }, 'and its JSON')
    await call('PATCH', '/api/v1/pages/acme', manager, { title: 'Acme Corp' })
    t.match((await get('/api/badge/page/acme')).payload, /Acme Corp/, 'a new title shows on the badge at once')
    t.match(JSON.parse((await get('/status/acme.json')).payload), { title: 'Acme Corp' }, 'and in the JSON')
    await call('DELETE', '/api/v1/pages/acme', manager)
    t.equal((await get('/api/badge/page/acme')).statusCode, 404, 'a deleted page has no badge at once')
    t.equal((await get('/status/acme.json')).statusCode, 404, 'nor JSON')
  })

  t.test(`removing a site takes it off every page it is on, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: SITES, start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const call = caller(t, api)
    const sites = [{ domain: 'api.example.com' }, { domain: 'shop.example.com', name: 'Storefront' }, { domain: 'blog.example.com' }]
    await call('POST', '/api/v1/pages', key, { slug: 'acme', title: 'Acme', sites })
    await call('POST', '/api/v1/pages', key, { slug: 'shop', title: 'Shop', sites: [{ domain: 'shop.example.com' }] })
    await call('POST', '/api/v1/pages', key, { slug: 'blog', title: 'Blog', sites: [{ domain: 'blog.example.com' }] })

    api.clock.now = T0 + 5 * MIN
    t.equal((await call('DELETE', '/api/v1/sites/shop.example.com', key)).status, 204)
    const acme = (await call('GET', '/api/v1/pages/acme', key)).body
    t.same(
      acme.sites,
      [
        { domain: 'api.example.com', name: null },
        { domain: 'blog.example.com', name: null }
      ],
      'gone from the page, the others in their order'
    )
    t.equal(acme.changed_at, iso(T0 + 5 * MIN), "the page's changed_at moved to the removal")
    t.match((await call('GET', '/api/v1/pages/shop', key)).body, { sites: [], changed_at: iso(T0 + 5 * MIN) }, 'and from the other page')
    t.equal((await call('GET', '/api/v1/pages/blog', key)).body.changed_at, iso(T0), 'a page without it is not changed')

    api.clock.now = T0 + 6 * MIN
    t.equal((await call('POST', '/api/v1/sites', key, { domain: 'shop.example.com' })).status, 201, 'tracked again')
    t.same(
      (await call('GET', '/api/v1/pages/acme', key)).body.sites.map((s: { domain: string }) => s.domain),
      ['api.example.com', 'blog.example.com'],
      'tracking it again does not put it back on its old pages'
    )
  })

  t.test(`a site removed while a page is written is never left on the page, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: SITES, start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const call = caller(t, api)
    await call('POST', '/api/v1/pages', key, { slug: 'acme', title: 'Acme', sites: [{ domain: 'api.example.com' }] })
    const outcomes = new Set<string>()
    for (let round = 0; round < 8; round++) {
      if (round > 0) t.equal((await call('POST', '/api/v1/sites', key, { domain: 'shop.example.com' })).status, 201)
      // Both at once: the write and the removal each take the site's row lock, in either order.
      const [written, removed] = await Promise.all([
        call('PATCH', '/api/v1/pages/acme', key, { sites: [{ domain: 'shop.example.com' }, { domain: 'api.example.com' }] }),
        call('DELETE', '/api/v1/sites/shop.example.com', key)
      ])
      t.equal(removed.status, 204, `round ${round}: the site is removed`)
      t.ok([200, 400].includes(written.status), `round ${round}: the page is written, or refused for the site (${written.status})`)
      outcomes.add(String(written.status))
      t.same(
        (await call('GET', '/api/v1/pages/acme', key)).body.sites,
        [{ domain: 'api.example.com', name: null }],
        `round ${round}: the removed site is not on the page`
      )
      const left = await api
        .db('status_page_sites as p')
        .join('sites as s', 's.id', 'p.site_id')
        .whereNotNull('s.removed_at')
        .count({ n: '*' })
        .first()
      t.equal(Number(left?.n), 0, `round ${round}: no stored entry of a removed site`)
    }
    t.comment(`outcomes of the page write: ${[...outcomes].join(', ')}`)
  })
}

if (engines().includes('mysql')) {
  t.test('a page write and a site removal queue on the site, never leaving a removed site listed, on mysql', async (t) => {
    const api = await trackedServer(t, { engine: 'mysql', sites: SITES, start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const call = caller(t, api)
    await call('POST', '/api/v1/pages', key, { slug: 'acme', title: 'Acme', sites: [{ domain: 'api.example.com' }] })
    // Queries of this test's database waiting for a row lock, as InnoDB reports them.
    const waiting = async (): Promise<number> => {
      const [rows] = (await api.db.raw(
        `SELECT COUNT(*) AS n FROM information_schema.innodb_trx t JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
         WHERE t.trx_state = 'LOCK WAIT' AND p.db = DATABASE()`
      )) as [Array<{ n: number }>]
      return Number(rows[0]?.n)
    }
    // The page's row held elsewhere: the write gets as far as the page and waits there.
    const hold = await api.db.transaction()
    await hold('status_pages').where({ slug: 'acme' }).forUpdate().first()
    const written = call('PATCH', '/api/v1/pages/acme', key, { sites: [{ domain: 'shop.example.com' }, { domain: 'api.example.com' }] })
    t.equal(await until(waiting, (n) => n >= 1, 10_000), 1, 'the page write waits for the page')
    let removedSettled = false
    const removed = call('DELETE', '/api/v1/sites/shop.example.com', key).finally(() => {
      removedSettled = true
    })
    // Without the site's row lock the removal would finish now, before the write lists the site.
    await until(waiting, (n) => n >= 2 || removedSettled, 10_000)
    t.notOk(removedSettled, 'the removal waits for the site the write holds')
    await hold.commit()
    t.equal((await written).status, 200, 'the write lists the site while it is still tracked')
    t.equal((await removed).status, 204, 'then the removal takes it off')
    t.same((await call('GET', '/api/v1/pages/acme', key)).body.sites, [{ domain: 'api.example.com', name: null }])
    t.equal(Number((await api.db('status_page_sites').count({ n: '*' }).first())?.n), 1, 'no stored entry of the removed site')
  })
}
