import t from 'tap'
import Joi from 'joi'
import { openDb } from '../../lib/store/db.js'
import { migratedDb } from '../helpers/db.js'
import { openApiProblems } from '../helpers/openapi.js'
import { bearer, testServer } from '../helpers/server.js'

const STACK_LINE = /\n\s+at |at .+\.(ts|js):\d+/

t.test('every error is JSON with the right status and no internals', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const { server, issueKey, logs } = await testServer({ db, env: { DATABASE_URL: url } })
  server.route([
    {
      method: 'POST',
      path: '/api/v1/echo',
      options: {
        payload: { allow: 'application/json' },
        validate: { payload: Joi.object({ domain: Joi.string().required() }).unknown(false) }
      },
      handler: (request) => request.payload as object
    },
    {
      method: 'GET',
      path: '/api/v1/crash',
      handler: () => {
        throw new Error("select * from api_keys where key_hash = 'deadbeef' - exploded")
      }
    },
    { method: 'GET', path: '/api/v1/sql', handler: async () => db.raw('select secret_column from no_such_table') }
  ])
  const key = await issueKey({ limit: 1000 })
  const auth = bearer(key)
  const json = { ...auth, 'content-type': 'application/json' }

  const cases: Array<[string, Exclude<Parameters<typeof server.inject>[0], string>, number, RegExp]> = [
    [
      'a validation failure',
      { method: 'POST', url: '/api/v1/echo', headers: json, payload: '{"domain": 5}' },
      400,
      /"domain" must be a string/
    ],
    [
      'an extra field',
      { method: 'POST', url: '/api/v1/echo', headers: json, payload: '{"domain": "a.com", "x": 1}' },
      400,
      /"x" is not allowed/
    ],
    ['malformed JSON', { method: 'POST', url: '/api/v1/echo', headers: json, payload: '{"domain": ' }, 400, /JSON/],
    ['a missing key', { method: 'GET', url: '/api/v1/rate_limit' }, 401, /missing API key/],
    ['an unknown route', { method: 'GET', url: '/api/v1/nothing-here', headers: auth }, 404, /not found/],
    ['an unknown route outside the API', { method: 'GET', url: '/wp-login.php' }, 404, /not found/],
    ['a wrong method', { method: 'DELETE', url: '/api/v1/rate_limit', headers: auth }, 405, /not allowed/],
    [
      'a body over 4 KiB',
      { method: 'POST', url: '/api/v1/echo', headers: json, payload: JSON.stringify({ domain: 'a'.repeat(5000) }) },
      413,
      /greater than maximum/
    ],
    [
      'a wrong content type',
      { method: 'POST', url: '/api/v1/echo', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'domain=a.com' },
      415,
      /Unsupported Media Type/
    ],
    ['a handler crash', { method: 'GET', url: '/api/v1/crash', headers: auth }, 500, /^internal server error$/],
    ['a failing query', { method: 'GET', url: '/api/v1/sql', headers: auth }, 500, /^internal server error$/]
  ]
  for (const [title, request, status, message] of cases) {
    t.test(`${title} answers ${status}`, async (t) => {
      const res = await server.inject(request)
      t.equal(res.statusCode, status)
      t.match(res.headers['content-type'], /^application\/json/)
      const body = JSON.parse(res.payload)
      t.same(Object.keys(body), ['error'], 'the body is exactly {"error": ...}')
      t.match(body.error, message)
      t.notMatch(res.payload, STACK_LINE, 'no stack trace')
      t.notMatch(res.payload, /select|secret_column|deadbeef/i, 'no SQL')
      // The echo, crash and sql routes exist only in this test; the rest are documented.
      if (typeof request.url === 'string' && !/\/api\/v1\/(echo|crash|sql)$/.test(request.url))
        t.same(openApiProblems(res), [], 'matches the OpenAPI document')
    })
  }

  t.test('405 names the allowed methods', async (t) => {
    const res = await server.inject({ method: 'PUT', url: '/api/v1/rate_limit', headers: auth })
    t.equal(res.headers.allow, 'GET, HEAD')
  })

  t.test('server faults are logged without stack or SQL', async (t) => {
    const faults = logs.lines.filter((l) => l.includes('"level":50'))
    t.ok(faults.length >= 2, 'both 500s were logged as errors')
    const text = logs.lines.join('\n')
    t.notMatch(text, STACK_LINE, 'no stack trace in any log line')
    t.notMatch(text, /select |deadbeef|secret_column/i, 'no SQL in any log line')
    t.notOk(text.includes(key), 'no key in any log line')
  })
})

t.test('an unreachable database gives 503 JSON while other routes keep answering', async (t) => {
  // Nothing listens on port 1 of loopback: connections are refused at once.
  const db = openDb('mysql://root@127.0.0.1:1/nothing')
  t.teardown(() => db.destroy())
  const { server, logs } = await testServer({ db, env: { DATABASE_URL: 'mysql://root@127.0.0.1:1/nothing' } })
  const health = await server.inject({ url: '/healthz' })
  t.equal(health.statusCode, 503)
  t.match(JSON.parse(health.payload), { error: 'database unavailable', database: 'unreachable' })
  const keyed = await server.inject({ url: '/api/v1/rate_limit', headers: bearer('ssk_' + 'A'.repeat(43)) })
  t.equal(keyed.statusCode, 503, 'a key cannot be checked, so the answer is 503 rather than 401')
  t.same(JSON.parse(keyed.payload), { error: 'database unavailable' })
  t.match(keyed.headers['retry-after'], /^\d+$/)
  t.same(openApiProblems(keyed), [], 'the 503 matches the OpenAPI document')
  t.same(openApiProblems(health), [], 'and so does the degraded health answer')
  const other = await server.inject({ url: '/nope' })
  t.equal(other.statusCode, 404, 'the server still answers what needs no database')
  t.notMatch(logs.lines.join('\n'), STACK_LINE)
})
