import v8 from 'node:v8'

/**
 * How far, in percent, V8 lets the old generation grow past what the last full collection found
 * alive before it collects again (`--heap-growing-percent`; V8's own factor goes up to 4x).
 */
export const HEAP_GROWING_PERCENT = 50

/**
 * Keeps the heap near what is alive: the service's scheduled checks live about a second, long
 * enough to be promoted out of the young generation, and die in the old one, which V8's own growing
 * factor lets grow to several times what is alive before it collects (docs/decisions.md,
 * Monitoring). The setting is process-wide (the actor threads too) and read at every collection, so
 * setting it at start takes effect. An operator's own `--heap-growing-percent` (on the command line
 * or in NODE_OPTIONS) is left as it is. Returns whether it was set here.
 */
export function keepHeapCompact(argv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  const own = [...argv, ...nodeOptions.split(/\s+/)].some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))
  if (own) return false
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
  return true
}
