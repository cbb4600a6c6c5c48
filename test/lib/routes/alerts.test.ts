import t from 'tap'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { openApiProblems } from '../../helpers/openapi.js'
import { bearer, testServer } from '../../helpers/server.js'
import { receiver } from '../../helpers/webhooks.js'
import { storePage } from '../../helpers/status-pages.js'

type Json = Record<string, any>
const SLACK_TOKEN = 'T000/B000/XXXXXXXXXXXXsecretXXXX'

for (const engine of engines()) {
  t.test(`the alerting API on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    const { server, issueKey, logs } = await testServer({ db, env: { ALLOW_PRIVATE_TARGETS: '1' } })
    const key = await issueKey({ scopes: 'read,manage' })
    const call = async (method: string, url: string, payload?: unknown) => {
      const res = await server.inject({
        method,
        url,
        headers: bearer(key),
        ...(payload === undefined ? {} : { payload: payload as object })
      })
      t.same(openApiProblems(res), [], `${method} ${url} ${res.statusCode} as documented`)
      return { status: res.statusCode, body: (res.payload === '' ? null : JSON.parse(res.payload)) as Json }
    }
    const hook = await receiver(t)
    const slackUrl = `${hook.url}/services/${SLACK_TOKEN}`

    const slack = await call('POST', '/api/v1/channels', { name: 'team chat', kind: 'slack', config: { url: slackUrl } })
    t.equal(slack.status, 201)
    t.match(slack.body, {
      name: 'team chat',
      kind: 'slack',
      config: {},
      secret_fields: ['url'],
      target: hook.url.replace('/hook', ''),
      failing: false
    })
    t.notOk(JSON.stringify(slack.body).includes(SLACK_TOKEN), 'the secret URL is not shown back')
    const hookChannel = await call('POST', '/api/v1/channels', { name: 'signed', kind: 'webhook', config: { url: hook.url } })
    t.match(
      hookChannel.body,
      { kind: 'webhook', config: { url: hook.url }, secret: /^whsec_/ },
      'a webhook channel shows its signing secret once'
    )
    t.notOk('secret' in (await call('GET', `/api/v1/channels/${hookChannel.body.id}`)).body, 'and never again')
    const pd = await call('POST', '/api/v1/channels', {
      name: 'pager',
      kind: 'pagerduty',
      config: { routing_key: 'R0UTINGKEY0123456789abcdefabcdef', url: hook.url },
      report_to: slack.body.id
    })
    t.match(pd.body, { config: { url: hook.url, severity: 'critical' }, secret_fields: ['routing_key'], report_to: slack.body.id })

    for (const [body, error] of [
      [{ name: 'x', kind: 'sms', config: {} }, /"kind" must be one of email, slack/],
      [{ name: 'x', kind: 'slack', config: {} }, /"config.url" is required/],
      [{ name: 'x', kind: 'slack', config: { url: 'ftp://x' } }, /"config.url" must be an http/],
      [
        { name: 'x', kind: 'email', config: { host: 'mail.example.com', from: 'a@example.com', to: [] } },
        /"config.to" must contain at least 1/
      ],
      [{ name: 'x', kind: 'alertmanager', config: { urls: ['http://127.0.0.1:9093'], extra: 1 } }, /"config.extra" is not allowed/],
      [{ name: 'x', kind: 'slack', config: { url: 'http://user:pw@127.0.0.1/' } }, /must not include a username or password/],
      [{ name: 'x', kind: 'slack', config: { url: slackUrl }, report_to: 999 }, /"report_to" must name another existing channel/]
    ] as const) {
      const res = await call('POST', '/api/v1/channels', body)
      t.equal(res.status, 400, JSON.stringify(body))
      t.match(res.body.error, error)
    }

    const changed = await call('PATCH', `/api/v1/channels/${pd.body.id}`, { config: { severity: 'warning' } })
    t.match(
      changed.body,
      { config: { severity: 'warning' }, secret_fields: ['routing_key'] },
      'a config change keeps the secrets not given'
    )

    const tested = await call('POST', `/api/v1/channels/${slack.body.id}/test`)
    t.match(tested.body, { delivered: true, http_code: 200, answer: 'thanks', error: null })
    t.equal(hook.got.at(-1)?.headers['content-type'], 'application/json')
    const deliveries = await call('GET', `/api/v1/channels/${slack.body.id}/deliveries`)
    t.match(deliveries.body, {
      deliveries: [{ kind: 'test', status: 'delivered', attempts: 1, answer: 'thanks', last_http_code: 200 }],
      next_cursor: null
    })

    const policy = await call('POST', '/api/v1/alert-policies', {
      name: 'web',
      channels: [slack.body.id],
      after_min: 5,
      remind_every_min: 10,
      escalate: [{ after_min: 15, channels: [pd.body.id] }],
      default: true
    })
    t.equal(policy.status, 201)
    t.match(policy.body, {
      name: 'web',
      after_min: 5,
      remind_every_min: 10,
      on_resolved: true,
      group_window_s: 60,
      default: true,
      events: ['outage.opened', 'outage.closed', 'site.slow', 'certificate.expiring', 'heartbeat.late']
    })
    t.equal((await call('POST', '/api/v1/alert-policies', { name: 'web', channels: [slack.body.id] })).status, 409, 'names are unique')
    t.match((await call('POST', '/api/v1/alert-policies', { name: 'bad', channels: [424242] })).body, {
      error: 'channel 424242 does not exist'
    })
    t.match((await call('POST', '/api/v1/alert-policies', { name: 'bad', channels: [] })).body, {
      error: /"channels" must contain at least 1/
    })
    t.match((await call('POST', '/api/v1/alert-policies', { name: 'bad', channels: [1], events: ['site.added'] })).body, {
      error: /"events" may list only/
    })
    const second = await call('POST', '/api/v1/alert-policies', {
      name: 'quiet',
      channels: [slack.body.id],
      default: true,
      remind_every_min: null
    })
    const listed = (await call('GET', '/api/v1/alert-policies')).body.policies as Json[]
    t.same(
      listed.map((p) => [p.name, p.default]),
      [
        ['web', false],
        ['quiet', true]
      ],
      'one default at a time'
    )
    t.match((await call('PATCH', `/api/v1/alert-policies/${policy.body.id}`, { remind_every_min: null })).body, {
      remind_every_min: null,
      after_min: 5
    })

    await addSites({
      db,
      entries: [
        { domain: 'app.example.com', name: null },
        { domain: 'db.example.com', name: null }
      ],
      now: new Date()
    })
    const set = await call('PUT', '/api/v1/sites/app.example.com/alerting', { alert_policy: policy.body.id, depends_on: 'db.example.com' })
    t.same(set.body, { domain: 'app.example.com', alert_policy: policy.body.id, page_policies: [], depends_on: 'db.example.com' })
    t.match((await call('PUT', '/api/v1/sites/db.example.com/alerting', { depends_on: 'app.example.com' })).body, { error: /loop/ })
    t.equal((await call('PUT', '/api/v1/sites/nope.example.com/alerting', { alert_policy: null })).status, 404)
    t.match((await call('PUT', '/api/v1/sites/app.example.com/alerting', { alert_policy: 999 })).body, {
      error: 'alert policy 999 does not exist'
    })
    await storePage(db, { slug: 'shop', title: 'Shop', description: null, logo_url: null }, [{ domain: 'db.example.com' }], new Date())
    t.same((await call('PUT', '/api/v1/pages/shop/alerting', { alert_policy: second.body.id })).body, {
      slug: 'shop',
      alert_policy: second.body.id
    })
    t.same((await call('GET', '/api/v1/sites/db.example.com/alerting')).body, {
      domain: 'db.example.com',
      alert_policy: null,
      page_policies: [second.body.id],
      depends_on: null
    })
    t.match((await call('GET', `/api/v1/alert-policies/${second.body.id}`)).body, { attached: { sites: 0, pages: 1 } })

    t.equal((await call('DELETE', `/api/v1/channels/${pd.body.id}`)).status, 204)
    t.same(
      (await call('GET', `/api/v1/alert-policies/${policy.body.id}`)).body.escalate,
      [],
      'a removed channel leaves the policies that named it'
    )
    t.equal((await call('DELETE', `/api/v1/alert-policies/${policy.body.id}`)).status, 204)
    t.match(
      (await call('GET', '/api/v1/sites/app.example.com/alerting')).body,
      { alert_policy: null, depends_on: 'db.example.com' },
      'the site falls back to the default'
    )

    const readOnly = await issueKey({ scopes: 'read' })
    t.equal((await server.inject({ url: '/api/v1/channels', headers: bearer(readOnly) })).statusCode, 403, 'channels need manage')
    t.notOk(
      logs.lines.some((l) => l.includes(SLACK_TOKEN) || l.includes('R0UTINGKEY')),
      'no secret in any log line'
    )
  })
}

t.test('every receiver a channel names must pass the address policy of checks and webhooks', async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db })
  const key = await issueKey({ scopes: 'manage' })
  for (const [kind, config] of [
    ['slack', { url: 'http://127.0.0.1:9/hook' }],
    ['alertmanager', { urls: ['http://10.0.0.5:9093'] }],
    ['ntfy', { url: 'http://[::1]:8080', topic: 'ops' }],
    ['email', { host: '127.0.0.1', from: 'a@example.com', to: ['b@example.com'] }]
  ] as const) {
    const res = await server.inject({
      method: 'POST',
      url: '/api/v1/channels',
      headers: bearer(key),
      payload: { name: kind, kind, config }
    })
    t.equal(res.statusCode, 400, kind)
    t.match(JSON.parse(res.payload), { error: /resolves to a non-public address/ }, `${kind}: refused`)
  }
  t.same(await db('alert_channels').select('id'), [], 'nothing stored')
})
