/** Where a command writes, so tests can run commands in-process and read what they printed. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
  env: NodeJS.ProcessEnv
  now: () => Date
}

export class UsageError extends Error {
  override name = 'UsageError'
}

/** A failure the operator can act on: printed as one line, exit code 1. */
export class CommandError extends Error {
  override name = 'CommandError'
}

export function println(stream: NodeJS.WritableStream, text = ''): void {
  stream.write(text + '\n')
}

/** Left-aligned columns with a header row, as `keys list` and `sites list` print them. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd()
  return [line(headers), ...rows.map(line)].join('\n')
}
