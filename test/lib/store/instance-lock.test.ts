import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { InstanceLockedError, lockSqliteFile } from '../../../lib/store/instance-lock.js'
import { spawnCli, startServe } from '../../helpers/cli.js'

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-lock-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

t.test('one holder of a SQLite file at a time; released, the next one gets it', async (t) => {
  const url = `sqlite:${join(tempDir(t), 'db.sqlite')}`
  const first = lockSqliteFile(url)
  t.ok(first, 'the first takes it')
  t.throws(() => lockSqliteFile(url), InstanceLockedError, 'a second is refused')
  t.throws(() => lockSqliteFile(url), {
    code: 'INSTANCE_LOCKED',
    message: /^another serve is running on .*db\.sqlite: one instance per SQLite file/
  })
  first?.release()
  const next = lockSqliteFile(url)
  t.ok(next, 'once released, the next one takes it')
  next?.release()
})

t.test('the folder of a SQLite file not made yet is made, as the database itself would make it', async (t) => {
  const lock = lockSqliteFile(`sqlite:${join(tempDir(t), 'new', 'folder', 'db.sqlite')}`)
  t.ok(lock)
  lock?.release()
})

t.test('MySQL and an in-memory SQLite take no lock', async (t) => {
  t.equal(lockSqliteFile('mysql://root@127.0.0.1:3306/x'), null)
  t.equal(lockSqliteFile('sqlite::memory:'), null)
})

t.test('a second serve on one SQLite file exits 1 with one line; a killed one leaves the file free', async (t) => {
  const dir = tempDir(t)
  const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, LOG_LEVEL: 'info' }
  const first = await startServe(t, { env, cwd: dir })
  const second = await spawnCli(['serve'], { env: { ...env, PORT: '0' } })
  t.equal(second.code, 1, 'exit code 1')
  t.match(
    second.stderr,
    /^site-status: another serve is running on .*db\.sqlite: one instance per SQLite file \(several need MySQL\)\n$/,
    'one line saying why'
  )
  t.equal((await fetch(`${first.uri}/healthz`)).status, 200, 'the first one still serves')
  const gone = once(first.child, 'exit')
  first.child.kill('SIGKILL')
  await gone
  const third = await startServe(t, { env, cwd: dir })
  t.equal((await fetch(`${third.uri}/healthz`)).status, 200, 'after a crash the next serve starts')
  const exit = once(third.child, 'exit')
  third.child.kill('SIGTERM')
  t.equal((await exit)[0], 0)
})
