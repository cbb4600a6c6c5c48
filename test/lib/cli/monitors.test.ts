import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../../../lib/store/db.js'
import { migrateLatest } from '../../../lib/store/migrate.js'
import { lines, runCli } from '../../helpers/cli.js'

t.test('monitors from the operator tool: sites add --kind tcp --port 5432 HOST, list, remove', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-cli-monitors-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, WEBHOOK_KEY: Buffer.alloc(32, 7).toString('base64') }
  const db = openDb(env.DATABASE_URL)
  t.teardown(() => db.destroy())
  await migrateLatest(db)

  const added = await runCli(['sites', 'add', '--kind', 'tcp', '--port', '5432', 'db.example.com'], { env })
  t.same([added.code, added.stdout], [0, 'tcp-db-example-com\n'], "the issue's form adds a monitor and prints its slug")
  t.match(await db('sites').where({ domain: 'monitor:tcp-db-example-com' }).first('kind', 'target', 'check_spec'), {
    kind: 'tcp',
    target: 'db.example.com',
    check_spec: /"port":5432/
  })
  const dns = await runCli(
    [
      'monitors',
      'add',
      '--kind=dns',
      '--record',
      'mx',
      '--expect-answer',
      '10 mx.example.com',
      '--slug',
      'mail',
      '--interval',
      '300',
      'example.com'
    ],
    { env }
  )
  t.same([dns.code, dns.stdout], [0, 'mail\n'])
  t.equal((await runCli(['sites', 'add', '--kind', 'tcp', '--port', '5432', 'db.example.com'], { env })).code, 1, 'a slug in use')
  const noPort = await runCli(['sites', 'add', '--kind', 'tcp', 'db.example.com'], { env })
  t.equal(noPort.code, 2)
  t.match(noPort.stderr, /"check.port" is required/, "judged by the API's rules")
  t.equal((await runCli(['sites', 'add', '--kind', 'smtp', 'db.example.com'], { env })).code, 2)
  t.equal(
    (await runCli(['sites', 'add', '--kind', 'http', 'shop.example.com'], { env })).stdout,
    'shop.example.com\n',
    '--kind http: a site'
  )

  const listed = lines((await runCli(['monitors', 'list'], { env })).stdout)
  t.match(listed[1], /^mail\s+dns\s+example\.com\s+dns example\.com\s+pending/)
  t.match(listed[2], /^tcp-db-example-com\s+tcp\s+db\.example\.com/)
  t.same(
    lines((await runCli(['sites', 'list'], { env })).stdout)
      .slice(1)
      .map((l) => l.split(/\s+/)[0]),
    ['shop.example.com']
  )
  t.equal((await runCli(['monitors', 'remove', 'mail'], { env })).code, 0)
  t.equal((await runCli(['monitors', 'remove', 'mail'], { env })).code, 1, 'no such monitor')
})
