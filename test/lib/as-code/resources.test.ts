import { randomBytes } from 'node:crypto'
import t from 'tap'
import { applyFile, ConfigRefusedError, opener, planFile } from '../../../lib/as-code/apply.js'
import { exportConfigText } from '../../../lib/as-code/export.js'
import { addHeartbeat } from '../../../lib/heartbeats/manage.js'
import { sealCheck } from '../../../lib/monitoring/check-secrets.js'
import { addMaintenanceWindow } from '../../../lib/monitoring/maintenance-windows.js'
import { addMonitor } from '../../../lib/monitoring/monitors.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import type { HttpCheck } from '../../../lib/rules/check-spec.js'
import type { ConfigFile } from '../../../lib/rules/config-file.js'
import { parseConfigText } from '../../../lib/rules/config-parse.js'
import { NO_EXPECTATIONS } from '../../../lib/rules/expectations.js'
import { monitorBody, type MonitorInput } from '../../../lib/rules/monitor-fields.js'
import { insertChannel, insertPolicy } from '../../../lib/store/alert-config.js'
import type { Db } from '../../../lib/store/db.js'
import { createWebhook } from '../../../lib/webhooks/manage.js'
import { generateSecret, SecretBox } from '../../../lib/webhooks/secret-box.js'
import { engines, migratedDb } from '../../helpers/db.js'

const now = (): Date => new Date()
const box = new SecretBox({ key: randomBytes(32), keyFile: '/nonexistent/webhook.key' })
const SLACK_URL = 'https://hooks.slack.example/services/T0/B0/abc'
const TOKEN = 'Bearer s3cret-token'

function fileOf(text: string, env: Record<string, string>): ConfigFile {
  const parsed = parseConfigText(text, 'test.yaml', env)
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  return parsed.file
}

/** A team's service made by hand, every kind a file declares included; returns the secrets the export names. */
async function handMade(db: Db): Promise<Record<string, string>> {
  const check: HttpCheck = {
    type: 'http',
    method: 'GET',
    path: '/health',
    headers: { authorization: TOKEN, accept: 'text/plain' },
    secret_headers: ['authorization'],
    body: null,
    assertions: []
  }
  await addSites({
    db,
    entries: [
      { domain: 'shop.example.com', name: 'Shop', settings: { interval_s: 60, expect: NO_EXPECTATIONS, check: sealCheck(check, box) } },
      { domain: 'api.example.com', name: null, settings: { interval_s: null, expect: { ...NO_EXPECTATIONS, status: [200] } } }
    ],
    now: now()
  })
  await addMaintenanceWindow({
    db,
    domain: 'shop.example.com',
    window: { weekly: { day: 'sun', time: '02:00', duration_minutes: 60, zone: 'Europe/Berlin' }, reason: 'backups' },
    now: now()
  })
  await addMaintenanceWindow({
    db,
    domain: 'api.example.com',
    window: { from: new Date('2027-01-01T00:00:00Z'), to: new Date('2027-01-01T02:00:00Z'), reason: null },
    now: now()
  })
  const slack = await insertChannel({
    db,
    name: 'ops',
    kind: 'slack',
    config: {},
    secret: box.seal(JSON.stringify({ url: SLACK_URL })),
    reportTo: null,
    now: now()
  })
  await insertChannel({
    db,
    name: 'mail',
    kind: 'email',
    config: { host: 'smtp.example.com', port: 587, security: 'starttls', from: 'a@example.com', to: ['b@example.com'] },
    secret: null,
    reportTo: slack.id,
    now: now()
  })
  await db.transaction((trx) =>
    insertPolicy({
      db: trx,
      policy: {
        name: 'on-call',
        channels: [slack.id],
        events: ['outage.opened', 'outage.closed'],
        after_min: 5,
        remind_every_min: 60,
        escalate: [],
        on_resolved: true,
        group_window_s: 60,
        is_default: false
      },
      now: now()
    })
  )
  await addHeartbeat({
    db,
    slug: 'nightly',
    settings: { name: 'Nightly backup', schedule: { every_s: 86_400 }, grace_s: 3600, max_runtime_s: null },
    now: now()
  })
  // A monitor of each kind, as POST /api/v1/monitors makes them.
  for (const body of [
    {
      slug: 'db',
      name: 'Database',
      target: 'db.example.com',
      check: { type: 'tcp', port: 5432, send: 'PING\r\n', expect_prefix: '+PONG' }
    },
    {
      slug: 'imaps',
      name: 'Mail certificate',
      target: 'mail.example.com',
      check: { type: 'tls', port: 993, assertions: [{ source: 'certificate_days', comparison: 'greater_than', target: 14 }] },
      interval_s: 300
    },
    {
      slug: 'mx',
      name: 'Shop MX',
      target: 'shop.example.com',
      check: { type: 'dns', record: 'MX', expect: ['10 mail.example.com'] },
      max_response_ms: 500
    }
  ]) {
    const input = monitorBody.validate(body)
    if (input.error) throw input.error
    await addMonitor({ db, slug: body.slug, input: input.value as MonitorInput, box, now: now() })
  }
  // A monitor's window, as POST /api/v1/monitors/imaps/maintenance makes it.
  await addMaintenanceWindow({
    db,
    domain: 'monitor:imaps',
    window: { weekly: { day: 'sat', time: '03:00', duration_minutes: 30, zone: 'UTC' }, reason: 'certificate rotation' },
    now: now()
  })
  const hook = await createWebhook({
    db,
    box,
    url: 'https://hooks.example.com/in',
    events: ['outage.opened'],
    domains: ['shop.example.com'],
    now: now()
  })
  return { WEBHOOK_1_SECRET: hook.secret, CHANNEL_OPS_URL: SLACK_URL, SITE_SHOP_EXAMPLE_COM_AUTHORIZATION: TOKEN }
}

const exportOf = (db: Db): Promise<string> => exportConfigText({ db, schemaUrl: null, open: opener(box) })

for (const engine of engines()) {
  t.test(`a round trip of every kind on ${engine}: export, apply, edit one field, plan, apply, export`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const env = await handMade(db)
    const exported = await exportOf(db)
    for (const part of ['monitors:', 'heartbeats:', 'webhooks:', 'channels:', 'alert_policies:', 'maintenance:', 'check:'])
      t.match(exported, part, `the export holds ${part}`)
    t.notMatch(exported, SLACK_URL, 'a channel secret is never written')
    t.notMatch(exported, env.WEBHOOK_1_SECRET, 'nor a webhook secret')
    t.notMatch(exported, 's3cret', 'nor a secret header')
    t.match(exported, '${CHANNEL_OPS_URL}')
    t.match(exported, '${WEBHOOK_1_SECRET}')
    t.match(exported, '${SITE_SHOP_EXAMPLE_COM_AUTHORIZATION}')
    t.match(exported, 'report_to: ops')

    const first = await applyFile({ db, file: fileOf(exported, env), prune: true, now, box })
    t.same(first.plan.items, [], 'export then apply is a no-op')

    const edits: Array<[string, string, object]> = [
      ['grace_s: 3600', 'grace_s: 1800', { resource: 'heartbeat', key: 'nightly', field: 'grace_s', old: 3600, new: 1800 }],
      ['after_min: 5', 'after_min: 10', { resource: 'alert_policy', key: 'on-call', field: 'after_min', old: 5, new: 10 }],
      ['reason: backups', 'reason: dumps', { resource: 'site', key: 'shop.example.com', field: 'maintenance' }],
      ['path: /health', 'path: /healthz', { resource: 'site', key: 'shop.example.com', field: 'check' }],
      ['port: 587', 'port: 2525', { resource: 'channel', key: 'mail', field: 'config.port', old: 587, new: 2525 }],
      ['port: 5432', 'port: 6432', { resource: 'monitor', key: 'db', field: 'check.port', old: 5432, new: 6432 }],
      ['interval_s: 300', 'interval_s: 600', { resource: 'monitor', key: 'imaps', field: 'interval_s', old: 300, new: 600 }],
      ['target: "14"', 'target: "21"', { resource: 'monitor', key: 'imaps', field: 'check.assertions' }],
      ['record: MX', 'record: TXT', { resource: 'monitor', key: 'mx', field: 'check.record', old: 'MX', new: 'TXT' }],
      ['reason: certificate rotation', 'reason: renewal', { resource: 'monitor', key: 'imaps', field: 'maintenance' }]
    ]
    let text = exported
    for (const [from, to, expected] of edits) {
      const edited = text.replace(from, to)
      t.not(edited, text, `the export has ${from}`)
      const plan = await planFile({ db, file: fileOf(edited, env), prune: false, box })
      const shown = plan.items.flatMap((i) => i.changes.map((c) => ({ resource: i.resource, key: i.key, action: i.action, ...c })))
      t.equal(shown.length, 1, `editing ${from} changes one field`)
      t.match(shown[0], { action: 'change', ...expected })
      await applyFile({ db, file: fileOf(edited, env), prune: false, now, box })
      t.same(fileOf(await exportOf(db), env), fileOf(edited, env), `the export equals the file edited to ${to}`)
      text = edited
    }

    const rotated = { ...env, CHANNEL_OPS_URL: 'https://hooks.slack.example/services/T0/B0/new', WEBHOOK_1_SECRET: generateSecret() }
    const plan = await planFile({ db, file: fileOf(text, rotated), prune: false, box })
    t.same(
      plan.items.map((i) => [i.resource, i.key, i.changes]),
      [
        ['channel', 'ops', [{ field: 'config.url', old: '(secret)', new: '(new secret)' }]],
        ['webhook', 'https://hooks.example.com/in', [{ field: 'secret', old: '(secret)', new: '(new secret)' }]]
      ],
      'a secret changed in the environment is a change, its values never shown'
    )
    await applyFile({ db, file: fileOf(text, rotated), prune: false, now, box })
    const again = await applyFile({ db, file: fileOf(text, rotated), prune: false, now, box })
    t.same(again.plan.items, [], 'and once applied, nothing more')
    t.match(
      await db('sites').where({ domain: 'monitor:db' }).first('kind', 'target', 'check_spec', 'managed_by'),
      { kind: 'tcp', target: 'db.example.com', check_spec: /"port":6432/, managed_by: null },
      'the monitor the probes read is the one the file says, and stays hand-made'
    )
  })

  t.test(`apply makes every kind, --prune removes only what an apply made, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await handMade(db)
    const env = { PAGER_KEY: 'R0UTINGKEY', HOOK_SECRET: generateSecret() }
    const file = `
sites:
  - domain: new.example.com
    alert_policy: pager
    maintenance:
      - { from: "2027-02-01T00:00:00Z", to: "2027-02-01T01:00:00Z" }
monitors:
  - { slug: cache, name: Cache, target: cache.example.com, check: { type: tcp, port: 6379 } }
  - { slug: cert, name: Cert, target: www.example.com, check: { type: tls } }
  - { slug: resolver, name: Resolver, target: example.com, check: { type: dns, record: A, rcode: NXDOMAIN }, interval_s: 120 }
heartbeats:
  - { slug: hourly, name: Hourly job, schedule: { every_s: 3600 }, grace_s: 300, max_runtime_s: 600 }
  - { slug: nightly-cron, name: Nightly cron, schedule: { cron: "0 3 * * *", zone: Europe/Berlin }, grace_s: 600 }
webhooks:
  - { url: "https://new.example.com/hook", secret: "\${HOOK_SECRET}" }
channels:
  - { name: pagerduty, kind: pagerduty, config: { routing_key: "\${PAGER_KEY}" }, report_to: ops }
alert_policies:
  - { name: pager, channels: [pagerduty, ops], escalate: [{ after_min: 30, channels: [mail] }] }
`
    const created = await applyFile({ db, file: fileOf(file, env), prune: false, now, box })
    t.same(
      created.plan.items.map((i) => `${i.action} ${i.resource} ${i.key}`),
      [
        'create channel pagerduty',
        'create alert_policy pager',
        'create site new.example.com',
        'create monitor cache',
        'create monitor cert',
        'create monitor resolver',
        'create heartbeat hourly',
        'create heartbeat nightly-cron',
        'create webhook https://new.example.com/hook'
      ],
      'what the file leaves out and was made by hand is left alone'
    )
    for (const [table, n] of [
      ['sites', 4],
      ['heartbeats', 2],
      ['webhooks', 1],
      ['alert_channels', 1],
      ['alert_policies', 1]
    ] as const)
      t.equal(Number((await db(table).where({ managed_by: 'config' }).count({ n: '*' }).first())?.n), n, `${n} managed rows in ${table}`)
    t.match(await db('heartbeats').where({ slug: 'nightly-cron' }).first('cron', 'zone'), { cron: '0 3 * * *', zone: 'Europe/Berlin' })
    const stored = (await db('alert_channels').where({ name: 'pagerduty' }).first()) as { secret: string; config: string }
    t.notMatch(stored.config, 'R0UTINGKEY', 'a secret is not stored in the shown config')
    t.same(JSON.parse(box.open(stored.secret)), { routing_key: 'R0UTINGKEY' }, 'but sealed')
    t.same((await planFile({ db, file: fileOf(file, env), prune: false, box })).items, [], 'a second apply changes nothing')

    const pruned = await applyFile({ db, file: fileOf('sites: []', {}), prune: true, now, box })
    t.same(pruned.plan.items.map((i) => `${i.action} ${i.resource} ${i.key}`).sort(), [
      'remove alert_policy pager',
      'remove channel pagerduty',
      'remove heartbeat hourly',
      'remove heartbeat nightly-cron',
      'remove monitor cache',
      'remove monitor cert',
      'remove monitor resolver',
      'remove site new.example.com',
      'remove webhook https://new.example.com/hook'
    ])
    t.same(await db('heartbeats').pluck('slug'), ['nightly'], 'the hand-made heartbeat stays')
    t.same(
      await db('sites').whereIn('kind', ['tcp', 'tls', 'dns']).whereNull('removed_at').orderBy('domain').pluck('domain'),
      ['monitor:db', 'monitor:imaps', 'monitor:mx'],
      'the hand-made monitors stay'
    )
    t.equal(
      Number((await db('events').where({ type: 'site.removed' }).count({ n: '*' }).first())?.n),
      4,
      'each removal is announced, the monitors named'
    )
    t.same(await db('alert_channels').orderBy('name').pluck('name'), ['mail', 'ops'])
    t.same(await db('alert_policies').pluck('name'), ['on-call'])
    t.equal(Number((await db('webhooks').count({ n: '*' }).first())?.n), 1)
  })

  t.test(`names neither the file nor the database holds are refused before any write, on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const file = fileOf(
      'sites: [{domain: a.example.com}]\nchannels: [{name: x, kind: slack, config: {url: "${U}"}, report_to: nobody}]\nalert_policies: [{name: p, channels: [ghost]}]\n',
      { U: 'https://hooks.slack.example/x' }
    )
    const err = await applyFile({ db, file, prune: false, now, box }).catch((e: unknown) => e)
    t.type(err, ConfigRefusedError)
    t.match((err as Error).message, /channel x: report_to: no channel is named "nobody"/)
    t.match((err as Error).message, /alert policy p: channels: no channel is named "ghost"/)
    t.equal(Number((await db('sites').count({ n: '*' }).first())?.n), 0)
    t.equal(Number((await db('alert_channels').count({ n: '*' }).first())?.n), 0)
  })
}
