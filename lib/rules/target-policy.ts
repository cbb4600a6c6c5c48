import { BlockList, isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import type { Config } from '../../config/index.js'

/** Body text of the 400 answered when a target is refused. */
export const NON_PUBLIC_ERROR = 'domain resolves to a non-public address'

/** Body text of the 400 answered when a redirect led to a port other than 80 or 443. */
export const PORT_ERROR = 'domain redirects to a port other than 80 or 443'

/**
 * Why the target policy stopped one of a location's hops: a non-public address, or a redirect to
 * a port other than 80 or 443. A location reporting either makes the whole check a 400.
 */
export type PolicyRefusalCode = 'policy_non_public' | 'policy_port'

/** The 400's body text for each refusal. */
export const POLICY_ERRORS: Readonly<Record<PolicyRefusalCode, string>> = {
  policy_non_public: NON_PUBLIC_ERROR,
  policy_port: PORT_ERROR
}

/** The error text a location reports for each refusal. */
export const POLICY_REFUSALS: Readonly<Record<PolicyRefusalCode, string>> = {
  policy_non_public: `policy: ${NON_PUBLIC_ERROR}`,
  policy_port: `policy: ${PORT_ERROR}`
}

/** The error a location reports when the policy refused a non-public address. */
export const POLICY_REFUSAL = POLICY_REFUSALS.policy_non_public

/** The error a location reports when a redirect led to another port. */
export const PORT_REFUSAL = POLICY_REFUSALS.policy_port

/** Whether a location's error code is the target policy's refusal, and so the check's 400. */
export function isPolicyRefusal(code: string | null | undefined): code is PolicyRefusalCode {
  return code === 'policy_non_public' || code === 'policy_port'
}

/**
 * How a target address is judged: `allowPrivate` lifts the guard (ALLOW_PRIVATE_TARGETS=1);
 * `allowRanges` (CIDRs) lifts it for those ranges only, such as an intranet; `denyRanges` are
 * refused always. Plain data: the same value goes whole to the supervisor and to every actor thread.
 */
export interface TargetPolicy {
  readonly allowPrivate: boolean
  readonly allowRanges?: readonly string[]
  /** CIDRs never reached, public or not, whatever `allowPrivate` says (DENY_TARGETS). */
  readonly denyRanges?: readonly string[]
}

/** ALLOW_PRIVATE_TARGETS and DENY_TARGETS as the one value every part of the probing side judges by. */
export function targetPolicy(config: Pick<Config, 'allowPrivateTargets' | 'allowedTargetRanges' | 'deniedTargetRanges'>): TargetPolicy {
  return Object.freeze({
    allowPrivate: config.allowPrivateTargets,
    allowRanges: config.allowedTargetRanges,
    denyRanges: config.deniedTargetRanges
  })
}

/**
 * A list of CIDRs as a BlockList, with the answers it gave: each check builds a SocketAddress, which
 * cost a ping behind a proxy (two checks) about 4% of its CPU.
 */
interface RangeList {
  list: BlockList
  answers: Map<string, boolean>
}

/** Answers a list keeps at most (the clients behind a proxy are many); past it they start over. */
const ANSWERS_MAX = 4096

const rangeLists = new Map<string, RangeList>()

/** The RangeList of the given CIDRs, built once per distinct list. */
function rangeList(ranges: readonly string[]): RangeList {
  const key = ranges.join(',')
  let found = rangeLists.get(key)
  if (!found) {
    const list = new BlockList()
    for (const cidr of ranges) {
      const [net, bits] = cidr.split('/') as [string, string | undefined]
      const family = isIP(net) === 6 ? 'ipv6' : 'ipv4'
      list.addSubnet(net, bits === undefined ? (family === 'ipv6' ? 128 : 32) : Number(bits), family)
    }
    found = { list, answers: new Map() }
    rangeLists.set(key, found)
  }
  return found
}

/** Whether `ip` (an address, bracketed or bare) is inside one of the CIDR `ranges`. */
export function inRanges(ranges: readonly string[] | undefined, ip: string): boolean {
  if (ranges === undefined || ranges.length === 0) return false
  const { list, answers } = rangeList(ranges)
  const known = answers.get(ip)
  if (known !== undefined) return known
  const bare = stripHost(ip)
  const family = isIP(bare)
  const inside = family !== 0 && list.check(bare, family === 6 ? 'ipv6' : 'ipv4')
  if (answers.size >= ANSWERS_MAX) answers.clear()
  answers.set(ip, inside)
  return inside
}

/** Whether the policy lets a connection go to this address. */
export function isAllowedAddress(ip: string, policy: TargetPolicy): boolean {
  if (inRanges(policy.denyRanges, ip)) return false
  return policy.allowPrivate || isPublicAddress(ip) || inRanges(policy.allowRanges, ip)
}

/** Whether the policy judges any address at all: with everything allowed and nothing denied it need not look. */
export function judgesAddresses(policy: TargetPolicy): boolean {
  return !policy.allowPrivate || (policy.denyRanges?.length ?? 0) > 0
}

/** Outcome of {@link checkHost}: the addresses to connect to, or why not. `code` is set for DNS failures. */
export type HostCheck = { ok: true; addresses: string[] } | { ok: false; reason: 'non_public' | 'dns'; error: string; code?: string }

const V4_RANGES: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, includes the 169.254.169.254 metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
  ['255.255.255.255', 32]
]

const V6_RANGES: ReadonlyArray<readonly [string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local, includes the AWS metadata fd00:ec2::254
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
  ['2001::', 23], // IETF protocol assignments, includes Teredo 2001::/32 whose embedded v4 is obfuscated
  ['64:ff9b:1::', 48] // local-use NAT64 (RFC 8215): may embed v4 anywhere, never global
]

function hex16(a: number, b: number): string {
  return ((a << 8) | b).toString(16)
}

/** v6 prefixes that carry an IPv4 address at a fixed place: mapped, translated, compatible, NAT64, 6to4. */
function embeddedForms(v4: string, bits: number): Array<readonly [string, number]> {
  const [a = 0, b = 0, c = 0, d = 0] = v4.split('.').map(Number)
  const hi = hex16(a, b)
  const lo = hex16(c, d)
  return [
    [`::ffff:${hi}:${lo}`, 96 + bits],
    [`::ffff:0:${hi}:${lo}`, 96 + bits],
    [`::${hi}:${lo}`, 96 + bits],
    [`64:ff9b::${hi}:${lo}`, 96 + bits],
    [`2002:${hi}:${lo}::`, 16 + bits]
  ]
}

/**
 * The non-public addresses: the reserved ranges, and `own` addresses (this machine's), which are
 * non-public whatever range they sit in: a public address of ours reaches our own services (the
 * API, the database, an admin port) from the inside. Each v4 one also in the v6 forms that embed it.
 */
export function nonPublicAddresses(own: readonly string[]): BlockList {
  const list = new BlockList()
  for (const [net, bits] of V4_RANGES) {
    list.addSubnet(net, bits, 'ipv4')
    for (const [net6, bits6] of embeddedForms(net, bits)) list.addSubnet(net6, bits6, 'ipv6')
  }
  for (const [net, bits] of V6_RANGES) list.addSubnet(net, bits, 'ipv6')
  for (const address of own.map(stripHost)) {
    const family = isIP(address)
    if (family === 6) list.addAddress(address, 'ipv6')
    if (family !== 4) continue
    list.addAddress(address, 'ipv4')
    for (const [net6, bits6] of embeddedForms(address, 32)) list.addSubnet(net6, bits6, 'ipv6')
  }
  return list
}

const blocked = nonPublicAddresses(ownAddresses())

/** The addresses of this machine's network interfaces, read once at start. */
function ownAddresses(): string[] {
  try {
    return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
  } catch {
    return []
  }
}

/** `host` without the brackets of a v6 literal and without a zone index. */
export function stripHost(host: string): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  const zone = bare.indexOf('%')
  return zone === -1 ? bare : bare.slice(0, zone)
}

/**
 * True when `ip` (v4 or v6 text) is globally routable; false for any non-public range, embedded
 * forms included, for this machine's own addresses, and for non-IP text.
 */
export function isPublicAddress(ip: string, nonPublic: BlockList = blocked): boolean {
  const addr = stripHost(ip.trim())
  const family = isIP(addr)
  if (family === 0) return false
  return !nonPublic.check(addr, family === 4 ? 'ipv4' : 'ipv6')
}
