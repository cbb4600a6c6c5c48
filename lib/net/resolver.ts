import { Resolver } from 'node:dns/promises'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import type { Config } from '../../config/index.js'

/** Resolves a host name to its addresses (IPv4 first), or rejects with a DNS error code. */
export type Resolve = (host: string) => Promise<string[]>

/** Error codes a {@link Resolve} from {@link createResolver} rejects with. */
export type DnsErrorCode = 'ENOTFOUND' | 'ENODATA' | 'ETIMEOUT' | 'ESERVFAIL' | 'EREFUSED'

export interface ResolverOptions {
  /** `ip[:port]` resolvers (DNS_SERVERS); empty or absent: the system's (resolv.conf). */
  servers?: readonly string[]
  /** The whole look-up's budget, both families and every retry included; it fails as ETIMEOUT past it. */
  timeoutMs: number
  /** Names answered from a table before DNS is asked; default: this machine's hosts file, read once. */
  hosts?: ReadonlyMap<string, readonly string[]>
  /**
   * How long to wait for the other family once one has answered with addresses (RFC 8305's
   * "Resolution Delay"): a resolver that drops AAAA queries must not cost every probe its timeout.
   */
  graceMs?: number
}

/**
 * The resolver settings of the probing side, plain data so that they reach every actor thread
 * whole: DNS_SERVERS and the look-up budget a probe deadline leaves ({@link dnsTimeoutFor}).
 */
export interface DnsSettings {
  readonly servers: readonly string[]
  readonly timeoutMs: number
}

/** RFC 8305 recommends 50 ms. */
const RESOLUTION_DELAY_MS = 50
const LOOPBACK = ['127.0.0.1', '::1'] as const

/** The look-up budget a probe deadline leaves to DNS: half, so that a hung resolver still leaves an answer in time. */
export function dnsTimeoutFor(probeTimeoutMs: number): number {
  return Math.max(50, Math.floor(probeTimeoutMs / 2))
}

/** DNS_SERVERS and PROBE_TIMEOUT_MS as the resolver settings of the probing side (the central's and an agent's). */
export function probeDns(config: Pick<Config, 'dnsServers' | 'probeTimeoutMs'>): DnsSettings {
  return Object.freeze({ servers: config.dnsServers, timeoutMs: dnsTimeoutFor(config.probeTimeoutMs) })
}

/** `/etc/hosts` as a table of lower-case names to addresses, as getaddrinfo would read it. */
export function readHostsFile(path = '/etc/hosts'): Map<string, string[]> {
  const table = new Map<string, string[]>()
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return table
  }
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*/, '').trim().split(/\s+/)
    if (address === undefined || isIP(address.replace(/%.*$/, '')) === 0) continue
    for (const name of names) {
      const key = name.toLowerCase()
      const list = table.get(key) ?? []
      if (!list.includes(address)) list.push(address)
      table.set(key, list)
    }
  }
  return table
}

function dnsError(code: DnsErrorCode, host: string): Error {
  return Object.assign(new Error(`DNS ${code} for ${host}`), { code })
}

/**
 * Set on a look-up's error when the resolver itself failed rather than the name: it refused, did
 * not answer in time, or answered SERVFAIL for the root zone too. A probe reports that as its
 * location's failure (`error`), never as the site's `down`.
 */
export const RESOLVER_FAILED = 'resolverFailed'

/** How long a verdict on the resolver (its answer about the root zone) is kept. */
const RESOLVER_VERDICT_MS = 5000

/** c-ares' codes folded into the few a probe reports; a resolver that cannot be reached is REFUSED. */
function codeOf(err: unknown): DnsErrorCode {
  const code = (err as { code?: unknown } | null)?.code
  switch (code) {
    case 'ENOTFOUND':
    case 'ENODATA':
    case 'ETIMEOUT':
    case 'ESERVFAIL':
    case 'EREFUSED':
      return code
    case 'ECONNREFUSED':
      return 'EREFUSED'
    case 'ENONAME':
    case 'EBADNAME':
      return 'ENOTFOUND'
    default:
      return 'ESERVFAIL'
  }
}

type Family = string[] | DnsErrorCode

/**
 * A's and AAAA's answers combined as a browser combines them: the addresses of both (IPv4 first,
 * which is what a dialler that tries one address wants on a machine without IPv6 routes); when
 * neither has any, NXDOMAIN if either said so, NODATA if both did, otherwise A's failure.
 */
function combine(a: Family | undefined, aaaa: Family | undefined, host: string): string[] {
  const found = [...(Array.isArray(a) ? a : []), ...(Array.isArray(aaaa) ? aaaa : [])]
  if (found.length > 0) return found
  const codes = [a, aaaa].filter((f): f is DnsErrorCode => typeof f === 'string')
  if (codes.includes('ENOTFOUND')) throw dnsError('ENOTFOUND', host)
  if (Array.isArray(a) || Array.isArray(aaaa) || codes.every((c) => c === 'ENODATA')) throw dnsError('ENODATA', host)
  throw dnsError(typeof a === 'string' ? a : (codes[0] ?? 'ETIMEOUT'), host)
}

/**
 * Name resolution through c-ares (`dns.Resolver`), never `dns.lookup`: libuv's four pool threads are
 * shared with file I/O and the database driver, and a resolver that never answers would hold one
 * each. Here a look-up costs a pending query and a timer, and fails as ETIMEOUT at `timeoutMs`.
 * `localhost` and `*.localhost` are loopback (RFC 6761); the hosts table comes before DNS.
 */
export function createResolver(opts: ResolverOptions): Resolve {
  const { timeoutMs } = opts
  const graceMs = opts.graceMs ?? RESOLUTION_DELAY_MS
  const hosts = opts.hosts ?? readHostsFile()
  // Two tries of half the budget each (a lost UDP packet is retried); our own timer enforces the budget exactly.
  const resolver = new Resolver({ timeout: Math.max(1, Math.ceil(timeoutMs / 2)), tries: 2 })
  if (opts.servers !== undefined && opts.servers.length > 0) resolver.setServers([...opts.servers])
  // SERVFAIL may be the name's (its servers broken, DNSSEC) or the resolver's own: the root zone
  // tells them apart, asked at most once every few seconds.
  let verdict: { at: number; broken: Promise<boolean> } | null = null
  const resolverBroken = (): Promise<boolean> => {
    const now = performance.now()
    if (verdict === null || now - verdict.at > RESOLVER_VERDICT_MS) {
      const timer = new Promise<boolean>((resolve) => setTimeout(resolve, timeoutMs, true).unref())
      verdict = {
        at: now,
        broken: Promise.race([
          resolver.resolveNs('.').then(
            () => false,
            (err: unknown) => ['ESERVFAIL', 'ETIMEOUT', 'EREFUSED'].includes(codeOf(err))
          ),
          timer
        ])
      }
    }
    return verdict.broken
  }
  const marked = async (err: unknown): Promise<never> => {
    const code = (err as { code?: unknown }).code
    const ours = code === 'ETIMEOUT' || code === 'EREFUSED' || (code === 'ESERVFAIL' && (await resolverBroken()))
    throw ours ? Object.assign(err as Error, { [RESOLVER_FAILED]: true }) : err
  }

  return (rawHost) => {
    const host = rawHost.toLowerCase().replace(/\.$/, '')
    if (isIP(host) !== 0) return Promise.resolve([host])
    if (host === 'localhost' || host.endsWith('.localhost')) return Promise.resolve([...LOOPBACK])
    const listed = hosts.get(host)
    if (listed !== undefined) return Promise.resolve([...listed])
    return lookUp(host).catch(marked)
  }

  function lookUp(host: string): Promise<string[]> {
    return new Promise<string[]>((resolve, reject) => {
      let a: Family | undefined
      let aaaa: Family | undefined
      let over = false
      let grace: NodeJS.Timeout | undefined
      const finish = (): void => {
        if (over) return
        over = true
        clearTimeout(deadline)
        clearTimeout(grace)
        try {
          resolve(combine(a, aaaa, host))
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)))
        }
      }
      const answered = (): void => {
        if (a !== undefined && aaaa !== undefined) finish()
        else if (grace === undefined && (Array.isArray(a) || Array.isArray(aaaa))) grace = setTimeout(finish, graceMs)
      }
      const deadline = setTimeout(() => {
        a ??= 'ETIMEOUT'
        aaaa ??= 'ETIMEOUT'
        finish()
      }, timeoutMs)
      // Neither chain can reject: each failure is turned into its code.
      void resolver
        .resolve4(host)
        .then(
          (found) => {
            a = found
          },
          (err: unknown) => {
            a = codeOf(err)
          }
        )
        .then(answered)
      void resolver
        .resolve6(host)
        .then(
          (found) => {
            aaaa = found
          },
          (err: unknown) => {
            aaaa = codeOf(err)
          }
        )
        .then(answered)
    })
  }
}
