import type { Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { resolve } from 'node:path'
import { Writable } from 'node:stream'
import { run } from '../../lib/cli/index.js'
import { CLI_FILE, ROOT } from './compiled.js'
import { logLinesOf, recordLogLines, recordOutputOf } from './suite-log.js'

/** The project root: the real command runs from here, as `npm run cli` does. */
export { ROOT }

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
  /** Wall time of the whole command, start-up included. */
  ms: number
}

/** A minimal environment for the real command: PATH, quiet logs, and whatever the test sets. */
export function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LOG_LEVEL: 'silent',
    ...extra
  }
}

/**
 * Runs the real `site-status` command, compiled (test/helpers/compiled.ts), as a child process.
 * `script` is another compiled file to run; `closeStdout` closes the reading end of its stdout at
 * once, as `| head -1` does.
 */
export function spawnCli(
  args: string[],
  {
    env,
    input,
    script = CLI_FILE,
    closeStdout = false
  }: { env: Record<string, string>; input?: string; script?: string; closeStdout?: boolean }
): Promise<CliResult> {
  const started = Date.now()
  const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: cliEnv(env), stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  if (closeStdout) child.stdout.destroy()
  else
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
    })
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d
  })
  child.stdin.on('error', () => {})
  child.stdin.end(input)
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => {
      recordLogLines([...logLinesOf(stdout), ...logLinesOf(stderr)])
      resolve({ code, stdout, stderr, ms: Date.now() - started })
    })
  })
}

/** A stream that keeps what was written to it; `isTTY` makes it look like a terminal. */
export class Capture extends Writable {
  text = ''
  isTTY?: boolean
  constructor(isTTY = false) {
    super()
    if (isTTY) this.isTTY = true
  }

  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.text += chunk.toString()
    done()
  }
}

/** Runs a command in-process through `run(argv, io)`: the same code, without a start-up per case. */
export async function runCli(
  args: string[],
  { env, stderrTTY = false }: { env: Record<string, string>; stderrTTY?: boolean }
): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Capture()
  const stderr = new Capture(stderrTTY)
  const code = await run(args, { stdout, stderr, env: { LOG_LEVEL: 'silent', ...env }, now: () => new Date() })
  recordLogLines([...logLinesOf(stdout.text), ...logLinesOf(stderr.text)])
  return { code, stdout: stdout.text, stderr: stderr.text }
}

/** The lines of an output, without the empty one after its final newline. */
export function lines(text: string): string[] {
  const all = text.split('\n')
  if (all[all.length - 1] === '') all.pop()
  return all
}

/** True when some line looks like a stack frame, which an operator must never see. */
export function hasStackTrace(text: string): boolean {
  return /^\s{4}at /m.test(text)
}

/**
 * Starts `site-status serve` as a real process (compiled, or `script`, another compiled file) with
 * only PATH, PORT=0 and `env`; resolves with its address once it listens. All it writes goes to
 * the suite-wide log check.
 */
export async function startServe(
  t: Test,
  {
    env,
    cwd,
    script = CLI_FILE,
    startMs = 60_000
  }: { env: Record<string, string>; cwd: string; script?: string; /** How long it may take to listen. */ startMs?: number }
): Promise<{ child: ChildProcess; uri: string; output: () => string }> {
  const child = spawn(process.execPath, [resolve(ROOT, script), 'serve'], {
    cwd,
    env: { PATH: process.env.PATH, PORT: '0', ...env },
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
    const timer = setTimeout(() => {
      reject(new Error(`serve did not start: ${out}`))
    }, startMs)
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /"uri":"(http:\/\/[^"]+)".*"msg":"listening"/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m[1] as string)
      }
    })
    child.once('exit', () => {
      reject(new Error(`serve exited early: ${out}`))
    })
  })
  return { child, uri, output: () => out }
}
