/**
 * The README's first run, as written (issue 54): its commands are read from the README and run
 * against a freshly started server, each answering what its `# -> ` comment says. The server is
 * started as the README's "try it on loopback" recipe says, so every probe reaches a loopback target
 * and no name is asked of any resolver. `npm install && npm start` itself is not run: this checkout
 * is installed, and tap's `before` hook has built `dist/`; the server is the built `serve`, on a free
 * port, with SQLite in a temporary directory, and the README's port is replaced by that one.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import http from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ROOT, startServe } from './helpers/cli.js'
import { until } from './helpers/poll.js'
import { closedPort, serveOnLoopback } from './helpers/targets.js'

/** The `sh` blocks of the README's "First run" section, each as its lines. */
function firstRunBlocks(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const section = /\n## First run\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? ''
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => (m[1] ?? '').split('\n').filter((l) => l.trim() !== ''))
}

/** Runs one line in bash from the clone, with `vars` in its environment; its stdout. */
function bash(line: string, vars: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', line], { cwd: ROOT, env: { PATH: process.env.PATH, ...vars }, timeout: 30_000 }, (_err, stdout) => {
      resolve(stdout)
    })
  })
}

t.test('the README first run answers as the README says, against a fresh server', async (t) => {
  const [firstRun = [], loopback = []] = firstRunBlocks()
  t.ok(firstRun.length >= 6 && firstRun.length <= 10, `a first run of ten lines at most (${firstRun.length})`)
  t.match(firstRun[0], /^npm install && npm start/)

  // The loopback recipe's settings, its ports replaced by a real target's and a closed one.
  const target = http.createServer((_req, res) => res.writeHead(200).end('ok'))
  const port = await serveOnLoopback(t, target)
  const closed = await closedPort()
  const startLine = loopback.find((l) => l.includes('npm start')) ?? ''
  const env: Record<string, string> = {}
  for (const m of startLine.matchAll(/([A-Z_]+)=('[^']*'|\S+)/g)) {
    env[m[1] as string] = (m[2] as string)
      .replace(/^'|'$/g, '')
      .replace('127.0.0.1:8080', `127.0.0.1:${port}`)
      .replace('127.0.0.1:8443', `127.0.0.1:${closed}`)
  }
  t.same(Object.keys(env).sort(), ['ALLOW_PRIVATE_TARGETS', 'CONNECT_TO', 'DNS_SERVERS'], 'the recipe sets what it explains')

  const dir = mkdtempSync(join(tmpdir(), 'site-status-readme-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const DATABASE_URL = `sqlite:${join(dir, 'db.sqlite')}`
  const { uri } = await startServe(t, { cwd: dir, env: { ...env, HOST: '127.0.0.1', DATABASE_URL } })

  const vars: Record<string, string> = { DATABASE_URL, LOG_LEVEL: 'silent' }
  for (const line of firstRun.slice(1)) {
    const [command = '', expected = ''] = line.replace(/127\.0\.0\.1:3000/g, uri.replace(/^http:\/\//, '')).split(/\s+# -> /)
    const wanted = expected.replace(/ \(.*$/, '')
    t.not(wanted, '', `${command}: the README says what it answers`)
    const assignment = /^(\w+)=\$\((.*)\)$/.exec(command)
    // A site added is taken by the server within a moment: each command may be asked again until then.
    const output = await until(
      () => bash(assignment ? (assignment[2] as string) : command, vars),
      (out) => out.includes(wanted),
      15_000
    )
    t.ok(output.includes(wanted), `${command.slice(0, 60)}... answers ${wanted}`)
    if (assignment) vars[assignment[1] as string] = output.trim()
  }
})
