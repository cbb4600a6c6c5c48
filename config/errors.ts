/** A bad value in the environment: the start stops with its one-line message, which names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Messages quote operator input; escape line breaks and other control characters so the error stays one line. */
export function oneLine(text: string): string {
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
