import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../../../lib/store/db.js'
import { migrateLatest } from '../../../lib/store/migrate.js'
import { lines, runCli } from '../../helpers/cli.js'

t.test('heartbeats add, list, set, pause and remove from the operator tool', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-cli-heartbeats-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, PUBLIC_URL: 'https://status.example.net' }
  const db = openDb(env.DATABASE_URL)
  t.teardown(() => db.destroy())
  await migrateLatest(db)

  const added = await runCli(['heartbeats', 'add', 'Nightly backup', '--every', '86400', '--grace', '3600'], { env })
  t.equal(added.code, 0)
  t.match(added.stdout, /^https:\/\/status\.example\.net\/ping\/[A-Za-z0-9_-]{32}\n$/, 'prints the ping URL')
  t.equal((await runCli(['heartbeats', 'add', 'Nightly backup', '--every', '86400', '--grace', '3600'], { env })).code, 1, 'a slug in use')
  const tooOften = await runCli(['heartbeats', 'add', 'x', '--every', '10', '--grace', '5'], { env })
  t.equal(tooOften.code, 2)
  t.match(tooOften.stderr, /every_s/, 'judged by the API rules')

  const listed = await runCli(['heartbeats', 'list'], { env })
  t.match(lines(listed.stdout)[1], /^nightly-backup\s+Nightly backup\s+new\s+86400s\s+3600s\s+never/)
  t.same(await runCli(['heartbeats', 'set', 'nightly-backup', '--grace', '600', '--max-runtime', '1800'], { env }), {
    code: 0,
    stdout: 'heartbeat nightly-backup: new\n',
    stderr: ''
  })
  t.match(await db('heartbeats').where({ slug: 'nightly-backup' }).first('grace_s', 'max_runtime_s'), { grace_s: 600, max_runtime_s: 1800 })
  t.equal((await runCli(['heartbeats', 'pause', 'nightly-backup'], { env })).stdout, 'heartbeat nightly-backup: paused\n')
  t.equal((await runCli(['heartbeats', 'pause', 'nightly-backup', '--resume'], { env })).stdout, 'heartbeat nightly-backup: new\n')
  t.equal((await runCli(['heartbeats', 'remove', 'nightly-backup'], { env })).code, 0)
  t.equal((await runCli(['heartbeats', 'remove', 'nightly-backup'], { env })).code, 1, 'no such heartbeat')
})

t.test('heartbeats add and set take a cron expression in a zone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-cli-heartbeats-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, PUBLIC_URL: 'https://status.example.net' }
  const db = openDb(env.DATABASE_URL)
  t.teardown(() => db.destroy())
  await migrateLatest(db)

  const added = await runCli(['heartbeats', 'add', 'Billing run', '--cron', '0 3 * * *', '--zone', 'Europe/Berlin', '--grace', '1800'], {
    env
  })
  t.equal(added.code, 0, added.stderr)
  t.match(await db('heartbeats').where({ slug: 'billing-run' }).first('cron', 'zone'), { cron: '0 3 * * *', zone: 'Europe/Berlin' })
  t.match(
    lines((await runCli(['heartbeats', 'list'], { env })).stdout)[1],
    /^billing-run\s+Billing run\s+new\s+0 3 \* \* \* \(Europe\/Berlin\)\s+1800s/
  )
  t.equal((await runCli(['heartbeats', 'set', 'billing-run', '--cron', '15 4 * * 1-5', '--zone', 'UTC'], { env })).code, 0)
  t.match(await db('heartbeats').where({ slug: 'billing-run' }).first('cron', 'zone'), { cron: '15 4 * * 1-5', zone: 'UTC' })

  const refused = [
    [['--cron', '0 3 * * *'], /--cron and --zone go together/],
    [['--every', '60', '--cron', '0 3 * * *', '--zone', 'UTC'], /not both/],
    [['--cron', '0 3 * * *', '--zone', 'Nowhere/City'], /schedule\.zone/],
    [['--cron', '* * * * * *', '--zone', 'UTC'], /schedule\.cron.*30 s/]
  ] as const
  for (const [flags, why] of refused) {
    const res = await runCli(['heartbeats', 'set', 'billing-run', ...flags], { env })
    t.equal(res.code, 2, flags.join(' '))
    t.match(res.stderr, why)
  }
  t.equal((await runCli(['heartbeats', 'set', 'billing-run', '--every', '3600'], { env })).code, 0)
  t.match(await db('heartbeats').where({ slug: 'billing-run' }).first('every_s', 'cron'), { every_s: 3600, cron: null })
})
