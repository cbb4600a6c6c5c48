import t, { type Test } from 'tap'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { once } from 'node:events'
import net from 'node:net'
import { loadConfig } from '../../config/index.js'
import { createLogger } from '../../lib/logger.js'
import { startService } from '../../lib/main.js'
import { LISTEN_BACKLOG } from '../../lib/server.js'
import { startServe } from '../helpers/cli.js'
import { LogCapture } from '../helpers/server.js'
import { recordOutputOf } from '../helpers/suite-log.js'
import { CLI_FILE, TEST_ACTORS } from '../helpers/compiled.js'

const CLI = resolve(CLI_FILE)

t.test('stop lets in-flight requests finish, then refuses new ones and closes the database', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-main-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const config = loadConfig({ PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` })
  const service = await startService({ config, actors: TEST_ACTORS, logger: createLogger({ level: 'info', stream: new LogCapture() }) })
  let arrived!: () => void
  const handlerRunning = new Promise<void>((resolve) => {
    arrived = resolve
  })
  service.server.route({
    method: 'GET',
    path: '/slow',
    options: { auth: false },
    handler: async () => {
      arrived()
      await new Promise((r) => setTimeout(r, 300))
      return { done: true }
    }
  })
  const uri = service.server.info.uri
  const inFlight = fetch(`${uri}/slow`).then(async (r) => ({ status: r.status, body: await r.json() }))
  await handlerRunning
  const stopped = service.stop()
  t.same(await inFlight, { status: 200, body: { done: true } }, 'the request in flight completed')
  await stopped
  await t.rejects(fetch(`${uri}/healthz`), 'no new connections after stop')
  await t.rejects(service.db.raw('select 1'), 'the database is closed')
})

t.test('a request arriving on an open connection just as the stop begins is answered, not run and dropped', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-main-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const config = loadConfig({ PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` })
  const service = await startService({ config, actors: TEST_ACTORS, logger: createLogger({ level: 'silent' }) })
  let ran = 0
  service.server.route({
    method: 'GET',
    path: '/slow',
    options: { auth: false },
    handler: async () => {
      ran++
      await new Promise((r) => setTimeout(r, 100))
      return { done: true }
    }
  })
  // The connection is open before the stop; its request is on the wire as the stop begins.
  const socket = net.connect({ host: '127.0.0.1', port: service.server.info.port as number })
  await once(socket, 'connect')
  let reply = ''
  socket.setEncoding('utf8').on('data', (d: string) => {
    reply += d
  })
  socket.on('error', () => {})
  const closed = once(socket, 'close')
  const stopped = service.stop()
  socket.write('GET /slow HTTP/1.1\r\nhost: localhost\r\n\r\n')
  await stopped
  await closed
  t.equal(ran, 1, 'the request was run')
  t.match(reply, /^HTTP\/1\.1 200 /, 'and answered')
  t.match(reply, /connection: close/i, 'on a connection that then closes')
})

/**
 * Starts `site-status serve` as a real process, from the build as `npm start` runs it (`npm test`
 * builds first), and resolves with its address once it listens. From the sources, each of the
 * three actor threads loads TypeScript through tap's loader, which on a busy machine took longer
 * than the start is given.
 */
function serve(t: Test, env: Record<string, string>, cwd: string) {
  return startServe(t, { env, cwd, script: 'dist/lib/cli/index.js' })
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`serve starts on a fresh SQLite file with no DATABASE_URL and exits 0 on ${signal}`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'site-status-serve-'))
    t.teardown(() => {
      rmSync(dir, { recursive: true, force: true })
    })
    const { child, uri, output } = await serve(t, {}, dir)
    const health = await fetch(`${uri}/healthz`)
    t.equal(health.status, 200)
    t.ok(existsSync(join(dir, 'data', 'site-status.sqlite')), 'the default database file was created and migrated')
    child.kill(signal)
    const [code] = await once(child, 'exit')
    t.equal(code, 0, 'exit code 0')
    t.match(output(), /"msg":"stopped"/)
  })
}

t.test("the service listens with an accept queue of LISTEN_BACKLOG, not Node's 511", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-main-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` })
  const service = await startService({ config, actors: TEST_ACTORS, logger: createLogger({ level: 'silent' }) })
  t.teardown(() => service.stop())
  const port = service.server.info.port as number
  // For a listening socket, ss reports the accept queue's size as Send-Q (capped by net.core.somaxconn).
  const line = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' }).trim()
  const sendQ = Number(line.split(/\s+/)[2])
  const somaxconn = Number(execFileSync('cat', ['/proc/sys/net/core/somaxconn'], { encoding: 'utf8' }))
  t.equal(sendQ, Math.min(LISTEN_BACKLOG, somaxconn), `the accept queue holds ${sendQ}`)
  t.ok(sendQ > 511 || somaxconn <= 511, "more than Node's default where the kernel allows it")
  const res = await fetch(`${service.server.info.uri}/healthz`)
  t.equal(res.status, 200, 'and the service answers')
})

t.test('serve refuses to start with a bad setting and names it', async (t) => {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { PATH: process.env.PATH, PORT: 'eighty' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  recordOutputOf(child.stdout)
  recordOutputOf(child.stderr)
  let err = ''
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString()
  })
  const [code] = await once(child, 'exit')
  t.not(code, 0)
  t.match(err, /^site-status: invalid configuration: PORT: .+\n$/, 'one line naming PORT')
})
