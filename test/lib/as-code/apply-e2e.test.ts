/**
 * Applies as real processes: `site-status apply` killed with SIGKILL in the middle of its
 * transaction leaves all of the file or none of it (SQLite file, and MySQL when TEST_MYSQL_URL is
 * set); and a `serve` process on the same MySQL database reads what another process applied,
 * without a restart. Sized to make the apply's transaction last long enough to be killed in.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { planFile } from '../../../lib/as-code/apply.js'
import { generateKey, hashKey } from '../../../lib/keys.js'
import { parseConfigText } from '../../../lib/rules/config-parse.js'
import type { ConfigFile } from '../../../lib/rules/config-file.js'
import { openDb, type Db } from '../../../lib/store/db.js'
import { createKey } from '../../../lib/store/keys.js'
import { cliEnv, startServe } from '../../helpers/cli.js'
import { CLI_FILE, ROOT } from '../../helpers/compiled.js'
import { createMigratedDatabase, engines } from '../../helpers/db.js'
import { holds } from '../../helpers/poll.js'

t.setTimeout(240_000)

/** Sites in the killed apply's file: on SQLite its transaction takes a few seconds on these machines. */
const SITES = 20_000

function bigFile(): string {
  const lines = ['sites:']
  for (let i = 0; i < SITES; i++) lines.push(`  - { domain: s${i}.example.com, interval_s: 300, expect: { status: [200] } }`)
  lines.push('heartbeats:', '  - { slug: nightly, name: Nightly, schedule: { every_s: 86400 }, grace_s: 600 }')
  return `${lines.join('\n')}\n`
}
const text = bigFile()
/** The file as the apply read it, parsed once for both engines (20,000 sites take seconds to parse). */
let parsedOnce: ConfigFile | undefined
function parsedFile(): ConfigFile {
  if (parsedOnce === undefined) {
    const parsed = parseConfigText(text, 'big.yaml', {})
    if (!parsed.ok) throw new Error('the file is refused')
    parsedOnce = parsed.file
  }
  return parsedOnce
}

async function count(db: Db, table: string): Promise<number> {
  return Number((await db(table).count({ n: '*' }).first())?.n)
}

for (const engine of engines()) {
  t.test(`apply killed with SIGKILL mid-transaction leaves all or nothing, on ${engine}`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'site-status-apply-'))
    t.teardown(() => {
      rmSync(dir, { recursive: true, force: true })
    })
    const database = await createMigratedDatabase(engine)
    t.teardown(() => database.cleanup())
    const db = openDb(database.url)
    t.teardown(() => db.destroy())
    writeFileSync(join(dir, 'big.yaml'), text)

    const child = spawn(process.execPath, [resolve(ROOT, CLI_FILE), 'apply', '-f', join(dir, 'big.yaml')], {
      cwd: dir,
      env: cliEnv({ DATABASE_URL: database.url }),
      stdio: 'ignore'
    })
    t.teardown(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    const exited = new Promise<void>((done) =>
      child.once('exit', () => {
        done()
      })
    )
    // The lock row is claimed just before the transaction opens: once it is, the apply is under way.
    t.ok(await holds(async () => (await db('config_lock').where({ id: 1 }).first('holder'))?.holder != null, 60_000), 'the apply started')
    // On MySQL a reader at READ UNCOMMITTED sees a transaction's writes as they happen: kill it
    // once thousands of its rows are written.
    if (engine === 'mysql')
      t.ok(
        await holds(async () => {
          const trx = await db.transaction({ isolationLevel: 'read uncommitted' })
          try {
            return (await count(trx, 'sites')) > 2000
          } finally {
            await trx.commit()
          }
        }, 60_000),
        'the apply is writing'
      )
    child.kill('SIGKILL')
    await exited
    t.equal(child.signalCode, 'SIGKILL', 'the apply was killed before it ended')

    const sites = await count(db, 'sites')
    t.ok(sites === 0 || sites === SITES + 1, `all or nothing: ${sites} sites rows`)
    const plan = await planFile({ db, file: parsedFile(), prune: false })
    const creates = plan.items.filter((i) => i.action === 'create').length
    t.ok(creates === 0 || creates === SITES + 1, `the plan shows all or nothing applied (${creates} to create)`)
    t.equal(plan.items.length, creates, 'and nothing half-changed')
    t.equal(await count(db, 'heartbeats'), sites === 0 ? 0 : 1, 'the heartbeat went with the sites')
  })
}

t.test('another serve process on the same MySQL reads a site another process applied', { skip: !process.env.TEST_MYSQL_URL }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-apply-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const database = await createMigratedDatabase('mysql')
  t.teardown(() => database.cleanup())
  const db = openDb(database.url)
  t.teardown(() => db.destroy())
  const key = generateKey()
  await createKey({ db, name: 'e2e', keyHash: hashKey(key), rateLimit: 1_000_000, scopes: 'read,manage', now: new Date() })
  const serve = await startServe(t, { env: { DATABASE_URL: database.url, LOG_LEVEL: 'info', INSTANCE_ID: 'reader' }, cwd: dir })
  const status = async (domain: string): Promise<number> =>
    (await fetch(`${serve.uri}/api/v1/status/${domain}`, { headers: { authorization: `Bearer ${key}` } })).status
  t.equal(await status('applied.example.com'), 404, 'not tracked before the apply')

  writeFileSync(join(dir, 'watch.yaml'), 'sites:\n  - { domain: applied.example.com, interval_s: 300 }\n')
  const applied = await new Promise<number | null>((done) => {
    const child = spawn(process.execPath, [resolve(ROOT, CLI_FILE), 'apply', '-f', join(dir, 'watch.yaml')], {
      cwd: dir,
      env: cliEnv({ DATABASE_URL: database.url }),
      stdio: 'ignore'
    })
    child.once('exit', (code) => {
      done(code)
    })
  })
  t.equal(applied, 0, 'the operator tool applied the file')
  t.ok(
    await holds(async () => (await status('applied.example.com')) === 200, 30_000),
    'the other process tracks the site without a restart'
  )
})
