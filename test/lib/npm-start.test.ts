import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../helpers/cli.js'
import { recordOutputOf } from '../helpers/suite-log.js'

// npm runs the start script through `sh -c`, and a shell that merely waits for its child does not
// pass npm's SIGTERM on: the service kept running after `npm start` was stopped. With `exec` in the
// script, the shell becomes the service, which gets the signal and drains.
t.test('npm start: SIGTERM to npm stops the service, which drains and exits', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-npm-start-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => {
    if (npm.exitCode === null) npm.kill('SIGKILL')
  })
  recordOutputOf(npm.stdout)
  recordOutputOf(npm.stderr)
  let out = ''
  npm.stdout.on('data', (c: Buffer) => {
    out += c.toString()
  })
  const uri = await new Promise<string>((resolve, reject) => {
    npm.stdout.on('data', () => {
      const m = /"uri":"(http:\/\/[^"]+)".*"msg":"listening"/.exec(out)
      if (m) resolve(m[1] as string)
    })
    npm.once('exit', () => {
      reject(new Error(`npm start exited early: ${out}`))
    })
  })
  t.equal((await fetch(`${uri}/healthz`)).status, 200, 'the service answers')
  const exited = once(npm, 'exit')
  npm.kill('SIGTERM')
  await exited
  t.match(out, /"msg":"stopped"/, 'the service drained and said so')
  await t.rejects(fetch(`${uri}/healthz`), 'and no longer answers')
})
