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
  ...more
})
const page = (slug: string, more: Partial<PageDecl> = {}): PageDecl => ({
  slug,
  title: slug,
  description: null,
  logo_url: null,
  sites: [],
  ...more
})
const stored = (sites: Array<[SiteDecl, boolean]>, pages: Array<[PageDecl, boolean]> = []): StoredConfig => ({
  sites: sites.map(([s, managed]) => ({ ...s, managed })),
  pages: pages.map(([p, managed]) => ({ ...p, managed }))
})

t.test('a plan is the diff from what is stored to the file', async (t) => {
  const a = site('a.example.com')
  const rows: Array<{ title: string; file: ConfigFile; stored: StoredConfig; prune: boolean; expect: string[] }> = [
    { title: 'nothing either side', file: { sites: [], pages: [] }, stored: stored([]), prune: false, expect: [] },
    {
      title: 'a new site is created',
      file: { sites: [a], pages: [] },
      stored: stored([]),
      prune: false,
      expect: ['create site a.example.com']
    },
    { title: 'the same site is no change', file: { sites: [a], pages: [] }, stored: stored([[a, true]]), prune: false, expect: [] },
    {
      title: 'a hand-made site the file names is changed, not created',
      file: { sites: [site('a.example.com', { interval_s: 60 })], pages: [] },
      stored: stored([[a, false]]),
      prune: false,
      expect: ['change site a.example.com interval_s null->60']
    },
    {
      title: 'one field of the expectations is one change',
      file: { sites: [site('a.example.com', { expect: { ...NO_EXPECTATIONS, status: [200] } })], pages: [] },
      stored: stored([[a, true]]),
      prune: false,
      expect: ['change site a.example.com expect.status null->[200]']
    },
    {
      title: 'a managed site left out is kept without prune',
      file: { sites: [], pages: [] },
      stored: stored([[a, true]]),
      prune: false,
      expect: []
    },
    {
      title: 'and removed with prune',
      file: { sites: [], pages: [] },
      stored: stored([[a, true]]),
      prune: true,
      expect: ['remove site a.example.com']
    },
    {
      title: 'a hand-made site left out is kept even with prune',
      file: { sites: [], pages: [] },
      stored: stored([[a, false]]),
      prune: true,
      expect: []
    },
    {
      title: 'a page whose list changes',
      file: { sites: [a], pages: [page('main', { sites: [{ domain: 'a.example.com', name: 'A' }] })] },
      stored: stored([[a, true]], [[page('main'), true]]),
      prune: false,
      expect: ['change page main sites []->[{"domain":"a.example.com","name":"A"}]']
    },
    {
      title: 'a hand-made page left out is kept with prune, a managed one removed',
      file: { sites: [], pages: [] },
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
    file: { sites: [site('a.example.com', { interval_s: 120 }), site('b.example.com')], pages: [] },
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
  const none = planConfig({ file: { sites: [], pages: [] }, stored: stored([[site('a.example.com'), true]]), prune: false })
  t.match(planText(none), /^No changes: what is running matches the file\. 1 made by an earlier apply/)
})

t.test('a file written from a normal form reads back as it', async (t) => {
  const file: ConfigFile = {
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
