/**
 * A central never hangs on its NATS: whether NATS was never reached, went away mid-run, or stopped
 * answering with its connections still open (half open, a frozen server), `site-status serve`
 * exits 0 within 5 s of SIGTERM with its database closed (SQLite's write-ahead log checkpointed
 * away) and its lock released (a second serve on the same file starts at once); a start that fails
 * for another reason (its port taken) exits 1 with its one line instead of hanging.
 */
import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import { CLI_FILE, ROOT } from '../helpers/compiled.js'
import { natsUsers } from '../helpers/agents.js'
import { natsUrlWithAuth, startNats } from '../helpers/nats.js'
import { recordOutputOf } from '../helpers/suite-log.js'
import { closedPort, freePort } from '../helpers/targets.js'

const STOP_WITHIN_MS = 5000
const PASSWORD = 'pcentral0test0password'

interface Serve {
  child: ChildProcess
  output(): string
  /** Resolves with the exit code and how long after `since` it came. */
  exited: Promise<{ code: number | null; at: number }>
}

function serve(t: Test, file: string, env: Record<string, string>): Serve {
  const child = spawn(process.execPath, [CLI_FILE, 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: `sqlite:${file}`,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      LOCATIONS: JSON.stringify([{ label: 'Local 1, Local' }, { label: 'Frankfurt 1, Germany', agent: 'fra1' }]),
      ...env
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  for (const stream of [child.stdout, child.stderr]) {
    recordOutputOf(stream)
    stream.setEncoding('utf8').on('data', (d: string) => (out += d))
  }
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('exit', (code) => {
      resolve({ code, at: performance.now() })
    })
  )
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  return { child, output: () => out, exited }
}

/** Resolves once `s` has written `text` (it may be part of a JSON log line). */
function saying(s: Serve, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const look = (): void => {
      if (s.output().includes(text)) resolve()
    }
    s.child.stdout?.on('data', look)
    s.child.stderr?.on('data', look)
    void s.exited.then(() => {
      if (s.output().includes(text)) resolve()
      else reject(new Error(`exited before saying ${text}: ${s.output()}`))
    })
    look()
  })
}

/** SIGTERM now: exit 0 within the bound, the log checkpointed away, and the file free for another serve. */
async function stopsCleanly(t: Test, s: Serve, file: string): Promise<void> {
  const since = performance.now()
  s.child.kill('SIGTERM')
  const { code, at } = await s.exited
  t.equal(code, 0, 'exit 0')
  t.ok(at - since <= STOP_WITHIN_MS, `within ${STOP_WITHIN_MS} ms (${Math.round(at - since)} ms)`)
  t.notOk(existsSync(`${file}-wal`), 'the database was closed (its write-ahead log checkpointed and removed)')
  const next = serve(t, file, { PORT: String(await freePort()), LOCATIONS: JSON.stringify([{ label: 'Local 1, Local' }]) })
  await saying(next, '"msg":"listening"')
  t.pass('a second serve on the same file starts: the lock was released')
  next.child.kill('SIGTERM')
  t.equal((await next.exited).code, 0)
}

t.test('NATS never reached: SIGTERM exits 0 within 5 s, the database closed and the lock released', async (t) => {
  const file = join(t.testdir(), 'db.sqlite')
  const s = serve(t, file, { PORT: String(await freePort()), NATS_URL: `nats://127.0.0.1:${await closedPort()}` })
  await saying(s, '"msg":"listening"')
  t.match(s.output(), /NATS cannot be reached/, 'it said so, and serves')
  await stopsCleanly(t, s, file)
})

t.test('NATS stopped mid-run: SIGTERM exits 0 within 5 s, the database closed and the lock released', async (t) => {
  const nats = await startNats(t, { users: natsUsers(PASSWORD, ['fra1']) })
  const file = join(t.testdir(), 'db.sqlite')
  const s = serve(t, file, { PORT: String(await freePort()), NATS_URL: natsUrlWithAuth(nats.url, 'central', PASSWORD) })
  await saying(s, '"msg":"listening"')
  await saying(s, 'connected to NATS')
  await nats.stop()
  await saying(s, 'NATS connection lost')
  await stopsCleanly(t, s, file)
})

t.test('NATS half open (frozen, its connections open): SIGTERM exits 0 within 5 s, the database closed', async (t) => {
  const nats = await startNats(t, { users: natsUsers(PASSWORD, ['fra1']) })
  const file = join(t.testdir(), 'db.sqlite')
  const s = serve(t, file, { PORT: String(await freePort()), NATS_URL: natsUrlWithAuth(nats.url, 'central', PASSWORD) })
  await saying(s, '"msg":"listening"')
  await saying(s, 'connected to NATS')
  nats.pause()
  await stopsCleanly(t, s, file)
  nats.resume()
})

t.test('a start that fails for another reason (its port taken) exits 1 with its one line', async (t) => {
  const taken = net.createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) =>
        taken.close(() => {
          resolve()
        })
      )
  )
  const port = (taken.address() as net.AddressInfo).port
  const file = join(t.testdir(), 'db.sqlite')
  const since = performance.now()
  const s = serve(t, file, { PORT: String(port), NATS_URL: `nats://127.0.0.1:${await closedPort()}`, LOG_LEVEL: 'silent' })
  const { code, at } = await s.exited
  t.equal(code, 1, 'exit 1')
  // Hanging was for ever; the bound leaves room for a process start on a loaded 2-core box (18 s seen).
  t.ok(at - since < 30_000, `without hanging (${Math.round(at - since)} ms: the 5 s wait for NATS, then the listen)`)
  const lines = s
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '')
  t.equal(lines.length, 1, `one line: ${JSON.stringify(lines)}`)
  t.match(lines[0], /^site-status: /)
  t.notOk(existsSync(`${file}-wal`), 'the database was closed')
})
