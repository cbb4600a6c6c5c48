import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml'
import { checkConfigFile, pathText, type ConfigFile, type FileProblem } from './config-file.js'

/**
 * A configuration file's text (YAML, or JSON, which YAML reads too) to its normal form, or every
 * problem with the file, line and field it is at. Secrets come from the environment only: a value
 * written `${NAME}` is NAME's value; a value that holds a credential written out is refused, so a
 * file can be reviewed and committed as it is.
 */

/** The largest file read: 10,000 sites with settings come to about 2 MB of YAML. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024

/** One problem as a reader is told it: `sites.yaml:12: sites[3].interval_s: "interval_s" must be ...`. */
export interface LocatedProblem {
  file: string
  line: number | null
  field: string
  message: string
}

export type ParseResult = { ok: true; file: ConfigFile } | { ok: false; problems: LocatedProblem[] }

const ENV_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/
/**
 * Credentials a value may hold: a URL with a user name or password, a bearer header, and the
 * prefixes of well-known tokens (webhook signing secrets, Slack, GitHub, Stripe).
 */
const INLINE_SECRETS: readonly RegExp[] = [
  /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i,
  /^bearer\s+\S/i,
  /^(whsec_|xox[abpors]-|gh[pousr]_|sk_live_)/
]

export function problemText(p: LocatedProblem): string {
  return `${p.file}${p.line === null ? '' : `:${p.line}`}: ${p.field === '' ? '' : `${p.field}: `}${p.message}`
}

/** Puts each `${NAME}` in from `env` (noting where, in `fromEnv`); refuses credentials written out and names not set. */
function withSecrets(
  value: unknown,
  path: FileProblem['path'],
  env: Readonly<Record<string, string | undefined>>,
  problems: FileProblem[],
  fromEnv: Set<string>
): unknown {
  if (typeof value === 'string') {
    const ref = ENV_REF.exec(value)
    if (ref) {
      const name = ref[1] as string
      const found = env[name]
      fromEnv.add(pathText(path))
      if (found === undefined) problems.push({ path, message: `the environment variable ${name} is not set` })
      return found ?? ''
    }
    if (value.includes('${')) problems.push({ path, message: 'a value from the environment is written as the whole value, "${NAME}"' })
    else if (INLINE_SECRETS.some((re) => re.test(value.trim())))
      problems.push({ path, message: 'holds a secret written out; write "${NAME}" and set NAME in the environment' })
    return value
  }
  if (Array.isArray(value)) return value.map((v, i) => withSecrets(v, [...path, i], env, problems, fromEnv))
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withSecrets(v, [...path, k], env, problems, fromEnv)]))
  return value
}

/** The line of the deepest key or list entry the path reaches in the document. */
function lineOf(root: Node | null, path: FileProblem['path'], lines: LineCounter): number | null {
  let node: Node | null = root
  let line: number | null = root?.range ? lines.linePos(root.range[0]).line : null
  for (const step of path) {
    let next: Node | null = null
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && p.key.value === step)
      if (pair && isScalar(pair.key) && pair.key.range) line = lines.linePos(pair.key.range[0]).line
      next = pair && pair.value ? (pair.value as Node) : null
    } else if (isSeq(node) && typeof step === 'number') {
      next = (node.items[step] as Node | undefined) ?? null
      if (next?.range) line = lines.linePos(next.range[0]).line
    }
    if (next === null) break
    node = next
  }
  return line
}

/** Reads a file's text; `name` is what errors call it (its path as given). */
export function parseConfigText(text: string, name: string, env: Readonly<Record<string, string | undefined>>): ParseResult {
  if (Buffer.byteLength(text, 'utf8') > MAX_FILE_BYTES)
    return { ok: false, problems: [{ file: name, line: null, field: '', message: `the file is larger than ${MAX_FILE_BYTES} bytes` }] }
  const lines = new LineCounter()
  // No aliases: a file is data, and an alias bomb would make a small file huge in memory.
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false })
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((e) => ({
        file: name,
        line: e.linePos?.[0].line ?? lines.linePos(e.pos[0]).line,
        field: '',
        message: e.code === 'DUPLICATE_KEY' ? 'a key is written twice in one mapping' : `not valid YAML or JSON (${e.code})`
      }))
    }
  }
  const located = (problems: FileProblem[]): ParseResult => ({
    ok: false,
    problems: problems.map((p) => ({ file: name, line: lineOf(doc.contents, p.path, lines), field: pathText(p.path), message: p.message }))
  })
  let raw: unknown
  try {
    raw = doc.toJS({ maxAliasCount: 0 })
  } catch {
    return { ok: false, problems: [{ file: name, line: null, field: '', message: 'aliases are not allowed in a configuration file' }] }
  }
  const secretProblems: FileProblem[] = []
  const fromEnv = new Set<string>()
  const value = withSecrets(raw, [], env, secretProblems, fromEnv)
  if (secretProblems.length > 0) return located(secretProblems)
  const checked = checkConfigFile(value, fromEnv)
  return checked.ok ? checked : located(checked.problems)
}
