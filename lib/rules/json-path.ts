/**
 * A small JSONPath, parsed once and evaluated within a bound: `$`, `.name`, `['name']`, `[0]`,
 * `[-1]`, `.*` and `[*]`, and `..name` (recursive descent). No filters or script expressions: a
 * path is data, never code. Evaluation visits at most {@link MAX_VISITS} values and keeps at most
 * {@link MAX_MATCHES}, whatever the document, so a 1 MiB body costs its parse and no more.
 */

/** Values one evaluation may look at, at most. */
export const MAX_VISITS = 100_000
/** Values one evaluation may return, at most (the first ones in document order). */
export const MAX_MATCHES = 1000
/** The longest path taken. */
export const MAX_PATH_LENGTH = 256

type Step = { kind: 'name'; name: string } | { kind: 'index'; index: number } | { kind: 'all' } | { kind: 'descend'; name: string | null }

export type JsonPath = readonly Step[]

const NAME = /^[A-Za-z_$][\w$-]*/

/** Parses a path; null when it is not one this evaluator reads. */
export function parseJsonPath(text: string): JsonPath | null {
  if (text.length > MAX_PATH_LENGTH || !text.startsWith('$')) return null
  const steps: Step[] = []
  let i = 1
  while (i < text.length) {
    const rest = text.slice(i)
    if (rest.startsWith('..')) {
      const name = NAME.exec(rest.slice(2))?.[0]
      if (rest[2] === '*') {
        steps.push({ kind: 'descend', name: null })
        i += 3
      } else if (name !== undefined) {
        steps.push({ kind: 'descend', name })
        i += 2 + name.length
      } else return null
    } else if (rest.startsWith('.*')) {
      steps.push({ kind: 'all' })
      i += 2
    } else if (rest.startsWith('.')) {
      const name = NAME.exec(rest.slice(1))?.[0]
      if (name === undefined) return null
      steps.push({ kind: 'name', name })
      i += 1 + name.length
    } else if (rest.startsWith('[*]')) {
      steps.push({ kind: 'all' })
      i += 3
    } else if (rest.startsWith('[')) {
      const quoted = /^\[(['"])((?:\\.|(?!\1)[^\\])*)\1\]/.exec(rest)
      const index = /^\[(-?\d{1,9})\]/.exec(rest)
      if (quoted !== null) {
        steps.push({ kind: 'name', name: (quoted[2] ?? '').replace(/\\(.)/g, '$1') })
        i += quoted[0].length
      } else if (index !== null) {
        steps.push({ kind: 'index', index: Number(index[1]) })
        i += index[0].length
      } else return null
    } else return null
  }
  return steps
}

/** The values `path` selects in `document`, in document order, within the bounds. */
export function evaluateJsonPath(path: JsonPath, document: unknown): unknown[] {
  let visits = 0
  let current: unknown[] = [document]
  for (const step of path) {
    const next: unknown[] = []
    const add = (value: unknown): boolean => {
      if (next.length >= MAX_MATCHES) return false
      next.push(value)
      return true
    }
    for (const value of current) {
      if (++visits > MAX_VISITS) return next
      if (step.kind === 'descend') {
        // Depth first, in document order, every value below (itself included) looked at once.
        const stack: unknown[] = [value]
        while (stack.length > 0) {
          if (++visits > MAX_VISITS) return next
          const node = stack.pop()
          if (typeof node !== 'object' || node === null) continue
          const children = Array.isArray(node) ? node : Object.values(node as Record<string, unknown>)
          if (step.name === null) {
            for (const child of children) if (!add(child)) return next
          } else if (!Array.isArray(node) && Object.hasOwn(node, step.name)) {
            if (!add((node as Record<string, unknown>)[step.name])) return next
          }
          for (let c = children.length - 1; c >= 0; c--) stack.push(children[c])
        }
      } else if (typeof value === 'object' && value !== null) {
        if (step.kind === 'all') {
          for (const child of Array.isArray(value) ? value : Object.values(value as Record<string, unknown>)) if (!add(child)) return next
        } else if (step.kind === 'index' && Array.isArray(value)) {
          const at = step.index < 0 ? value.length + step.index : step.index
          if (at >= 0 && at < value.length) add(value[at])
        } else if (step.kind === 'name' && !Array.isArray(value) && Object.hasOwn(value, step.name)) {
          add((value as Record<string, unknown>)[step.name])
        }
      }
    }
    current = next
  }
  return current
}
