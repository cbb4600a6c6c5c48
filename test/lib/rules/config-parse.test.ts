import t from 'tap'
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
        depends_on: null
      }
    ],
    pages: []
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
    ['an unknown top-level list', 'sites: []\nmonitors: []\n', /^watch\.yaml:2: monitors: .*not allowed/],
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
      'heartbeats before they are managed',
      'heartbeats:\n  - name: nightly\n',
      /^watch\.yaml:1: heartbeats: heartbeats are not managed from a file yet/
    ],
    ['not a mapping', '- a\n- b\n', /^watch\.yaml:1: the file must be a mapping/],
    ['not YAML', 'sites: [a\n', /^watch\.yaml:\d+: not valid YAML or JSON/]
  ]
  for (const [title, text, expected] of rows) {
    const found = problems(text)
    t.match(found[0] ?? '(accepted)', expected, title)
  }
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
