import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { migrations } from '../../../migrations/index.js'
import { ROOT, hasStackTrace, lines, runCli, spawnCli } from '../../helpers/cli.js'
import { createTestDatabase, engines } from '../../helpers/db.js'

/** Nothing listens on port 1: a database URL that can never be reached. */
const UNREACHABLE = 'mysql://root@127.0.0.1:1/x'
const TOP_COMMANDS = ['serve', 'agent', 'migrate', 'keys', 'sites']
const KEYS_SUBCOMMANDS = ['keys create --name NAME [--limit N] [--scopes LIST]', 'keys list', 'keys revoke ID']
const SITES_SUBCOMMANDS = ['sites add DOMAIN [--name NAME]', 'sites remove DOMAIN', 'sites list', 'sites import FILE']

t.test('help', async (t) => {
  t.test('site-status --help lists every command and subcommand', async (t) => {
    const res = await spawnCli(['--help'], { env: { DATABASE_URL: UNREACHABLE } })
    t.equal(res.code, 0, 'exits 0')
    t.equal(res.stderr, '', 'nothing on stderr')
    t.match(res.stdout, /^site-status: /, 'starts by naming the tool')
    for (const c of TOP_COMMANDS) t.match(res.stdout, new RegExp(`^ {2}${c} `, 'm'), `mentions ${c}`)
    for (const s of [...KEYS_SUBCOMMANDS, ...SITES_SUBCOMMANDS]) t.ok(res.stdout.includes(`site-status ${s}`), `shows ${s}`)
  })

  t.test('every command answers --help without touching the database', async (t) => {
    const env = { DATABASE_URL: UNREACHABLE }
    const cases: Array<[string[], string[]]> = [
      [['help'], TOP_COMMANDS],
      [['-h'], TOP_COMMANDS],
      [['keys', '--help'], KEYS_SUBCOMMANDS],
      [['keys', '-h'], KEYS_SUBCOMMANDS],
      [['keys', 'create', '--help'], KEYS_SUBCOMMANDS],
      [['keys', 'revoke', '--help'], KEYS_SUBCOMMANDS],
      [['sites', '--help'], SITES_SUBCOMMANDS],
      [
        ['sites', 'import', '--help'],
        [...SITES_SUBCOMMANDS, 'FILE - reads standard input']
      ],
      [['migrate', '--help'], ['usage: site-status migrate']],
      [['serve', '--help'], ['usage: site-status serve']],
      [['agent', '--help'], ['usage: site-status agent --location ID']]
    ]
    for (const [args, mentions] of cases) {
      const res = await runCli(args, { env })
      const what = args.join(' ')
      t.equal(res.code, 0, `${what}: exits 0`)
      t.equal(res.stderr, '', `${what}: nothing on stderr`)
      for (const m of mentions) t.ok(res.stdout.includes(m), `${what}: mentions ${m}`)
    }
  })

  t.test('a missing command prints usage on stderr and exits 2', async (t) => {
    for (const args of [[], ['keys'], ['sites']]) {
      const res = await runCli(args, { env: { DATABASE_URL: UNREACHABLE } })
      t.equal(res.code, 2, `"${args.join(' ')}" exits 2`)
      t.equal(res.stdout, '', 'nothing on stdout')
      t.match(res.stderr, /usage:/, 'usage on stderr')
    }
  })
})

t.test('unknown commands and options exit 2 with one line', async (t) => {
  const res = await spawnCli(['frobnicate'], { env: { DATABASE_URL: UNREACHABLE } })
  t.equal(res.code, 2, 'an unknown command exits 2')
  t.equal(res.stderr, 'site-status: unknown command "frobnicate" (see site-status --help)\n')
  t.equal(res.stdout, '')
  for (const args of [
    ['keys', 'frobnicate'],
    ['sites', 'frobnicate'],
    ['keys', 'list', '--bogus'],
    ['sites', 'list', 'extra'],
    ['migrate', 'extra']
  ]) {
    const r = await runCli(args, { env: { DATABASE_URL: UNREACHABLE } })
    t.equal(r.code, 2, `${args.join(' ')}: exits 2`)
    t.equal(lines(r.stderr).length, 1, `${args.join(' ')}: one stderr line`)
    t.equal(r.stdout, '')
  }
})

t.test('a bad environment value stops every command with one line naming the variable', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-cli-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  const file = join(dir, 'never.sqlite')
  const res = await spawnCli(['keys', 'list'], { env: { DATABASE_URL: `sqlite:${file}`, RATE_LIMIT_PER_MIN: 'abc' } })
  t.not(res.code, 0, 'exits non-zero')
  t.equal(lines(res.stderr).length, 1, 'one stderr line')
  t.match(res.stderr, /^site-status: invalid configuration: RATE_LIMIT_PER_MIN: /, 'naming the variable')
  t.equal(res.stdout, '')
  t.notOk(existsSync(file), 'the database was never opened')

  const cases: Array<[Record<string, string>, string[], string]> = [
    [{ DATABASE_URL: 'postgres://x' }, ['keys', 'list'], 'DATABASE_URL'],
    [{ CHECK_INTERVAL_S: '0' }, ['migrate'], 'CHECK_INTERVAL_S'],
    [{ LOG_LEVEL: 'loud' }, ['sites', 'list'], 'LOG_LEVEL'],
    [{ PORT: '70000' }, ['keys', 'create', '--name', 'x'], 'PORT'],
    [{ LOCATIONS: '[' }, ['sites', 'add', 'example.com'], 'LOCATIONS'],
    [{ CONNECT_TO: 'nonsense' }, ['keys', 'revoke', '1'], 'CONNECT_TO']
  ]
  for (const [bad, args, variable] of cases) {
    const r = await runCli(args, { env: { DATABASE_URL: `sqlite:${file}`, ...bad } })
    t.equal(r.code, 1, `${variable}: exits 1`)
    t.equal(lines(r.stderr).length, 1, `${variable}: one stderr line`)
    t.ok(r.stderr.startsWith('site-status: invalid configuration: ') && r.stderr.includes(`${variable}: `), `${variable}: named`)
  }
  t.notOk(existsSync(file), 'no command opened the database')
})

for (const engine of engines()) {
  t.test(`migrate on ${engine} applies what is pending and then says the schema is up to date`, async (t) => {
    const test = await createTestDatabase(engine)
    t.teardown(() => test.cleanup())
    const first = await spawnCli(['migrate'], { env: { DATABASE_URL: test.url } })
    t.equal(first.code, 0, 'the first run exits 0')
    t.same(
      lines(first.stdout),
      migrations.map((m) => `applied ${m.name}`),
      'and prints each migration it applied'
    )
    t.equal(first.stderr, '')
    const second = await runCli(['migrate'], { env: { DATABASE_URL: test.url } })
    t.equal(second.code, 0, 'the second run exits 0')
    t.equal(second.stdout, 'database schema is up to date\n', 'and applies nothing')
  })
}

t.test('an unreachable database is one clear line, without a stack trace', async (t) => {
  const res = await spawnCli(['keys', 'list'], { env: { DATABASE_URL: UNREACHABLE } })
  t.equal(res.code, 1, 'exits 1')
  t.equal(lines(res.stderr).length, 1, 'one stderr line')
  t.match(res.stderr, /^site-status: cannot reach the database: .*ECONNREFUSED/, 'says the database cannot be reached')
  t.notOk(hasStackTrace(res.stderr), 'no stack trace on stderr')
  t.notOk(hasStackTrace(res.stdout), 'no stack trace on stdout')
  t.equal(res.stdout, '', 'nothing on stdout')
})

t.test('a reader that closes the pipe early does not crash the command', async (t) => {
  const test = await createTestDatabase('sqlite')
  t.teardown(() => test.cleanup())
  const res = await spawnCli(['keys', 'list'], { env: { DATABASE_URL: test.url }, closeStdout: true })
  t.equal(res.code, 0, "exits with the command's own code, as with `| head -1`")
  t.notOk(hasStackTrace(res.stderr), 'no EPIPE stack trace')
})

const BUILT = join(ROOT, 'dist/lib/cli/index.js')

t.test('the package.json bin entry names the built command', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: Record<string, string> }
  t.same(pkg.bin, { 'site-status': 'dist/lib/cli/index.js' }, 'bin site-status points to dist/lib/cli/index.js')
})

t.test(
  'the built command runs through a bin symlink, as npx runs it',
  {
    skip: existsSync(BUILT) ? false : 'dist/lib/cli/index.js is missing: run `npm run build` to test the built command'
  },
  async (t) => {
    t.match(readFileSync(BUILT, 'utf8'), /^#!\/usr\/bin\/env node\n/, 'the built file starts with a node shebang')
    // npx runs it through a node_modules/.bin symlink: the command must still see itself as invoked.
    const dir = mkdtempSync(join(tmpdir(), 'site-status-bin-'))
    t.teardown(() => {
      rmSync(dir, { recursive: true, force: true })
    })
    const link = join(dir, 'site-status')
    symlinkSync(BUILT, link)
    const res = await spawnCli(['--help'], { env: { DATABASE_URL: UNREACHABLE }, script: link })
    t.equal(res.code, 0, 'the built command exits 0')
    t.match(res.stdout, /usage: site-status COMMAND/, 'and prints its help')
  }
)

t.test('site-status agent refuses a bad start with one line, naming what is wrong', async (t) => {
  const nats = 'nats://agent-fra1:hunter2@127.0.0.1:1'
  const cases: Array<[string[], Record<string, string>, RegExp, number]> = [
    [['agent'], { NATS_URL: nats }, /^site-status: agent needs --location ID \(see site-status --help\)$/, 2],
    [['agent', '--location', 'Fra.1'], { NATS_URL: nats }, /^site-status: --location: "Fra\.1" must be 1 to 32 lower-case/, 1],
    [['agent', '--location', 'fra1'], {}, /^site-status: invalid configuration: NATS_URL: required by the agent$/, 1],
    [
      ['agent', '--location', 'fra1'],
      { NATS_URL: nats, PROBE_TIMEOUT_MS: 'soon' },
      /^site-status: invalid configuration: PROBE_TIMEOUT_MS: /,
      1
    ],
    [['agent', '--location', 'fra1'], { NATS_URL: 'http://x:4222' }, /^site-status: invalid configuration: NATS_URL: must be nats:\/\//, 1],
    // Not the agent's variable: left alone.
    [['agent', '--location', 'fra1'], { NATS_URL: nats, PORT: 'none' }, /^site-status: cannot reach NATS at NATS_URL$/, 1]
  ]
  for (const [args, env, message, code] of cases) {
    const res = await spawnCli(args, { env })
    t.equal(res.code, code, `${args.join(' ')} ${JSON.stringify(env)}: exits ${code}`)
    t.equal(lines(res.stderr).length, 1, 'one stderr line')
    t.match(res.stderr.trimEnd(), message)
    t.notMatch(res.stderr, /hunter2/, 'never the password')
    t.notOk(hasStackTrace(res.stderr), 'no stack trace')
  }
})
