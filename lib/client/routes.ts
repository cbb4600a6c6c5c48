/**
 * What the document says of its routes in words and the generated types cannot carry: which take
 * no key, what a call costs, which are never retried. Keyed by the document's paths, so a route
 * renamed there breaks these tables' compile too; test/lib/client/routes.test.ts holds them
 * against the document.
 */
import type { PathTemplate } from './types.js'

/** Units per check (the document's info.description: a check costs 5, `rate_limit` nothing, the rest 1). */
export const CHECK_COST = 5

/** The routes whose operations take no key (`security: []`): they go without Authorization, outside the budget. */
const OPEN: ReadonlySet<string> = new Set<PathTemplate>([
  '/healthz',
  '/api/v1/openapi.json',
  '/api/v1/config.schema.json',
  '/api/badge/{domain}',
  '/api/badge/{domain}/endpoint',
  '/api/badge/page/{slug}',
  '/api/badge/{domain}/uptime',
  '/api/badge/{domain}/uptime/endpoint',
  '/api/badge/{domain}/response-time',
  '/api/badge/{domain}/response-time/endpoint',
  '/api/badge/{domain}/chart.svg',
  '/api/badge/page/{slug}/endpoint',
  '/api/badge/page/{slug}/uptime',
  '/api/badge/page/{slug}/uptime/endpoint',
  '/api/badge/page/{slug}/response-time',
  '/api/badge/page/{slug}/response-time/endpoint',
  '/',
  '/sites/{domain}',
  '/status/{slug}',
  '/status/{slug}.json',
  '/status/{slug}/feed.atom',
  '/status/{slug}/events',
  '/ping/{token}',
  '/api/badge/heartbeat/{slug}',
  '/api/badge/heartbeat/{slug}/endpoint',
  '/api/badge/heartbeat/{slug}/uptime',
  '/api/badge/heartbeat/{slug}/uptime/endpoint',
  '/api/badge/monitor/{slug}',
  '/api/badge/monitor/{slug}/endpoint',
  '/ping/{token}/{signal}'
])

/** Keyed routes that cost other than 1 unit; a batch (`/api/v1/checks`) costs by its body (see {@link batchCost}). */
const COSTS: ReadonlyMap<string, number> = new Map<PathTemplate, number>([
  ['/api/v1/rate_limit', 0],
  ['/metrics', 0],
  ['/api/v1/check', CHECK_COST]
])

/** Routes never tried again: a 503 of /healthz is its answer (a degraded instance), not a wait. */
const NOT_RETRIED: ReadonlySet<string> = new Set<PathTemplate>(['/healthz'])

/** The batch route, whose cost is 5 per distinct domain of its body. */
export const BATCH_PATH: PathTemplate = '/api/v1/checks'

/** Whether calls to `path` carry the key (and so spend and report the key's budget). */
export const isKeyed = (path: string): boolean => !OPEN.has(path)

/** Whether a 429 or 503 of `path` (or no answer to its GET) is tried again. */
export const isRetried = (path: string): boolean => !NOT_RETRIED.has(path)

/** Units a call to `path` costs the key (a batch's are counted from its body apart). */
export const costOf = (path: string): number => COSTS.get(path) ?? 1

/**
 * What a batch costs: 5 per distinct valid entry (a domain, or a domain with its own check),
 * invalid ones nothing. The server judges the domains; this count only sets how many units the call
 * holds while under way (see batchDomain).
 */
export function batchCost(domains: readonly unknown[]): number {
  const distinct = new Set<string>()
  for (const entry of domains) {
    const object = typeof entry === 'object' && entry !== null ? (entry as { domain?: unknown; check?: unknown }) : null
    const domain = batchDomain(object === null ? entry : object.domain)
    if (domain !== undefined) distinct.add(object?.check === undefined ? domain : `${domain} ${JSON.stringify(object.check)}`)
  }
  return CHECK_COST * distinct.size
}

const SCHEME = /^https?:\/\//i
// ASCII outside letters, digits, hyphens and dots: a port, a path, user info, a space, a bracket.
const BAD_ASCII = /[^a-z0-9.\-\u0080-\uffff]/i
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/
// WHATWG "ends in a number": such a host is an IPv4 address (127.1, 0x7f000001).
const NUMERIC = /^(?:\d+|0x[0-9a-f]*)$/i

/**
 * The domain a batch entry stands for as the server would count it (lower case, punycode, no
 * trailing dot; an http(s) URL reduced to its host), or undefined when the server would refuse it.
 * The browser's own URL parser does the IDNA mapping; a rare entry judged otherwise only makes the
 * hold a check's units more or less than the server charges (docs/decisions.md, Client).
 */
export function batchDomain(entry: unknown): string | undefined {
  if (typeof entry !== 'string' || entry.length > 2048) return undefined
  let rest = entry.trim().replace(SCHEME, '')
  if (rest.endsWith('/')) rest = rest.slice(0, -1)
  if (rest === '' || BAD_ASCII.test(rest)) return undefined
  let host: string
  try {
    host = new URL(`http://${rest}/`).hostname
  } catch {
    return undefined
  }
  if (host.endsWith('.')) host = host.slice(0, -1)
  const labels = host.split('.')
  if (labels.length < 2 || host.length > 253 || NUMERIC.test(labels[labels.length - 1] ?? '')) return undefined
  return labels.every((label) => LABEL.test(label)) ? host : undefined
}
