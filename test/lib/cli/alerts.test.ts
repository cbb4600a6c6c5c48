import t from 'tap'
import { randomBytes } from 'node:crypto'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { hasStackTrace, lines, runCli } from '../../helpers/cli.js'
import { migratedDb } from '../../helpers/db.js'
import { receiver } from '../../helpers/webhooks.js'

t.test('channels add, test, list, remove and alerts policy, site and page', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const env = { DATABASE_URL: url, ALLOW_PRIVATE_TARGETS: '1', WEBHOOK_KEY: randomBytes(32).toString('base64') }
  const hook = await receiver(t)
  const secretUrl = `${hook.url}/T0/B0/topsecret0123`
  const added = await runCli(['channels', 'add', 'team chat', '--kind', 'slack', '--config', JSON.stringify({ url: secretUrl })], { env })
  t.same([added.code, added.stdout], [0, '1\n'], 'prints the id')
  const am = await runCli(
    ['channels', 'add', 'am', '--kind', 'alertmanager', '--config', '{"urls": ["http://127.0.0.1:9093"]}', '--report-to', '1'],
    { env }
  )
  t.same([am.code, am.stdout], [0, '2\n'])

  const tested = await runCli(['channels', 'test', '1'], { env })
  t.same([tested.code, tested.stdout], [0, 'delivered: HTTP 200: thanks\n'], 'what the receiver said')
  t.match(JSON.parse(hook.got.at(-1)?.body ?? '{}'), { text: /Test message from Site Status API/ })

  const list = await runCli(['channels', 'list'], { env })
  t.equal(list.code, 0)
  t.same(
    lines(list.stdout).map((l) => l.split(/\s{2,}/).slice(0, 3)),
    [
      ['ID', 'NAME', 'KIND'],
      ['1', 'team chat', 'slack'],
      ['2', 'am', 'alertmanager']
    ]
  )
  t.notOk(list.stdout.includes('topsecret'), 'no secret listed')

  const policy = await runCli(
    ['alerts', 'policy', 'add', 'web', '--channels', '1', '--after', '5', '--remind', '10', '--escalate', '15:2', '--default'],
    { env }
  )
  t.same([policy.code, policy.stdout], [0, '1\n'])
  const shown = await runCli(['alerts', 'policy', 'list'], { env })
  t.match(shown.stdout, /^1\s+web \(default\)\s+1\s+5\s+10\s+15:2$/m)
  t.same((await runCli(['alerts', 'policy', 'set', '1', '--remind', 'none'], { env })).stdout, 'changed alert policy 1\n')
  t.match((await runCli(['alerts', 'policy', 'list'], { env })).stdout, /^1\s+web \(default\)\s+1\s+5\s+-\s+15:2$/m)

  await addSites({
    db,
    entries: [
      { domain: 'app.example.com', name: null },
      { domain: 'db.example.com', name: null }
    ],
    now: new Date()
  })
  t.same((await runCli(['alerts', 'site', 'app.example.com', '--policy', '1', '--depends-on', 'db.example.com'], { env })).code, 0)
  t.match(await db('sites').where({ domain: 'app.example.com' }).first('alert_policy_id', 'depends_on_site_id'), {
    alert_policy_id: 1,
    depends_on_site_id: Number
  })
  const loop = await runCli(['alerts', 'site', 'db.example.com', '--depends-on', 'app.example.com'], { env })
  t.same([loop.code, loop.stderr], [1, 'site-status: --depends-on would make a loop of dependencies\n'])

  for (const [args, code, error] of [
    [['channels', 'add', 'x', '--kind', 'sms', '--config', '{}'], 2, /--kind must be one of/],
    [['channels', 'add', 'x', '--kind', 'slack', '--config', 'nope'], 2, /--config must be a JSON object/],
    [['channels', 'add', 'x', '--kind', 'slack', '--config', '{}'], 1, /"config.url" is required/],
    [['channels', 'test', '99'], 1, /no channel 99/],
    [['alerts', 'policy', 'add', 'bad', '--channels', '7'], 1, /channel 7 does not exist/],
    [['alerts', 'policy', 'add', 'bad', '--channels', '1', '--escalate', 'soon'], 2, /--escalate must be MIN:IDS/],
    [['alerts', 'page', 'nope', '--policy', '1'], 1, /no status page nope/]
  ] as const) {
    const res = await runCli([...args], { env })
    t.equal(res.code, code, args.join(' '))
    t.match(res.stderr, error)
    t.notOk(hasStackTrace(res.stderr))
  }
  t.same((await runCli(['channels', 'remove', '2'], { env })).stdout, 'removed channel 2\n')
  t.match(
    (await runCli(['alerts', 'policy', 'list'], { env })).stdout,
    /^1\s+web \(default\)\s+1\s+5\s+-\s+-$/m,
    'the policy no longer names it'
  )
  t.same((await runCli(['alerts', 'policy', 'remove', '1'], { env })).stdout, 'removed alert policy 1\n')
  const help = await runCli(['channels', '--help'], { env })
  t.match(help.stdout, /site-status channels add NAME --kind KIND --config JSON/)
})
