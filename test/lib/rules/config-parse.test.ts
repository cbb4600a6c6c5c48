import t from 'tap'
import { readFileSync } from 'node:fs'
import { parseConfigText, problemText } from '../../../lib/rules/config-parse.js'

const env = { SLACK_URL: 'https://hooks.slack.example/T1/B2/c3' }

function problems(text: string): string[] {
  const parsed = parseConfigText(text, 'watch.yaml', env)
  if (parsed.ok) return []
  return parsed.problems.map(problemText)
}

t.test('the smallest file reads to its normal form', async (t) => {
  const parsed = parseConfigText('sites: [{domain: Shop.Example.com, name: Shop, interval_s: 60, expect: {status: [200]}}]', 'f.yaml', {})
  t.ok(parsed.ok)
  if (!parsed.ok) return
  t.same(parsed.file, {
    sites: [
      {
        domain: 'shop.example.com',
        name: 'Shop',
        interval_s: 60,
        expect: { status: [200], body_contains: null, max_response_ms: null },
        alert_policy: null,
        depends_on: null,
        maintenance: [],
        check: null
      }
    ],
    monitors: [],
    pages: [],
    webhooks: [],
    heartbeats: [],
    channels: [],
    alert_policies: []
  })
})

t.test('JSON is read too, and two spellings of one file have one normal form', async (t) => {
  const yaml = parseConfigText(
    'pages:\n  - slug: main\n    title: " Main "\n    sites: [{domain: b.example.com}]\nsites:\n  - domain: b.example.com\n  - domain: a.example.com\n    expect: {status: [201, "200-204"]}\n',
    'a.yaml',
    {}
  )
  const json = parseConfigText(
    JSON.stringify({
      sites: [
        { domain: 'A.example.com', expect: { status: ['200-204'] } },
        { domain: 'b.example.com', name: 'b.example.com' }
      ],
      pages: [{ slug: 'main', title: 'Main', sites: [{ domain: 'b.example.com', name: null }] }],
      heartbeats: []
    }),
    'a.json',
    {}
  )
  t.ok(yaml.ok && json.ok)
  if (yaml.ok && json.ok) t.same(yaml.file, json.file)
})

t.test('bad input is refused with the file, the line and the field', async (t) => {
  const rows: Array<[string, string, RegExp]> = [
    [
      'a wrong type',
      'sites:\n  - domain: a.example.com\n    interval_s: "60"\n',
      /^watch\.yaml:3: sites\[0\]\.interval_s: "interval_s" must be a whole number/
    ],
    ['an unknown key', 'sites:\n  - domain: a.example.com\n    intervals: 60\n', /^watch\.yaml:3: sites\[0\]\.intervals: .*not allowed/],
    ['an unknown top-level list', 'sites: []\nprobes: []\n', /^watch\.yaml:2: probes: .*not allowed/],
    [
      'a duplicate domain',
      'sites:\n  - domain: a.example.com\n  - domain: A.example.com.\n',
      /^watch\.yaml:3: sites\[1\]\.domain: a\.example\.com is declared twice/
    ],
    [
      'a page naming an undeclared site',
      'sites:\n  - domain: a.example.com\npages:\n  - slug: main\n    title: Main\n    sites:\n      - domain: a.example.com\n      - domain: b.example.com\n',
      /^watch\.yaml:8: pages\[0\]\.sites\[1\]\.domain: the page lists b\.example\.com, which this file does not declare/
    ],
    [
      'a page naming a monitor the file does not declare',
      'monitors:\n  - slug: db\n    name: DB\n    target: db.example.com\n    check: {type: tcp, port: 5432}\npages:\n  - slug: main\n    title: Main\n    sites: []\n    monitors:\n      - slug: db\n      - slug: cache\n',
      /^watch\.yaml:12: pages\[0\]\.monitors\[1\]\.slug: the page lists the monitor "cache", which this file does not declare/
    ],
    [
      'a page naming a heartbeat the file does not declare',
      'pages:\n  - slug: main\n    title: Main\n    sites: []\n    heartbeats:\n      - slug: nightly\n        name: Backups\n',
      /^watch\.yaml:6: pages\[0\]\.heartbeats\[0\]\.slug: the page lists the heartbeat "nightly", which this file does not declare/
    ],
    [
      'a page listing a monitor twice',
      'pages:\n  - slug: main\n    title: Main\n    sites: []\n    monitors: [{slug: db}, {slug: db}]\n',
      /^watch\.yaml:5: pages\[0\]\.monitors: monitor db is listed twice/
    ],
    [
      'a secret written inline',
      'sites:\n  - domain: a.example.com\npages:\n  - slug: main\n    title: Main\n    logo_url: https://me:hunter2@cdn.example.com/logo.png\n    sites: []\n',
      /^watch\.yaml:6: pages\[0\]\.logo_url: holds a secret written out; write "\$\{NAME\}"/
    ],
    [
      'a token written inline',
      'sites:\n  - domain: a.example.com\n    expect: {body_contains: "xoxb-1234"}\n',
      /^watch\.yaml:3: sites\[0\]\.expect\.body_contains: holds a secret/
    ],
    [
      'an environment variable not set',
      'sites:\n  - domain: a.example.com\n    name: ${SHOP_NAME}\n',
      /^watch\.yaml:3: sites\[0\]\.name: the environment variable SHOP_NAME is not set/
    ],
    ['a key written twice', 'sites: []\nsites: []\n', /^watch\.yaml:2: a key is written twice/],
    [
      'a dependency outside the file',
      'sites:\n  - domain: a.example.com\n    depends_on: b.example.com\n',
      /^watch\.yaml:3: sites\[0\]\.depends_on: .*does not declare/
    ],
    [
      'a loop of dependencies',
      'sites:\n  - domain: a.example.com\n    depends_on: b.example.com\n  - domain: b.example.com\n    depends_on: a.example.com\n',
      /depends_on: "depends_on" makes a loop/
    ],
    [
      'a heartbeat without its schedule',
      'heartbeats:\n  - slug: nightly\n    name: Nightly\n    grace_s: 60\n',
      /^watch\.yaml:2: heartbeats\[0\]\.schedule: .*is required/
    ],
    [
      'a heartbeat schedule the heartbeats API refuses',
      'heartbeats:\n  - slug: nightly\n    name: Nightly\n    grace_s: 60\n    schedule: {every_s: 1}\n',
      /^watch\.yaml:5: heartbeats\[0\]\.schedule\.every_s: "schedule\.every_s" must be a whole number/
    ],
    [
      'a channel secret written inline',
      'channels:\n  - name: ops\n    kind: slack\n    config:\n      url: https://hooks.slack.example/T1/B2/c3\n',
      /^watch\.yaml:5: channels\[0\]\.config\.url: a secret is written "\$\{NAME\}"/
    ],
    [
      'a webhook secret written inline',
      'webhooks:\n  - url: https://hooks.example.com/in\n    secret: whsec_MDEyMzQ1Njc4OWFiY2RlZg==\n',
      /^watch\.yaml:3: webhooks\[0\]\.secret: holds a secret written out/
    ],
    [
      'a secret header written inline',
      'sites:\n  - domain: a.example.com\n    check: {type: http, headers: {X-Api-Key: abc}, secret_headers: [x-api-key]}\n',
      /^watch\.yaml:3: sites\[0\]\.check\.headers\.x-api-key: a secret header is written "\$\{NAME\}"/
    ],
    [
      'a policy of a channel named twice',
      'alert_policies:\n  - name: p\n    channels: [ops, ops]\n',
      /^watch\.yaml:3: alert_policies\[0\]\.channels\[1\]: .*duplicate/
    ],
    [
      'a maintenance window the maintenance API refuses',
      'sites:\n  - domain: a.example.com\n    maintenance:\n      - {from: "2027-01-02T00:00:00Z", to: "2027-01-01T00:00:00Z"}\n',
      /^watch\.yaml:4: sites\[0\]\.maintenance\[0\]: "from" must be before "to"/
    ],
    [
      'a monitor without its target',
      'monitors:\n  - slug: db\n    name: Database\n    check: {type: tcp, port: 5432}\n',
      /^watch\.yaml:2: monitors\[0\]\.target: "target" is required/
    ],
    [
      'a monitor check the monitors API refuses',
      'monitors:\n  - slug: db\n    name: Database\n    target: db.example.com\n    check: {type: tcp, port: 70000}\n',
      /^watch\.yaml:5: monitors\[0\]\.check: "check\.port" must be less than or equal to 65535/
    ],
    [
      'a monitor with an http check',
      'monitors:\n  - slug: web\n    name: Web\n    target: www.example.com\n    check: {type: http}\n',
      /^watch\.yaml:5: monitors\[0\]\.check: "check\.type": a monitor is a tcp, tls or dns check/
    ],
    [
      'a monitor slug declared twice',
      'monitors:\n  - {slug: db, name: A, target: a.example.com, check: {type: tls}}\n  - {slug: db, name: B, target: b.example.com, check: {type: tls}}\n',
      /^watch\.yaml:3: monitors\[1\]\.slug: the slug "db" is declared twice \(also monitors\[0\]\)/
    ],
    ['not a mapping', '- a\n- b\n', /^watch\.yaml:1: the file must be a mapping/],
    ['not YAML', 'sites: [a\n', /^watch\.yaml:\d+: not valid YAML or JSON/]
  ]
  for (const [title, text, expected] of rows) {
    const found = problems(text)
    t.match(found[0] ?? '(accepted)', expected, title)
  }
})

t.test('a page lists the monitors and heartbeats the file declares; without the keys, none', async (t) => {
  const parsed = parseConfigText(
    [
      'monitors:',
      '  - {slug: db, name: DB, target: db.example.com, check: {type: tcp, port: 5432}}',
      'heartbeats:',
      '  - {slug: nightly, name: Nightly, schedule: {every_s: 86400}, grace_s: 600}',
      'pages:',
      '  - slug: main',
      '    title: Main',
      '    sites: []',
      '    monitors: [{slug: db, name: " Database "}]',
      '    heartbeats: [{slug: nightly}]',
      '  - {slug: bare, title: Bare, sites: []}',
      ''
    ].join('\n'),
    'f.yaml',
    {}
  )
  t.same(parsed.ok ? [] : parsed.problems.map(problemText), [])
  if (!parsed.ok) return
  t.same(
    parsed.file.pages.map((p) => ({ slug: p.slug, monitors: p.monitors, heartbeats: p.heartbeats })),
    [
      { slug: 'bare', monitors: [], heartbeats: [] },
      { slug: 'main', monitors: [{ slug: 'db', name: 'Database' }], heartbeats: [{ slug: 'nightly', name: null }] }
    ]
  )
})

t.test('every problem in a file is told at once', async (t) => {
  const found = problems('sites:\n  - domain: a.example.com\n    interval_s: 5\n  - domain: b.example.com\n    colour: red\n')
  t.equal(found.length, 2)
})

t.test('a value from the environment is put in, and never shown back in a problem', async (t) => {
  const parsed = parseConfigText('sites:\n  - domain: a.example.com\n    name: ${SLACK_URL}\n', 'f.yaml', env)
  t.ok(parsed.ok)
  if (parsed.ok) t.equal(parsed.file.sites[0]?.name, env.SLACK_URL)
  const bad = parseConfigText('sites:\n  - domain: a.example.com\n    interval_s: ${SLACK_URL}\n', 'f.yaml', env)
  t.notOk(bad.ok)
  if (!bad.ok) t.notMatch(JSON.stringify(bad.problems), /hooks\.slack/)
})

t.test("the README's example file reads, every list in it", async (t) => {
  const readme = readFileSync('README.md', 'utf8')
  const block = /## Monitoring as code[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
  const secrets = {
    SHOP_HEALTH_TOKEN: 'Bearer t0ken',
    STATUS_WEBHOOK_SECRET: 'whsec_MDEyMzQ1Njc4OWFiY2RlZg==',
    SLACK_URL: env.SLACK_URL,
    SMTP_PASSWORD: 'pw'
  }
  const parsed = parseConfigText(block, 'README.md', secrets)
  t.same(parsed.ok ? [] : parsed.problems.map(problemText), [], 'no problems')
  if (!parsed.ok) return
  for (const list of ['sites', 'monitors', 'pages', 'heartbeats', 'webhooks', 'channels', 'alert_policies'] as const)
    t.ok(parsed.file[list].length > 0, `it declares ${list}`)
  t.ok(
    parsed.file.pages.some((p) => p.monitors.length > 0 && p.heartbeats.length > 0),
    'a page in it lists a monitor and a heartbeat'
  )
})
