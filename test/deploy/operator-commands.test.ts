/**
 * What the docs tell an operator to type never runs someone else's package: `npx site-status`
 * outside this directory fetches the unrelated registry package of that name (issue 52). The
 * commands run here ask a registry of the test's own, which records every request.
 */
import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import t, { type Test } from 'tap'
import { natsUsers } from '../helpers/agents.js'
import { ROOT } from '../helpers/compiled.js'
import { startNats } from '../helpers/nats.js'
import { recordOutputOf } from '../helpers/suite-log.js'

/** `npx` (with any options but --no-install) running a `site-status...` package. */
const BARE_NPX = /\bnpx\s+(?:(?!--no-install\b)-\S+\s+)*site-status/

/** README.md, and every file under docs/ and deploy/, by path from the root. */
function operatorDocs(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && !/\.(png|jpe?g|svg)$/.test(e.name))
      .map((e) => relative(ROOT, join(e.parentPath, e.name)))
  return ['README.md', ...under('docs'), ...under('deploy')]
}

t.test('the pattern catches npx running site-status, and only that', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['NATS_URL=x npx site-status agent --location fra1', true],
    ['`npx site-status ...`', true],
    ['npx -y site-status keys list', true],
    ['npx --yes site-status-api agent', true],
    ['npx --no-install site-status keys list', false],
    ['npm run agent -- --location fra1', false],
    ['node dist/lib/cli/index.js agent --location fra1', false],
    ['npx tap test/deploy/operator-commands.test.ts', false],
    ['site-status keys list', false]
  ]
  for (const [line, caught] of cases) t.equal(BARE_NPX.test(line), caught, line)
})

t.test('no README, docs or deploy file tells anyone to run npx site-status', async (t) => {
  const docs = operatorDocs()
  t.ok(docs.includes('deploy/site-status-agent.service'), 'the deploy files are read')
  const found = docs.flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, i) => (BARE_NPX.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []))
  )
  t.same(found, [])
})

interface Shell {
  code: number | null
  stdout: string
  stderr: string
}

/** A registry that knows no package and records what it was asked. */
async function startRegistry(t: Test): Promise<{ url: string; asked: string[] }> {
  const asked: string[] = []
  const server = http.createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`)
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          resolve()
        })
      )
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, asked }
}

/**
 * Runs `line` in bash with /tmp as its working directory, this node and its npm first on PATH, and
 * an npm whose registry is `registry`, with an empty cache and no user configuration: a package
 * it wanted could come from that registry only.
 */
async function inTmp(t: Test, line: string, registry: string, env: Record<string, string> = {}): Promise<Shell> {
  const npmHome = mkdtempSync(join(tmpdir(), 'operator-npm-'))
  t.teardown(() => {
    rmSync(npmHome, { recursive: true, force: true })
  })
  writeFileSync(join(npmHome, 'npmrc'), '')
  const child = spawn('bash', ['-c', line], {
    cwd: '/tmp',
    env: {
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: npmHome,
      npm_config_userconfig: join(npmHome, 'npmrc'),
      npm_config_cache: join(npmHome, 'cache'),
      npm_config_registry: registry,
      npm_config_update_notifier: 'false',
      npm_config_fetch_retries: '0',
      ...env
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  recordOutputOf(child.stdout)
  recordOutputOf(child.stderr)
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve))
  return { code, stdout, stderr }
}

/** The README's agent command: the line of its sh block that runs `--location fra1`. */
function readmeAgentCommand(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const blocks = [...readme.matchAll(/^ *```sh\n([\s\S]*?)^ *```$/gm)].map((m) => m[1] ?? '')
  const lines = blocks.flatMap((b) => b.split('\n').map((l) => l.trim())).filter((l) => /\bagent\b.*--location fra1/.test(l))
  if (lines.length !== 1) throw new Error(`the README has ${lines.length} agent command lines, not one`)
  return lines[0] ?? ''
}

const stderrLines = (s: Shell): string[] => s.stderr.split('\n').filter((l) => l.trim() !== '')

t.test("the README's agent command, run from /tmp, never asks a registry", async (t) => {
  const command = readmeAgentCommand()
  const registry = await startRegistry(t)

  // As copied, with nothing else set: one line saying how to run it.
  const bare = await inTmp(t, command, registry.url)
  t.not(bare.code, 0)
  t.equal(stderrLines(bare).length, 1, bare.stderr)
  t.match(bare.stderr, /SITE_STATUS_DIR.*site-status-api/)

  // With SITE_STATUS_DIR naming this package: this package's agent runs, and stops at its NATS
  // (nats.example does not resolve) with the operator tool's own one-line error.
  const here = await inTmp(t, command, registry.url, { SITE_STATUS_DIR: ROOT })
  t.equal(here.code, 1)
  t.match(stderrLines(here), [/^site-status: (NATS: |cannot reach NATS)/])
  t.notMatch(here.stdout + here.stderr, /PASSWORD/, 'the password is not echoed')

  t.same(registry.asked, [], 'no request reached the registry')

  // What the README once said does ask it: this registry would be seen serving a download.
  const npx = await inTmp(t, 'npx site-status agent --location fra1', registry.url, { npm_config_yes: 'true' })
  t.not(npx.code, 0)
  t.match(registry.asked, [/^GET \/site-status$/])
})

t.test('the systemd unit runs the agent from its directory and stops it with SIGTERM', async (t) => {
  const unit = readFileSync(join(ROOT, 'deploy/site-status-agent.service'), 'utf8')
  const setting = (name: string): string[] => [...unit.matchAll(new RegExp(`^${name}=(.*)$`, 'gm'))].map((m) => m[1] ?? '')
  t.same(setting('Restart'), ['always'])
  t.same(setting('KillSignal'), ['SIGTERM'])
  const [execStart = ''] = setting('ExecStart')
  const [workingDirectory = ''] = setting('WorkingDirectory')
  const [environmentFile = ''] = setting('EnvironmentFile')
  t.match(environmentFile, /^\/etc\//)
  t.match(unit, new RegExp(`install -m 0600 .*${environmentFile}`), 'the comment makes the file 0600')

  // The unit's command, as systemd would run it: its node is this test's, its working directory
  // this package (for /opt/site-status), its environment the file's lines plus Environment=.
  const nats = await startNats(t, { users: natsUsers('fra1-secret', ['fra1']) })
  const dir = mkdtempSync(join(tmpdir(), 'agent-unit-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const envFile = join(dir, 'agent.env')
  writeFileSync(envFile, `NATS_URL=nats://agent-fra1:fra1-secret@127.0.0.1:${nats.port}\n`)
  chmodSync(envFile, 0o600)
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' }
  for (const line of [...readFileSync(envFile, 'utf8').split('\n'), ...setting('Environment')]) {
    const eq = line.indexOf('=')
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1)
  }
  const [, ...args] = execStart.split(' ')
  t.equal(workingDirectory, '/opt/site-status')
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  recordOutputOf(child.stdout)
  recordOutputOf(child.stderr)
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve(code ?? signal)
    })
  )
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let out = ''
  await new Promise<void>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
      if (out.includes('"agent serving"')) resolve()
    })
    void exited.then(() => {
      resolve()
    })
  })
  t.match(out, /"agent serving"/, 'it serves fra1')
  child.kill('SIGTERM')
  t.equal(await exited, 0, 'SIGTERM stops it cleanly')
})
