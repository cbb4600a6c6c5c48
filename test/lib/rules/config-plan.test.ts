import t from 'tap'
import type { ConfigFile, PageDecl, SiteDecl } from '../../../lib/rules/config-file.js'
import { parseConfigText } from '../../../lib/rules/config-parse.js'
import { configText, planConfig, planCounts, planText, type StoredConfig } from '../../../lib/rules/config-plan.js'
import { NO_EXPECTATIONS } from '../../../lib/rules/expectations.js'

const site = (domain: string, more: Partial<SiteDecl> = {}): SiteDecl => ({
  domain,
  name: domain,
  interval_s: null,
  expect: NO_EXPECTATIONS,
  alert_policy: null,
  depends_on: null,
  maintenance: [],
  check: null,
  ...more
})
const page = (slug: string, more: Partial<PageDecl> = {}): PageDecl => ({
  slug,
  title: slug,
  description: null,
  logo_url: null,
  sites: [],
  heartbeats: [],
  monitors: [],
  ...more
})
/** The lists a test leaves empty. */
const noLists = { monitors: [], webhooks: [], heartbeats: [], channels: [], alert_policies: [] }
const stored = (sites: Array<[SiteDecl, boolean]>, pages: Array<[PageDecl, boolean]> = []): StoredConfig => ({
  ...noLists,
  sites: sites.map(([s, managed]) => ({ ...s, managed })),
  pages: pages.map(([p, managed]) => ({ ...p, managed }))
})

t.test('a plan is the diff from what is stored to the file', async (t) => {
  const a = site('a.example.com')
  const rows: Array<{ title: string; file: ConfigFile; stored: StoredConfig; prune: boolean; expect: string[] }> = [
    { title: 'nothing either side', file: { ...noLists, sites: [], pages: [] }, stored: stored([]), prune: false, expect: [] },
    {
      title: 'a new site is created',
      file: { ...noLists, sites: [a], pages: [] },
      stored: stored([]),
      prune: false,
      expect: ['create site a.example.com']
    },
    {
      title: 'the same site is no change',
      file: { ...noLists, sites: [a], pages: [] },
      stored: stored([[a, true]]),
      prune: false,
      expect: []
    },
    {
      title: 'a hand-made site the file names is changed, not created',
      file: { ...noLists, sites: [site('a.example.com', { interval_s: 60 })], pages: [] },
      stored: stored([[a, false]]),
      prune: false,
      expect: ['change site a.example.com interval_s null->60']
    },
    {
      title: 'one field of the expectations is one change',
      file: { ...noLists, sites: [site('a.example.com', { expect: { ...NO_EXPECTATIONS, status: [200] } })], pages: [] },
      stored: stored([[a, true]]),
      prune: false,
      expect: ['change site a.example.com expect.status null->[200]']
    },
    {
      title: 'a check whose keys come in another order is no change',
      file: {
        ...noLists,
        sites: [
          site('a.example.com', {
            check: { assertions: [], body: null, secret_headers: [], headers: { b: '2', a: '1' }, path: '/h', method: 'GET', type: 'http' }
          })
        ],
        pages: []
      },
      stored: stored([
        [
          site('a.example.com', {
            check: { type: 'http', method: 'GET', path: '/h', headers: { a: '1', b: '2' }, secret_headers: [], body: null, assertions: [] }
          }),
          true
        ]
      ]),
      prune: false,
      expect: []
    },
    {
      title: 'but a changed value in it is',
      file: {
        ...noLists,
        sites: [
          site('a.example.com', {
            check: { assertions: [], body: null, secret_headers: [], headers: {}, path: '/health', method: 'GET', type: 'http' }
          })
        ],
        pages: []
      },
      stored: stored([
        [
          site('a.example.com', {
            check: { type: 'http', method: 'GET', path: '/h', headers: {}, secret_headers: [], body: null, assertions: [] }
          }),
          true
        ]
      ]),
      prune: false,
      expect: [
        'change site a.example.com check {"type":"http","method":"GET","path":"/h","headers":{},"secret_headers":[],"body":null,"assertions":[]}->{"assertions":[],"body":null,"secret_headers":[],"headers":{},"path":"/health","method":"GET","type":"http"}'
      ]
    },
    {
      title: 'a managed site left out is kept without prune',
      file: { ...noLists, sites: [], pages: [] },
      stored: stored([[a, true]]),
      prune: false,
      expect: []
    },
    {
      title: 'and removed with prune',
      file: { ...noLists, sites: [], pages: [] },
      stored: stored([[a, true]]),
      prune: true,
      expect: ['remove site a.example.com']
    },
    {
      title: 'a hand-made site left out is kept even with prune',
      file: { ...noLists, sites: [], pages: [] },
      stored: stored([[a, false]]),
      prune: true,
      expect: []
    },
    {
      title: 'a page whose list changes',
      file: { ...noLists, sites: [a], pages: [page('main', { sites: [{ domain: 'a.example.com', name: 'A' }] })] },
      stored: stored([[a, true]], [[page('main'), true]]),
      prune: false,
      expect: ['change page main sites []->[{"domain":"a.example.com","name":"A"}]']
    },
    {
      title: 'a page whose monitors change: one field, its other lists untouched',
      file: {
        ...noLists,
        sites: [a],
        pages: [
          page('main', {
            sites: [{ domain: 'a.example.com', name: null }],
            monitors: [
              { slug: 'db', name: null },
              { slug: 'dns', name: 'DNS' }
            ],
            heartbeats: [{ slug: 'nightly', name: null }]
          })
        ]
      },
      stored: stored(
        [[a, true]],
        [
          [
            page('main', {
              sites: [{ domain: 'a.example.com', name: null }],
              monitors: [{ slug: 'db', name: null }],
              heartbeats: [{ slug: 'nightly', name: null }]
            }),
            true
          ]
        ]
      ),
      prune: false,
      expect: ['change page main monitors ["db"]->["db",{"slug":"dns","name":"DNS"}]']
    },
    {
      title: 'a page whose file leaves out the heartbeats it lists loses them',
      file: { ...noLists, sites: [], pages: [page('main')] },
      stored: stored([], [[page('main', { heartbeats: [{ slug: 'nightly', name: 'Backups' }] }), true]]),
      prune: false,
      expect: ['change page main heartbeats [{"slug":"nightly","name":"Backups"}]->null']
    },
    {
      title: 'a hand-made page left out is kept with prune, a managed one removed',
      file: { ...noLists, sites: [], pages: [] },
      stored: stored(
        [],
        [
          [page('hand'), false],
          [page('made'), true]
        ]
      ),
      prune: true,
      expect: ['remove page made']
    }
  ]
  for (const row of rows) {
    const plan = planConfig({ file: row.file, stored: row.stored, prune: row.prune })
    const got = plan.items.map((i) =>
      [
        i.action,
        i.resource,
        i.key,
        ...(i.action === 'change' ? i.changes.map((c) => `${c.field} ${JSON.stringify(c.old)}->${JSON.stringify(c.new)}`) : [])
      ].join(' ')
    )
    t.same(got, row.expect, row.title)
  }
})

t.test('the plan prints a line per resource and per field, and says when nothing changes', async (t) => {
  const plan = planConfig({
    file: { ...noLists, sites: [site('a.example.com', { interval_s: 120 }), site('b.example.com')], pages: [] },
    stored: stored([[site('a.example.com', { interval_s: 60 }), true]]),
    prune: false
  })
  t.same(planCounts(plan), { create: 1, change: 1, remove: 0 })
  t.equal(
    planText(plan),
    [
      '~ site a.example.com',
      '    interval_s: 60 -> 120',
      '+ site b.example.com',
      '    name: "b.example.com"',
      'Plan: 1 to create, 1 to change, 0 to remove.'
    ].join('\n')
  )
  const none = planConfig({ file: { ...noLists, sites: [], pages: [] }, stored: stored([[site('a.example.com'), true]]), prune: false })
  t.match(planText(none), /^No changes: what is running matches the file\. 1 made by an earlier apply/)
})

t.test('a file written from a normal form reads back as it', async (t) => {
  const file: ConfigFile = {
    ...noLists,
    sites: [
      site('a.example.com', {
        name: 'A',
        interval_s: 60,
        expect: { status: ['200-299', 401], body_contains: 'ok', max_response_ms: 900 },
        alert_policy: 'night'
      }),
      site('b.example.com', { depends_on: 'a.example.com' })
    ],
    pages: [
      page('main', {
        title: 'Main',
        description: 'All of it',
        sites: [
          { domain: 'b.example.com', name: null },
          { domain: 'a.example.com', name: 'Front' }
        ]
      })
    ]
  }
  const text = configText(file, 'https://status.example.com/api/v1/config.schema.json')
  t.match(text, /^# yaml-language-server: \$schema=https:\/\/status\.example\.com\/api\/v1\/config\.schema\.json\n/)
  const back = parseConfigText(text, 'export.yaml', {})
  t.ok(back.ok)
  if (back.ok) t.same(back.file, file)
})

t.test('a secret is compared by value and never shown', async (t) => {
  const hook = { url: 'https://hooks.example.com/in', events: null, domains: null }
  const channel = { name: 'ops', kind: 'slack' as const, config: {}, report_to: null }
  const file: ConfigFile = {
    ...noLists,
    sites: [],
    pages: [],
    webhooks: [{ ...hook, secret: 'whsec_new' }],
    channels: [{ ...channel, secrets: { url: 'https://hooks.slack.example/new' } }]
  }
  const before: StoredConfig = {
    ...stored([]),
    webhooks: [{ ...hook, secret: 'whsec_old', managed: true }],
    channels: [{ ...channel, secrets: { url: 'https://hooks.slack.example/old' }, managed: true }]
  }
  const plan = planConfig({ file, stored: before, prune: false })
  t.same(
    plan.items.map((i) => [i.resource, i.changes]),
    [
      ['channel', [{ field: 'config.url', old: '(secret)', new: '(new secret)' }]],
      ['webhook', [{ field: 'secret', old: '(secret)', new: '(new secret)' }]]
    ]
  )
  t.notMatch(JSON.stringify(plan) + planText(plan), /whsec_|hooks\.slack/, 'no value in the plan or its text')
  const kept = planConfig({ file: { ...file, webhooks: [{ ...hook, secret: null }] }, stored: before, prune: false })
  t.same(
    kept.items.map((i) => i.resource),
    ['channel'],
    'a webhook the file gives no secret keeps its own'
  )
})

t.test('a monitor is planned field by field, its check key by key, and written back as it reads', async (t) => {
  const parsed = parseConfigText(
    `monitors:
  - slug: db
    name: Database
    target: DB.example.com
    check: { port: 5432, type: tcp }
    interval_s: 60
    maintenance: [{ weekly: { day: sun, time: "02:00", duration_minutes: 60, zone: UTC }, reason: backups }]
  - { slug: cert, name: Cert, target: mail.example.com, check: { type: tls, port: 993 }, max_response_ms: 800 }
  - slug: mx
    name: MX
    target: example.com
    check: { type: dns, record: MX, expect: ["10 mail.example.com"], assertions: [{ source: response_time, comparison: less_than, target: 300 }] }
`,
    'f.yaml',
    {}
  )
  t.ok(parsed.ok)
  if (!parsed.ok) return
  const file = parsed.file
  t.same(
    file.monitors.map((m) => [m.slug, m.target, m.check.type]),
    [
      ['cert', 'mail.example.com', 'tls'],
      ['db', 'db.example.com', 'tcp'],
      ['mx', 'example.com', 'dns']
    ],
    'sorted by slug, the target normalised'
  )
  const back = parseConfigText(configText(file, null), 'export.yaml', {})
  t.ok(back.ok)
  if (back.ok) t.same(back.file, file, 'the written file reads back as the normal form')

  const storedOf = (managed: boolean): StoredConfig => ({ ...stored([]), monitors: file.monitors.map((m) => ({ ...m, managed })) })
  t.same(planConfig({ file, stored: storedOf(false), prune: false }).items, [], 'the same monitors plan nothing')
  const db = file.monitors[1]
  if (db?.check.type !== 'tcp') throw new Error('db is the tcp monitor')
  const edited = { ...file, monitors: [file.monitors[0], { ...db, check: { ...db.check, port: 6432 } }, file.monitors[2]] } as ConfigFile
  t.same(
    planConfig({ file: edited, stored: storedOf(false), prune: false }).items,
    [{ resource: 'monitor', key: 'db', action: 'change', changes: [{ field: 'check.port', old: 5432, new: 6432 }] }],
    'one setting of a check is one field'
  )
  const unwindowed = { ...file, monitors: [file.monitors[0], { ...db, maintenance: [] }, file.monitors[2]] } as ConfigFile
  t.same(
    planConfig({ file: unwindowed, stored: storedOf(false), prune: false }).items,
    [{ resource: 'monitor', key: 'db', action: 'change', changes: [{ field: 'maintenance', old: db.maintenance, new: null }] }],
    'its maintenance windows are one field'
  )
  t.same(
    db.maintenance,
    [{ weekly: { day: 'sun', time: '02:00', duration_minutes: 60, zone: 'UTC' }, reason: 'backups' }],
    'read as a site reads its windows'
  )
  const none = { ...file, monitors: [] }
  t.same(planConfig({ file: none, stored: storedOf(false), prune: true }).items, [], 'hand-made monitors are never pruned')
  t.same(
    planConfig({ file: none, stored: storedOf(true), prune: true }).items.map((i) => `${i.action} ${i.resource} ${i.key}`),
    ['remove monitor cert', 'remove monitor db', 'remove monitor mx'],
    'those an apply made are, with prune'
  )
})

t.test("a page's monitors and heartbeats are written back as they read, and a new page shows only those it lists", async (t) => {
  const parsed = parseConfigText(
    `monitors:
  - { slug: db, name: Database, target: db.example.com, check: { type: tcp, port: 5432 } }
heartbeats:
  - { slug: nightly, name: Nightly, schedule: { every_s: 86400 }, grace_s: 600 }
pages:
  - { slug: main, title: Main, sites: [], monitors: [{ slug: db, name: DB }], heartbeats: [{ slug: nightly }] }
  - { slug: plain, title: Plain, sites: [] }
`,
    'f.yaml',
    {}
  )
  t.ok(parsed.ok)
  if (!parsed.ok) return
  const text = configText(parsed.file, null)
  t.match(text, /monitors:\n\s+- slug: db\n\s+name: DB\n\s+heartbeats:\n\s+- slug: nightly\n/, 'listed under the page')
  const back = parseConfigText(text, 'export.yaml', {})
  t.ok(back.ok)
  if (back.ok) t.same(back.file, parsed.file, 'the written file reads back as the normal form')
  const created = planConfig({ file: parsed.file, stored: stored([]), prune: false }).items.filter((i) => i.resource === 'page')
  t.same(
    created.map((i) => [i.key, i.changes.map((c) => c.field)]),
    [
      ['main', ['title', 'sites', 'heartbeats', 'monitors']],
      ['plain', ['title', 'sites']]
    ]
  )
  t.same(created[0]?.changes.find((c) => c.field === 'monitors')?.new, [{ slug: 'db', name: 'DB' }])
})
