import t from 'tap'
import { randomBytes } from 'node:crypto'
import { openCheck } from '../../../lib/monitoring/check-secrets.js'
import { SecretBox } from '../../../lib/webhooks/secret-box.js'
import { engines } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer } from '../../helpers/server.js'
import { trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-29T12:00:00.000Z')
const TOKEN = 'Bearer tok_9f1c0ffee5ecret'
const COOKIE = 'session=c00k1e5ecret'
const HEALTH = {
  type: 'http',
  method: 'POST',
  path: '/api/health?deep=1',
  headers: { Authorization: TOKEN, Cookie: COOKIE, 'X-Api-Key': 'k3y5ecret', Accept: 'application/json' },
  secret_headers: ['x-api-key'],
  body: '{"probe":true}',
  assertions: [{ source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' }]
}
const SECRETS = [TOKEN, 'tok_9f1c0ffee5ecret', COOKIE, 'c00k1e5ecret', 'k3y5ecret']

for (const engine of engines()) {
  t.test(`a tracked site's own request and assertions: stored sealed, shown masked, sent whole, on ${engine}`, async (t) => {
    const webhookKey = randomBytes(32)
    const api = await trackedServer(t, {
      engine,
      sites: [{ domain: 'plain.example.com', name: 'Plain' }],
      start: T0,
      env: { WEBHOOK_KEY: webhookKey.toString('base64') }
    })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const send = async (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: unknown) => {
      const res = await api.server.inject({
        method,
        url,
        headers: bearer(key),
        ...(payload === undefined ? {} : { payload: payload as object })
      })
      matchesOpenApi(t, res, `${method} ${url}`)
      return { status: res.statusCode, body: JSON.parse(res.payload) as Record<string, unknown>, text: res.payload }
    }

    const added = await send('POST', '/api/v1/sites', { domain: 'api.example.com', check: HEALTH })
    t.equal(added.status, 201)
    t.same(
      (added.body.settings as { check: unknown }).check,
      {
        type: 'http',
        method: 'POST',
        path: '/api/health?deep=1',
        headers: { authorization: '********', cookie: '********', 'x-api-key': '********', accept: 'application/json' },
        secret_headers: ['authorization', 'cookie', 'x-api-key'],
        body: '{"probe":true}',
        assertions: [{ source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' }]
      },
      'the status record shows the check in normal form, every secret value masked'
    )

    const row: { check_spec: string } = await api.db('sites').where({ domain: 'api.example.com' }).first('check_spec')
    for (const secret of SECRETS) t.notOk(row.check_spec.includes(secret), 'the stored row never holds a secret value')
    const box = new SecretBox({ key: webhookKey, keyFile: '/nonexistent/webhook.key' })
    const opened = openCheck(row.check_spec, box)
    t.match(opened, { headers: { authorization: TOKEN, cookie: COOKIE, 'x-api-key': 'k3y5ecret' } }, 'WEBHOOK_KEY opens it')
    t.throws(
      () => openCheck(row.check_spec, new SecretBox({ key: randomBytes(32), keyFile: '/nonexistent/webhook.key' })),
      { code: 'WEBHOOK_KEY_MISMATCH' },
      'another key cannot'
    )

    // Everything an API user reads back: the status record, the list, the site again after a change.
    const status = await send('GET', '/api/v1/status/api.example.com')
    const listed = await send('GET', '/api/v1/sites')
    const renamed = await send('PATCH', '/api/v1/sites/api.example.com', { name: 'API' })
    t.same(
      (renamed.body.settings as { check: unknown }).check,
      (added.body.settings as { check: unknown }).check,
      'a change of name keeps the check'
    )
    for (const answer of [added, status, listed, renamed])
      for (const secret of SECRETS) t.notOk(answer.text.includes(secret), 'no answer holds a secret value')
    for (const secret of SECRETS) t.notOk(api.logs.lines.join('\n').includes(secret), 'nor does any log line')

    // A change replaces the check whole; null goes back to the plain GET.
    const head = await send('PATCH', '/api/v1/sites/api.example.com', { check: { type: 'http', method: 'HEAD', path: '/up' } })
    t.equal(head.status, 200)
    t.match((head.body.settings as { check: unknown }).check, { method: 'HEAD', path: '/up', headers: {}, secret_headers: [] })
    const cleared = await send('PATCH', '/api/v1/sites/api.example.com', { check: null })
    t.same(cleared.body.settings, {}, 'check: null is the plain web check again')
    const after: { check_spec: null } = await api.db('sites').where({ domain: 'api.example.com' }).first('check_spec')
    t.equal(after.check_spec, null)

    for (const [what, body, message] of [
      [
        'a tcp check on a site',
        { check: { type: 'tcp', port: 5432 } },
        /a tracked site's check is an http request; a tcp check runs on demand/
      ],
      [
        'a Host header',
        { check: { type: 'http', headers: { Host: 'other.example.com' } } },
        /"check.headers": Host is set by the check itself/
      ],
      [
        'the mask sent back as a value',
        { check: { type: 'http', headers: { Authorization: '********' } } },
        /stands for a stored secret; send the secret itself/
      ],
      [
        'a body over 16 KiB',
        { check: { type: 'http', method: 'POST', body: 'x'.repeat(16 * 1024 + 1) } },
        /"check.body": at most 16384 bytes/
      ],
      ['an unknown key', { check: { type: 'http', verb: 'GET' } }, /"check.verb" is not allowed/]
    ] as const) {
      const res = await send('PATCH', '/api/v1/sites/api.example.com', body)
      t.equal(res.status, 400, what)
      t.match(res.body.error, message, what)
    }
    const big = await send('PATCH', '/api/v1/sites/api.example.com', { check: { ...HEALTH, body: 'x'.repeat(70_000) } })
    t.equal(big.status, 413, 'a body past the route limit is 413, as JSON')
    t.same((await send('GET', '/api/v1/status/api.example.com')).body.settings, {}, 'refused changes changed nothing')
  })
}

t.test('the scheduled check sends the site’s own request, its secrets opened', async (t) => {
  const webhookKey = randomBytes(32)
  const api = await trackedServer(t, { sites: [], start: T0, env: { WEBHOOK_KEY: webhookKey.toString('base64') } })
  const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
  const res = await api.server.inject({
    method: 'POST',
    url: '/api/v1/sites',
    headers: bearer(key),
    payload: { domain: 'api.example.com', check: HEALTH }
  })
  t.equal(res.statusCode, 201)
  // The states of a running service open the stored check with the service's box (lib/main.ts).
  const box = new SecretBox({ key: webhookKey, keyFile: '/nonexistent/webhook.key' })
  const { SiteStates } = await import('../../../lib/monitoring/state/site-state.js')
  const states = new SiteStates({
    intervalMs: 60_000,
    publicUrl: 'https://status.example.net',
    openCheck: (stored) => openCheck(stored, box)
  })
  await states.refresh(api.db, new Date(T0))
  const sent = states.siteCheck('api.example.com')
  t.match(sent, { method: 'POST', path: '/api/health?deep=1', headers: { authorization: TOKEN, 'x-api-key': 'k3y5ecret' } })
  t.equal(states.siteCheck('api.example.com'), sent, 'opened once, kept until the stored check changes')
  t.equal(states.siteCheck('other.example.com'), null, 'a domain not tracked has none')
})
