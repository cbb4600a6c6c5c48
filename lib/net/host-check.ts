import { isIP } from 'node:net'
import { isAllowedAddress, NON_PUBLIC_ERROR, stripHost, type HostCheck, type TargetPolicy } from '../rules/target-policy.js'
import { createResolver, type Resolve } from './resolver.js'

const DNS_CODES: Readonly<Record<string, string>> = {
  ENOTFOUND: 'NXDOMAIN',
  ENODATA: 'NODATA',
  EAI_NODATA: 'NODATA',
  EAI_AGAIN: 'SERVFAIL',
  ESERVFAIL: 'SERVFAIL',
  ETIMEOUT: 'TIMEOUT',
  ECONNREFUSED: 'REFUSED',
  EREFUSED: 'REFUSED'
}

let systemResolve: Resolve | undefined
/** The system's resolvers through c-ares, for callers that bring no look-up of their own. */
function defaultLookup(host: string): Promise<string[]> {
  systemResolve ??= createResolver({ timeoutMs: 5000 })
  return systemResolve(host)
}

/** The look-up, failing with ETIMEOUT once `ms` have passed without an answer. */
async function lookupWithin(lookup: Resolve, name: string, ms: number | undefined): Promise<string[]> {
  if (ms === undefined) return lookup(name)
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(Object.assign(new Error(`no DNS answer in ${ms} ms`), { code: 'ETIMEOUT' }))
    }, ms)
  })
  try {
    return await Promise.race([lookup(name), late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * How {@link checkHost} looks names up: `lookup` resolves them (the service passes its c-ares
 * resolver for DNS_SERVERS, tests their own; default: the system's resolvers through c-ares), and
 * past `timeoutMs` the look-up fails as a DNS timeout.
 */
export interface HostLookup {
  lookup?: Resolve
  timeoutMs?: number
}

function dnsFailure(code: string): HostCheck {
  return { ok: false, reason: 'dns', error: `domain does not resolve (${code})`, code }
}

/**
 * Resolves `host` and refuses it when any address is non-public, so a name with one public and one
 * private record cannot be used to reach the private one. DNS failures are reported, not thrown:
 * the caller decides what they mean (for a check, a `down` verdict rather than a 400).
 */
export async function checkHost(
  host: string,
  policy: TargetPolicy,
  { lookup = defaultLookup, timeoutMs }: HostLookup = {}
): Promise<HostCheck> {
  const name = stripHost(host.trim())
  let addresses: string[]
  if (isIP(name) !== 0) {
    addresses = [name]
  } else {
    try {
      addresses = await lookupWithin(lookup, name, timeoutMs)
    } catch (err) {
      const raw = (err as NodeJS.ErrnoException | undefined)?.code
      return dnsFailure((raw !== undefined && DNS_CODES[raw]) || raw || 'DNS_ERROR')
    }
    if (addresses.length === 0) return dnsFailure('NODATA')
  }
  if (!addresses.every((a) => isAllowedAddress(a, policy))) {
    return { ok: false, reason: 'non_public', error: NON_PUBLIC_ERROR }
  }
  return { ok: true, addresses }
}
