import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chooseLogFormat, createLogger } from '../../lib/logger.js'
import { Capture, ROOT } from '../helpers/cli.js'
import { recordOutputOf } from '../helpers/suite-log.js'

t.test('the log format: LOG_FORMAT when set, else pretty on a terminal and JSON elsewhere', async (t) => {
  const rows: Array<[Parameters<typeof chooseLogFormat>[0], boolean, 'json' | 'pretty']> = [
    [null, false, 'json'],
    [null, true, 'pretty'],
    ['pretty', false, 'pretty'],
    ['pretty', true, 'pretty'],
    ['json', true, 'json'],
    ['json', false, 'json']
  ]
  for (const [setting, tty, want] of rows)
    t.equal(chooseLogFormat(setting, tty), want, `LOG_FORMAT=${setting ?? 'unset'}, terminal: ${tty}`)
})

t.test('pretty lines are for people; colours only on a terminal', async (t) => {
  for (const tty of [false, true]) {
    const out = new Capture(tty)
    const logger = createLogger({ level: 'info', stream: out, format: 'pretty' })
    logger.info({ uri: 'http://127.0.0.1:3000' }, 'listening')
    logger.debug('not at info')
    // eslint-disable-next-line no-control-regex
    const text = out.text.replace(/\u001b\[[0-9;]*m/g, '')
    t.notMatch(text, /^\{/m, 'no JSON line')
    t.match(text, /INFO.*listening/, 'the level and the message on one line')
    t.match(text, /uri: "http:\/\/127\.0\.0\.1:3000"/, 'the fields below it')
    t.notMatch(text, /not at info/, 'the level still filters')
    // eslint-disable-next-line no-control-regex
    t.equal(/\u001b\[/.test(out.text), tty, tty ? 'coloured on a terminal' : 'no escape codes in a file or pipe')
  }
  const json = new Capture(true)
  createLogger({ level: 'info', stream: json, format: 'json' }).info('plain')
  t.match(JSON.parse(json.text), { msg: 'plain', level: 30 }, 'json stays one JSON object a line, even on a terminal')
})

t.test('serve with LOG_FORMAT=pretty writes pretty lines, to its stop', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-status-pretty-'))
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  // The build, as npm start runs it (npm test builds first).
  const child = spawn(process.execPath, [resolve(ROOT, 'dist/lib/cli/index.js'), 'serve'], {
    cwd: dir,
    env: { PATH: process.env.PATH, PORT: '0', LOG_FORMAT: 'pretty' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  recordOutputOf(child.stdout)
  recordOutputOf(child.stderr)
  let out = ''
  child.stderr.on('data', (c: Buffer) => {
    out += c.toString()
  })
  const uri = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /INFO[^\n]*: listening\n(?:\s+[^\n]*\n)*?\s+uri: "(http:\/\/[^"]+)"/.exec(out)
      if (m) resolve(m[1] as string)
    })
    child.once('exit', () => {
      reject(new Error(`serve exited early: ${out}`))
    })
  })
  t.equal((await fetch(`${uri}/healthz`)).status, 200, 'it serves')
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0)
  t.match(out, /INFO[^\n]*: stopped\n/, 'the last line, written before the exit')
  t.notMatch(out, /^\{/m, 'no JSON line anywhere')
})
