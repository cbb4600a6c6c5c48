import t from 'tap'
import { addHeartbeat } from '../../../lib/heartbeats/manage.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { removeSite } from '../../../lib/monitoring/remove-site.js'
import { NO_EXPECTATIONS } from '../../../lib/rules/expectations.js'
import { insertMonitor } from '../../../lib/store/monitors.js'
import { findStatusPage } from '../../../lib/store/status-pages.js'
import { hasStackTrace, lines, runCli, spawnCli } from '../../helpers/cli.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { bearer, testServer } from '../../helpers/server.js'

const T0 = Date.parse('2026-11-20T12:00:00.000Z')
const SITES = [
  { domain: 'shop.example.com', name: 'Shop' },
  { domain: 'blog.example.com', name: 'Blog' },
  { domain: 'api.example.com', name: 'API' }
]
const PUBLIC_URL = 'https://status.example.net'

for (const engine of engines()) {
  t.test(`pages create, set, list and remove, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const env = { DATABASE_URL: url, PUBLIC_URL }
    await addSites({ db, entries: SITES, now: new Date(T0) })

    const created = await spawnCli(
      [
        'pages',
        'create',
        'acme',
        '--title',
        'Acme services',
        '--description',
        'All we run',
        '--logo-url',
        'https://cdn.example.com/logo.png',
        'Blog.Example.com',
        'shop.example.com=Storefront = main',
        'api.example.com'
      ],
      { env }
    )
    t.same([created.code, created.stdout, created.stderr], [0, `${PUBLIC_URL}/status/acme\n`, 'created status page acme with 3 sites\n'])
    const stored = await findStatusPage({ db, slug: 'acme' })
    t.match(stored, { title: 'Acme services', description: 'All we run', logo_url: 'https://cdn.example.com/logo.png' })
    t.same(
      stored?.sites.map((s) => [s.domain, s.display_name]),
      [
        ['blog.example.com', null],
        ['shop.example.com', 'Storefront = main'],
        ['api.example.com', null]
      ],
      'stored in the order given, the name after the first ='
    )
    const second = await runCli(['pages', 'create', 'shop', '--title', 'Shop', 'shop.example.com'], { env })
    t.equal(second.code, 0, 'a site may be on two pages')

    const list = await runCli(['pages', 'list'], { env })
    t.equal(list.code, 0)
    t.same(
      lines(list.stdout).map((l) => l.split(/ {2,}/)),
      [
        ['SLUG', 'TITLE', 'SITES', 'URL'],
        ['acme', 'Acme services', '3', `${PUBLIC_URL}/status/acme`],
        ['shop', 'Shop', '1', `${PUBLIC_URL}/status/shop`]
      ]
    )

    const set = await runCli(
      ['pages', 'set', 'acme', '--title', 'Acme', '--clear', 'description', 'api.example.com=Public API', 'blog.example.com'],
      {
        env
      }
    )
    t.same([set.code, set.stdout], [0, 'changed status page acme (2 sites)\n'])
    t.match(await findStatusPage({ db, slug: 'acme' }), {
      title: 'Acme',
      description: null,
      logo_url: 'https://cdn.example.com/logo.png',
      sites: [
        { domain: 'api.example.com', display_name: 'Public API' },
        { domain: 'blog.example.com', display_name: null }
      ]
    })
    const titled = await runCli(['pages', 'set', 'acme', '--description', 'Back again'], { env })
    t.equal(titled.code, 0)
    t.match(
      await findStatusPage({ db, slug: 'acme' }),
      { description: 'Back again', sites: [{ domain: 'api.example.com' }, { domain: 'blog.example.com' }] },
      'no DOMAIN: the list is kept'
    )
    t.equal((await runCli(['pages', 'set', 'acme', '--clear', 'sites', '--clear', 'logo-url'], { env })).code, 0)
    t.match(await findStatusPage({ db, slug: 'acme' }), { logo_url: null, sites: [] }, '--clear sites empties the list')

    // A server on the same database shows what the tool wrote.
    const { server, issueKey } = await testServer({ db, env })
    const key = await issueKey({ scopes: 'read' })
    const res = await server.inject({ url: '/api/v1/pages/shop', headers: bearer(key) })
    t.match(JSON.parse(res.payload), {
      slug: 'shop',
      title: 'Shop',
      sites: [{ domain: 'shop.example.com', name: null }],
      url: `${PUBLIC_URL}/status/shop`
    })

    await removeSite({ db, domain: 'shop.example.com', now: new Date(T0 + 1000) })
    t.match(lines((await runCli(['pages', 'list'], { env })).stdout)[2], /^shop\s+Shop\s+0\s/, 'a removed site has left its page')

    const removed = await runCli(['pages', 'remove', 'shop'], { env })
    t.same([removed.code, removed.stdout], [0, 'removed status page shop (its sites stay tracked)\n'])
    const again = await runCli(['pages', 'remove', 'shop'], { env })
    t.same([again.code, again.stderr], [1, 'site-status: no status page has the slug "shop"\n'])
    t.equal(lines((await runCli(['pages', 'list'], { env })).stdout).length, 2, 'one page left')
  })

  t.test(`pages refuses what the API refuses, in the API's words, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const env = { DATABASE_URL: url }
    await addSites({ db, entries: SITES, now: new Date(T0) })
    const { server, issueKey } = await testServer({ db, env })
    const key = await issueKey({ scopes: 'read,manage' })
    const api = async (method: string, path: string, payload: unknown): Promise<string> =>
      JSON.parse((await server.inject({ method, url: path, headers: bearer(key), payload: payload as object })).payload).error as string
    t.equal((await runCli(['pages', 'create', 'taken', '--title', 'Taken'], { env })).code, 0, 'a page with no sites yet')

    // The same mistake through the tool and the API: one message, options named for options.
    const same: Array<[string[], Record<string, unknown>, string]> = [
      [
        ['create', 'Acme', '--title', 'A'],
        { slug: 'Acme', title: 'A', sites: [] },
        '"slug" must be 1 to 64 lower-case letters, digits and hyphens'
      ],
      [['create', 'acme', '--title', ' '], { slug: 'acme', title: ' ', sites: [] }, '"title" must be 1 to 200 printable characters'],
      [
        ['create', 'acme', '--title', 'A', '--description', ''],
        { slug: 'acme', title: 'A', description: '', sites: [] },
        '"description" must be 1 to 1000 characters'
      ],
      [
        ['create', 'acme', '--title', 'A', '--logo-url', 'ftp://x.example.com/l.png'],
        { slug: 'acme', title: 'A', logo_url: 'ftp://x.example.com/l.png', sites: [] },
        '"logo_url" must be an http:// or https:// URL'
      ],
      [
        ['create', 'acme', '--title', 'A', 'shop.example.com', 'localhost'],
        { slug: 'acme', title: 'A', sites: [{ domain: 'shop.example.com' }, { domain: 'localhost' }] },
        'site 2: domain must be a fully qualified name such as example.com'
      ],
      [
        ['create', 'acme', '--title', 'A', 'shop.example.com='],
        { slug: 'acme', title: 'A', sites: [{ domain: 'shop.example.com', name: '' }] },
        'site 1: name must be 1 to 200 printable characters'
      ],
      [
        ['create', 'acme', '--title', 'A', 'shop.example.com', 'SHOP.example.com'],
        { slug: 'acme', title: 'A', sites: [{ domain: 'shop.example.com' }, { domain: 'SHOP.example.com' }] },
        'shop.example.com is listed twice'
      ],
      [['set', 'taken', '--title', 't'.repeat(201)], { title: 't'.repeat(201) }, '"title" must be 1 to 200 printable characters']
    ]
    const asOptions = (text: string): string =>
      text.replace('"title"', '--title').replace('"description"', '--description').replace('"logo_url"', '--logo-url')
    for (const [args, body, message] of same) {
      const what = args.join(' ')
      const apiMessage = await api(
        args[0] === 'create' ? 'POST' : 'PATCH',
        args[0] === 'create' ? '/api/v1/pages' : `/api/v1/pages/${args[1]}`,
        body
      )
      t.ok(apiMessage.startsWith(message), `${what}: the API says ${message}`)
      const res = await runCli(['pages', ...args], { env })
      t.same(
        [res.code, res.stderr],
        [2, `site-status: ${asOptions(apiMessage)} (see site-status --help)\n`],
        `${what}: a usage error in the API's words`
      )
      t.notOk(hasStackTrace(res.stderr))
    }

    const refused: Array<[string[], number, string]> = [
      [
        ['create', 'acme', '--title', 'A', 'never.example.com'],
        1,
        'site-status: never.example.com is not tracked; track it before listing it on a page\n'
      ],
      [['create', 'taken', '--title', 'A'], 1, 'site-status: a status page with the slug "taken" already exists\n'],
      [['set', 'nowhere', '--title', 'A'], 1, 'site-status: no status page has the slug "nowhere"\n'],
      [
        ['set', 'taken', 'shop.example.com', 'never.example.com'],
        1,
        'site-status: never.example.com is not tracked; track it before listing it on a page\n'
      ],
      [['remove', 'nowhere'], 1, 'site-status: no status page has the slug "nowhere"\n'],
      [['create', 'acme'], 2, 'site-status: pages create needs --title (see site-status --help)\n'],
      [['create'], 2, 'site-status: pages create needs a SLUG (see site-status --help)\n'],
      [
        ['set', 'taken'],
        2,
        'site-status: pages set needs --title, --description, --logo-url, --monitor, --heartbeat, --clear or DOMAINs (see site-status --help)\n'
      ],
      [
        ['set', 'taken', '--clear', 'title'],
        2,
        'site-status: --clear takes one of description, logo-url, sites, monitors, heartbeats, not "title" (see site-status --help)\n'
      ],
      [
        ['set', 'taken', '--clear', 'sites', 'shop.example.com'],
        2,
        'site-status: pages set takes DOMAINs or --clear sites, not both (see site-status --help)\n'
      ],
      [['remove'], 2, 'site-status: pages remove needs a SLUG (see site-status --help)\n'],
      [['remove', 'a', 'b'], 2, 'site-status: pages remove takes one SLUG (see site-status --help)\n'],
      [
        ['list', 'extra'],
        2,
        "site-status: Unexpected argument 'extra'. This command does not take positional arguments (see site-status --help)\n"
      ],
      [
        ['create', 'acme', '--title', 'A', '--theme', 'dark'],
        2,
        "site-status: Unknown option '--theme'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- \"--theme\" (see site-status --help)\n"
      ],
      [['publish'], 2, 'site-status: unknown pages command "publish" (see site-status --help)\n']
    ]
    for (const [args, code, stderr] of refused) {
      const res = await runCli(['pages', ...args], { env })
      t.same([res.code, res.stderr], [code, stderr], `${args.join(' ')}: exits ${code}, saying why`)
    }
    t.equal(
      await api('POST', '/api/v1/pages', { slug: 'acme', title: 'A', sites: [{ domain: 'never.example.com' }] }),
      'never.example.com is not tracked; track it before listing it on a page',
      'the API names it the same'
    )
    t.same(
      (await db('status_pages').select('slug')).map((r: { slug: string }) => r.slug),
      ['taken'],
      'nothing else was stored'
    )
    const help = await runCli(['pages', '--help'], { env })
    t.equal(help.code, 0)
    t.match(help.stdout, /site-status pages create SLUG --title TITLE \[--description TEXT\] \[--logo-url URL\] \[DOMAIN\[=NAME\]\.\.\.\]/)
    t.match((await runCli(['--help'], { env })).stdout, /pages {6}create, change, list and remove public status pages/)
    const none = await runCli(['pages'], { env })
    t.same([none.code, none.stdout], [2, ''], 'no pages command: the help on stderr, a usage error')
  })
}

t.test('pages create and set take heartbeats by slug, a list of their own', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const env = { DATABASE_URL: url, PUBLIC_URL }
  await addSites({ db, entries: SITES, now: new Date(T0) })
  const settings = { schedule: { every_s: 60 }, grace_s: 30, max_runtime_s: null }
  await addHeartbeat({ db, slug: 'backup', settings: { name: 'Backup', ...settings }, now: new Date(T0) })
  await addHeartbeat({ db, slug: 'billing', settings: { name: 'Billing', ...settings }, now: new Date(T0) })
  const created = await runCli(['pages', 'create', 'jobs', '--title', 'Jobs', 'shop.example.com', '--heartbeat', 'backup=Nightly backup'], {
    env
  })
  t.equal(created.code, 0, created.stderr)
  const heartbeatsOf = async () => (await findStatusPage({ db, slug: 'jobs' }))?.heartbeats.map((h) => [h.slug, h.display_name])
  t.same(await heartbeatsOf(), [['backup', 'Nightly backup']])
  t.equal((await runCli(['pages', 'set', 'jobs', 'blog.example.com'], { env })).code, 0)
  t.same(await heartbeatsOf(), [['backup', 'Nightly backup']], 'new sites keep the heartbeats')
  t.equal((await runCli(['pages', 'set', 'jobs', '--heartbeat', 'billing', '--heartbeat', 'backup'], { env })).code, 0)
  t.same(await heartbeatsOf(), [
    ['billing', null],
    ['backup', null]
  ])
  t.same(
    (await findStatusPage({ db, slug: 'jobs' }))?.sites.map((s) => s.domain),
    ['blog.example.com'],
    'new heartbeats keep the sites'
  )
  const unknown = await runCli(['pages', 'set', 'jobs', '--heartbeat', 'nobody'], { env })
  t.same([unknown.code, unknown.stderr], [1, 'site-status: no heartbeat has the slug "nobody"; add it before listing it on a page\n'])
  t.equal((await runCli(['pages', 'set', 'jobs', '--clear', 'heartbeats'], { env })).code, 0)
  t.same(await heartbeatsOf(), [])
})

t.test('pages create and set take monitors by slug, a list of their own', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const env = { DATABASE_URL: url, PUBLIC_URL }
  await addSites({ db, entries: SITES, now: new Date(T0) })
  const monitor = (name: string, kind: string, target: string) => ({
    name,
    kind,
    target,
    interval_s: null,
    expect: NO_EXPECTATIONS,
    check: JSON.stringify(kind === 'dns' ? { type: 'dns', record: 'MX' } : { type: kind, port: 5432 })
  })
  await insertMonitor({ db, domain: 'monitor:orders-db', monitor: monitor('Orders DB', 'tcp', 'db.internal.example'), now: new Date(T0) })
  await insertMonitor({ db, domain: 'monitor:mail-mx', monitor: monitor('Mail', 'dns', 'example.org'), now: new Date(T0) })
  await addHeartbeat({
    db,
    slug: 'backup',
    settings: { name: 'Backup', schedule: { every_s: 60 }, grace_s: 30, max_runtime_s: null },
    now: new Date(T0)
  })
  const created = await runCli(
    ['pages', 'create', 'infra', '--title', 'Infra', 'shop.example.com', '--monitor', 'orders-db=Database', '--heartbeat', 'backup'],
    { env }
  )
  t.equal(created.code, 0, created.stderr)
  const page = async () => findStatusPage({ db, slug: 'infra' })
  const monitorsOf = async () => (await page())?.monitors.map((m) => [m.slug, m.kind, m.display_name])
  t.same(await monitorsOf(), [['orders-db', 'tcp', 'Database']])
  t.equal((await runCli(['pages', 'set', 'infra', 'blog.example.com', '--heartbeat', 'backup'], { env })).code, 0)
  t.same(await monitorsOf(), [['orders-db', 'tcp', 'Database']], 'new sites and heartbeats keep the monitors')
  t.equal((await runCli(['pages', 'set', 'infra', '--monitor', 'mail-mx', '--monitor', 'orders-db'], { env })).code, 0)
  t.same(await monitorsOf(), [
    ['mail-mx', 'dns', null],
    ['orders-db', 'tcp', null]
  ])
  t.same(
    [(await page())?.sites.map((s) => s.domain), (await page())?.heartbeats.map((h) => h.slug)],
    [['blog.example.com'], ['backup']],
    'new monitors keep the sites and the heartbeats'
  )
  const unknown = await runCli(['pages', 'set', 'infra', '--monitor', 'nobody'], { env })
  t.same([unknown.code, unknown.stderr], [1, 'site-status: no monitor has the slug "nobody"; add it before listing it on a page\n'])
  const heartbeatAsMonitor = await runCli(['pages', 'set', 'infra', '--monitor', 'backup'], { env })
  t.same(
    [heartbeatAsMonitor.code, heartbeatAsMonitor.stderr],
    [1, 'site-status: no monitor has the slug "backup"; add it before listing it on a page\n'],
    'a heartbeat is no monitor'
  )
  const both = await runCli(['pages', 'set', 'infra', '--monitor', 'mail-mx', '--clear', 'monitors'], { env })
  t.same([both.code, both.stderr], [2, 'site-status: pages set takes --monitor or --clear monitors, not both (see site-status --help)\n'])
  t.equal((await runCli(['pages', 'set', 'infra', '--clear', 'monitors'], { env })).code, 0)
  t.same(await monitorsOf(), [])
  t.same(
    (await page())?.heartbeats.map((h) => h.slug),
    ['backup'],
    'clearing the monitors keeps the heartbeats'
  )
})
