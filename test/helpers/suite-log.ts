import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * Every log line any test of the suite sees (servers' loggers through LogCapture, the operator
 * tool's pino output) is also appended here, one file per test process, so that the `after` hook
 * can prove that no line of the whole suite carries a key or an Authorization header.
 */
export const SUITE_LOG_DIR = fileURLToPath(new URL('../../.tap/suite-logs/', import.meta.url))

let file: string | undefined

export function recordLogLines(lines: readonly string[]): void {
  if (lines.length === 0) return
  if (file === undefined) {
    mkdirSync(SUITE_LOG_DIR, { recursive: true })
    file = join(SUITE_LOG_DIR, `${process.pid}.log`)
  }
  appendFileSync(file, lines.map((l) => `${l}\n`).join(''))
}

/** The pino lines of a command's output (the key `keys create` prints is output, not a log line). */
export function logLinesOf(output: string): string[] {
  return output.split('\n').filter((line) => /^\{.*"level":/.test(line))
}

/** Anything that looks like a key or a credential header, whatever the line's shape. */
const SECRET = /ssk_[A-Za-z0-9_-]{20,}|authorization|bearer\s+\S/i

/** The lines that leak a secret, with the file they came from. */
export function findSecrets(lines: ReadonlyArray<{ file: string; line: string }>): Array<{ file: string; line: string }> {
  return lines.filter(({ line }) => SECRET.test(line))
}

export function readSuiteLog(): Array<{ file: string; line: string }> {
  let files: string[]
  try { files = readdirSync(SUITE_LOG_DIR) } catch { return [] }
  return files.flatMap((f) => readFileSync(join(SUITE_LOG_DIR, f), 'utf8').split('\n').filter(Boolean).map((line) => ({ file: f, line })))
}

export function clearSuiteLog(): void {
  rmSync(SUITE_LOG_DIR, { recursive: true, force: true })
}
