import t from 'tap'
import { runCli } from '../../helpers/cli.js'
import { engines, migratedDb } from '../../helpers/db.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { bearer } from '../../helpers/server.js'
import { trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-20T12:00:00.000Z')

for (const engine of engines()) {
  t.test(`sites carry their own interval and expectations, set by POST and PATCH, on ${engine}`, async (t) => {
    const api = await trackedServer(t, { engine, sites: [{ domain: 'plain.example.com', name: 'Plain' }], start: T0 })
    const key = await api.issueKey({ limit: 10_000, scopes: 'read,manage' })
    const send = async (method: 'POST' | 'PATCH', url: string, payload: unknown) => {
      const res = await api.server.inject({ method, url, headers: bearer(key), payload: payload as object })
      matchesOpenApi(t, res, `${method} ${url} ${JSON.stringify(payload)}`)
      return { status: res.statusCode, body: JSON.parse(res.payload) }
    }
    const patch = (domain: string, payload: unknown) => send('PATCH', `/api/v1/sites/${domain}`, payload)

    const plain = await api.server.inject({ url: '/api/v1/status/plain.example.com', headers: bearer(key) })
    t.match(JSON.parse(plain.payload), { settings: {}, slow: false }, 'a site that sets nothing shows an empty settings object')

    const added = await send('POST', '/api/v1/sites', {
      domain: 'shop.example.com',
      interval_s: 60,
      expect: { status: [401, '200-299', 204], body_contains: 'Sign in', max_response_ms: 2000 }
    })
    t.equal(added.status, 201)
    t.same(
      added.body.settings,
      { interval_s: 60, expect: { status: ['200-299', 401], body_contains: 'Sign in', max_response_ms: 2000 } },
      'stored in normal form and shown in the status record'
    )
    t.same(api.states.expectations('shop.example.com'), {
      status: ['200-299', 401],
      body_contains: 'Sign in',
      max_response_ms: 2000
    })

    let res = await patch('shop.example.com', { expect: { body_contains: null } })
    t.equal(res.status, 200)
    t.same(
      res.body.settings,
      { interval_s: 60, expect: { status: ['200-299', 401], max_response_ms: 2000 } },
      'null clears one key, the others kept'
    )
    res = await patch('SHOP.example.com', { name: 'Shop', interval_s: null })
    t.same([res.body.name, res.body.settings], ['Shop', { expect: { status: ['200-299', 401], max_response_ms: 2000 } }])
    res = await patch('shop.example.com', { expect: null })
    t.same(res.body.settings, {}, 'expect: null clears every expectation')
    t.equal(api.states.expectations('shop.example.com'), null, 'and the checks are judged by the default rule again')
    const listed = await api.server.inject({ url: '/api/v1/sites', headers: bearer(key) })
    t.same(
      (JSON.parse(listed.payload).sites as Array<{ domain: string; settings: unknown }>).map((s) => [s.domain, s.settings]),
      [
        ['plain.example.com', {}],
        ['shop.example.com', {}]
      ],
      'the sites list shows each one’s settings'
    )

    t.equal((await patch('never.example.com', { interval_s: 60 })).status, 404, 'a site not tracked is 404')
    t.equal((await patch('localhost', { interval_s: 60 })).status, 400, 'a domain that cannot be one is 400')
    for (const [what, body, message] of [
      ['nothing to change', {}, /at least one of "name", "interval_s", "expect" and "check"/],
      ['an interval under 30 s', { interval_s: 29 }, /"interval_s" must be a whole number of seconds from 30 to 3600/],
      ['an interval over an hour', { interval_s: 3601 }, /"interval_s" must be/],
      ['an interval as text', { interval_s: '60' }, /"interval_s" must be/],
      ['a fractional interval', { interval_s: 60.5 }, /"interval_s" must be/],
      ['a status out of range', { expect: { status: [99] } }, /"expect.status" must list status codes/],
      ['an empty keyword', { expect: { body_contains: '' } }, /"expect.body_contains" must not be empty/],
      ['a keyword over 256 bytes', { expect: { body_contains: 'é'.repeat(129) } }, /at most 256 bytes/],
      ['a zero threshold', { expect: { max_response_ms: 0 } }, /"expect.max_response_ms" must be a whole number/],
      ['an unknown expectation', { expect: { regex: 'a.*' } }, /"expect" may hold only/],
      ['an unknown field', { timeout_s: 5 }, /"timeout_s" is not allowed/],
      ['an empty name', { name: '' }, /name must be 1 to 200 printable characters/]
    ] as const) {
      const bad = await patch('shop.example.com', body)
      t.equal(bad.status, 400, `${what}: 400`)
      t.match(bad.body.error, message, `${what}: says why`)
      const post = await send('POST', '/api/v1/sites', { domain: 'new.example.com', ...body })
      t.equal(post.status, what === 'nothing to change' ? 201 : 400, `${what}: POST judges it alike`)
      if (post.status === 201) await api.server.inject({ method: 'DELETE', url: '/api/v1/sites/new.example.com', headers: bearer(key) })
    }
    t.same(
      await api.db('sites').where({ domain: 'shop.example.com' }).first('interval_s', 'body_contains'),
      { interval_s: null, body_contains: null },
      'no refused change stored anything'
    )
  })

  t.test(`the operator tool sets the same settings with the same rules, on ${engine}`, async (t) => {
    const { db, url } = await migratedDb(engine, t)
    const cli = (...args: string[]) => runCli(args, { env: { DATABASE_URL: url } })
    t.equal(
      (await cli('sites', 'add', 'shop.example.com', '--interval', '120', '--expect-status', '200-299, 401', '--body-contains', 'Sign in'))
        .code,
      0
    )
    const row = () =>
      db('sites').where({ domain: 'shop.example.com' }).first('interval_s', 'expect_status', 'body_contains', 'max_response_ms')
    t.same(await row(), { interval_s: 120, expect_status: '["200-299",401]', body_contains: 'Sign in', max_response_ms: null })
    const set = await cli(
      'sites',
      'set',
      'Shop.Example.com',
      '--max-response-ms',
      '2000',
      '--clear',
      'body-contains',
      '--clear',
      'interval'
    )
    t.same([set.code, set.stdout], [0, 'shop.example.com\n'])
    t.same(await row(), { interval_s: null, expect_status: '["200-299",401]', body_contains: null, max_response_ms: 2000 })
    const list = await cli('sites', 'list')
    t.match(list.stdout, /SETTINGS\n.*status 200-299,401; slow over 2000ms/, 'the list shows what is set')
    for (const [args, message] of [
      [['--interval', '10'], /"interval_s" must be a whole number of seconds from 30 to 3600/],
      [['--interval', 'soon'], /"interval_s" must be/],
      [['--expect-status', '99'], /"expect.status" must list status codes/],
      [['--max-response-ms', '1.5'], /"expect.max_response_ms" must be a whole number/],
      [['--body-contains', ''], /"expect.body_contains" must not be empty/],
      [['--clear', 'name'], /--clear takes one of interval, expect-status, body-contains, max-response-ms, expect/],
      [[], /sites set needs --name or a setting to change/]
    ] as const) {
      const bad = await cli('sites', 'set', 'shop.example.com', ...args)
      t.equal(bad.code, 2, `${args.join(' ')}: a usage error`)
      t.match(bad.stderr, message)
    }
    t.match(await cli('sites', 'set', 'gone.example.com', '--interval', '60'), { code: 1, stderr: /gone.example.com is not tracked/ })
    t.same(
      await row(),
      { interval_s: null, expect_status: '["200-299",401]', body_contains: null, max_response_ms: 2000 },
      'nothing refused was stored'
    )
    t.equal((await cli('sites', 'set', 'shop.example.com', '--clear', 'expect')).code, 0)
    t.same(await row(), { interval_s: null, expect_status: null, body_contains: null, max_response_ms: null })
  })
}
