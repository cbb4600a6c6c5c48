import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { fileURLToPath } from 'node:url'

/**
 * Every log line any test of the suite sees (servers' loggers through LogCapture, the operator
 * tool's pino output, everything a spawned server writes) is also appended here, one file per test
 * process, so that the `after` hook can prove that no line of the whole suite carries a key or an
 * Authorization header. SUITE_LOG_DIR moves it (the test of the hook itself plants lines elsewhere).
 */
export const SUITE_LOG_DIR = process.env.SUITE_LOG_DIR ?? fileURLToPath(new URL('../../.tap/suite-logs/', import.meta.url))

let file: string | undefined

export function recordLogLines(lines: readonly string[]): void {
  if (lines.length === 0) return
  file ??= join(SUITE_LOG_DIR, `${process.pid}.log`)
  const text = lines.map((l) => `${l}\n`).join('')
  try {
    appendFileSync(file, text)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    // Not made yet, or removed by the `before` hook of a tap run that started since (several runs
    // can share the tree): a log line must never be lost to that.
    mkdirSync(SUITE_LOG_DIR, { recursive: true })
    appendFileSync(file, text)
  }
}

/**
 * Records every line a spawned server writes to `stream` (stdout or stderr), as it comes: all of a
 * server's output is log, whatever its shape, and lines are kept even if the test fails later.
 */
export function recordOutputOf(stream: Readable): void {
  const decoder = new StringDecoder('utf8')
  let rest = ''
  stream.on('data', (chunk: Buffer | string) => {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk))
    const lines = text.split('\n')
    rest = lines.pop() ?? ''
    recordLogLines(lines.filter((l) => l.trim() !== ''))
  })
  stream.once('end', () => {
    const last = rest + decoder.end()
    rest = ''
    if (last.trim() !== '') recordLogLines([last])
  })
}

/** The pino lines of a command's output (the key `keys create` prints is output, not a log line). */
export function logLinesOf(output: string): string[] {
  return output.split('\n').filter((line) => /^\{.*"level":/.test(line))
}

/** Anything that looks like a key, a webhook secret or a credential header, whatever the line's shape. */
const SECRET = /ssk_[A-Za-z0-9_-]{20,}|whsec_[A-Za-z0-9+/]{20,}|authorization|bearer\s+\S/i

/** The lines that leak a secret, with the file they came from. */
export function findSecrets(lines: ReadonlyArray<{ file: string; line: string }>): Array<{ file: string; line: string }> {
  return lines.filter(({ line }) => SECRET.test(line))
}

export function readSuiteLog(): Array<{ file: string; line: string }> {
  let files: string[]
  try {
    files = readdirSync(SUITE_LOG_DIR)
  } catch {
    return []
  }
  return files.flatMap((f) =>
    readFileSync(join(SUITE_LOG_DIR, f), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => ({ file: f, line }))
  )
}

export function clearSuiteLog(): void {
  rmSync(SUITE_LOG_DIR, { recursive: true, force: true })
}
