import t from 'tap'
import { randomBytes } from 'node:crypto'
import { openCheck } from '../../../lib/monitoring/check-secrets.js'
import { parseAssertion } from '../../../lib/cli/site-checks.js'
import { SecretBox } from '../../../lib/webhooks/secret-box.js'
import { runCli } from '../../helpers/cli.js'
import { migratedDb } from '../../helpers/db.js'

t.test('--assert reads SOURCE [PROPERTY] COMPARISON [TARGET]', async (t) => {
  t.same(parseAssertion('json_body $.status equals ok'), { source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' })
  t.same(parseAssertion('status_code less_than 400'), { source: 'status_code', comparison: 'less_than', target: '400' })
  t.same(parseAssertion('header content-type contains json'), {
    source: 'header',
    property: 'content-type',
    comparison: 'contains',
    target: 'json'
  })
  t.same(parseAssertion('text_body contains Sign  in now'), { source: 'text_body', comparison: 'contains', target: 'Sign in now' })
  t.same(parseAssertion('text_body not_empty'), { source: 'text_body', comparison: 'not_empty' })
  t.throws(() => parseAssertion('body equals ok'), /"body" is not a source/)
  t.throws(() => parseAssertion('status_code is 200'), /"is" is not a comparison/)
})

t.test('sites add and set carry the same check as the API, its secrets sealed', async (t) => {
  const { db, url } = await migratedDb('sqlite', t)
  const key = randomBytes(32)
  const env = { DATABASE_URL: url, WEBHOOK_KEY: key.toString('base64') }
  const cli = (...args: string[]) => runCli(args, { env })
  const added = await cli(
    'sites',
    'add',
    'api.example.com',
    '--method',
    'post',
    '--path',
    '/health?deep=1',
    '--header',
    'Authorization: Bearer s3cret-token',
    '--header',
    'Content-Type: application/json',
    '--body',
    '{}',
    '--assert',
    'json_body $.status equals ok',
    '--assert',
    'response_time less_than 800'
  )
  t.same([added.code, added.stdout], [0, 'api.example.com\n'])
  const stored = async (): Promise<string | null> => {
    const row: { check_spec: string | null } = await db('sites').where({ domain: 'api.example.com' }).first('check_spec')
    return row.check_spec
  }
  const text = await stored()
  t.notOk(text?.includes('s3cret-token'), 'the stored check holds no secret value')
  t.match(openCheck(text ?? '', new SecretBox({ key, keyFile: '/nonexistent/webhook.key' })), {
    type: 'http',
    method: 'POST',
    path: '/health?deep=1',
    headers: { authorization: 'Bearer s3cret-token', 'content-type': 'application/json' },
    secret_headers: ['authorization'],
    body: '{}',
    assertions: [
      { source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' },
      { source: 'response_time', comparison: 'less_than', target: 800 }
    ]
  })
  const list = await cli('sites', 'list')
  t.match(list.stdout, /POST \/health\?deep=1, 2 assertions/, 'the list shows the request')
  t.notOk(list.stdout.includes('s3cret-token'), 'never its secret')

  for (const [args, message] of [
    [['--header', 'Host: other.example.com'], /"check.headers": Host is set by the check itself/],
    [['--header', 'no colon'], /--header takes 'NAME: VALUE'/],
    [['--method', 'GET', '--body', 'x'], /a GET sends no body/],
    [['--assert', 'json_body $.x matches ('], /matches|regular expression/],
    [['--clear', 'check', '--path', '/x'], /--clear check goes alone/]
  ] as const) {
    const bad = await cli('sites', 'set', 'api.example.com', ...args)
    t.equal(bad.code, 2, `${args.join(' ')}: a usage error`)
    t.match(bad.stderr, message)
  }
  t.equal(await stored(), text, 'refused changes changed nothing')
  t.equal((await cli('sites', 'set', 'api.example.com', '--clear', 'check')).code, 0)
  t.equal(await stored(), null, '--clear check: the plain web check again')
})
