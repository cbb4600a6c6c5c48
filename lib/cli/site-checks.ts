import type { Config } from '../../config/index.js'
import { ASSERTION_SOURCES, COMPARISONS } from '../rules/assertions.js'
import { checkSchema, type CheckSpec } from '../rules/check-spec.js'
import { validated } from '../rules/validated.js'
import { sealCheck } from '../monitoring/check-secrets.js'
import { SecretBox } from '../webhooks/secret-box.js'
import { UsageError } from './io.js'

/** The request flags of `sites add` and `sites set`: a site's own http check, as the sites API's `check`. */
export const CHECK_OPTIONS = {
  method: { type: 'string' },
  path: { type: 'string' },
  header: { type: 'string', multiple: true },
  'secret-header': { type: 'string', multiple: true },
  body: { type: 'string' },
  assert: { type: 'string', multiple: true }
} as const

export const CHECK_HELP = `the site's own request (replaces its check whole; --clear check: back to GET /):
  --method M               GET (default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS
  --path P                 the path and query to ask, from / (default /)
  --header 'NAME: VALUE'   a request header; may be repeated (Authorization and Cookie are secrets)
  --secret-header NAME     one more header whose value is a secret: stored sealed, shown ********
  --body TEXT              the request body (at most 16 KiB; not with GET or HEAD)
  --assert 'SOURCE [PROPERTY] COMPARISON [TARGET]'
                           e.g. 'json_body $.status equals ok', 'status_code less_than 400',
                           'header content-type contains json', 'text_body not_empty'; may be repeated`

interface CheckFlags {
  method?: string
  path?: string
  header?: string[]
  'secret-header'?: string[]
  body?: string
  assert?: string[]
}

/** Sources whose first word after them is a property (a header's name, a JSONPath). */
const WITH_PROPERTY = new Set<string>(['header', 'json_body'])

/**
 * One `--assert` as the API's assertion: `SOURCE [PROPERTY] COMPARISON [TARGET]`, words split on
 * spaces, the target the rest of the line as written. The API's rules judge the result.
 */
export function parseAssertion(text: string): Record<string, unknown> {
  const words = text.trim().split(/\s+/)
  const source = words.shift() ?? ''
  if (!(ASSERTION_SOURCES as readonly string[]).includes(source))
    throw new UsageError(`--assert: "${source.slice(0, 40)}" is not a source (one of ${ASSERTION_SOURCES.join(', ')})`)
  const property = WITH_PROPERTY.has(source) ? words.shift() : undefined
  const comparison = words.shift() ?? ''
  if (!(COMPARISONS as readonly string[]).includes(comparison))
    throw new UsageError(`--assert: "${comparison.slice(0, 40)}" is not a comparison (one of ${COMPARISONS.join(', ')})`)
  const rest = text
    .trim()
    .split(/\s+/)
    .slice(property === undefined ? 2 : 3)
    .join(' ')
  return { source, ...(property === undefined ? {} : { property }), comparison, ...(rest === '' ? {} : { target: rest }) }
}

/** The flags as a site's check (normal form), null for `--clear check`, undefined when none is given. */
export function checkOfFlags(values: CheckFlags, clear: boolean): CheckSpec | null | undefined {
  const given = Object.keys(CHECK_OPTIONS).some((flag) => values[flag as keyof CheckFlags] !== undefined)
  if (clear) {
    if (given) throw new UsageError('--clear check goes alone: the request flags set a new check')
    return null
  }
  if (!given) return undefined
  const headers: Record<string, string> = {}
  for (const line of values.header ?? []) {
    const colon = line.indexOf(':')
    if (colon <= 0) throw new UsageError(`--header takes 'NAME: VALUE', not "${line.slice(0, 40)}"`)
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim()
  }
  const check = {
    type: 'http',
    ...(values.method === undefined ? {} : { method: values.method.toUpperCase() }),
    ...(values.path === undefined ? {} : { path: values.path }),
    headers,
    secret_headers: values['secret-header'] ?? [],
    ...(values.body === undefined ? {} : { body: values.body }),
    assertions: (values.assert ?? []).map(parseAssertion)
  }
  const result = validated<CheckSpec>(checkSchema, check)
  if (!result.ok) throw new UsageError(result.error)
  return result.value
}

/** The check as stored: its secret header values sealed with the service's key (WEBHOOK_KEY or its key file). */
export function storedCheck(check: CheckSpec | null, config: Config): string | null {
  if (check === null) return null
  return sealCheck(check, new SecretBox({ key: config.webhookKey, keyFile: config.webhookKeyFile }))
}
