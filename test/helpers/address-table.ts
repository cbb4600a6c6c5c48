/**
 * The target policy's table (decisions.md, Check endpoint): every address the policy must judge,
 * with the public ones on either side of each non-public range. One table for the unit test of the
 * policy and for its re-run through redirects and CONNECT_TO (test/reliability/security.test.ts).
 */
export const ADDRESSES: ReadonlyArray<readonly [string, boolean, string]> = [
  ['127.0.0.1', false, 'loopback'],
  ['10.1.2.3', false, 'private 10/8'],
  ['172.15.255.255', true, 'just before 172.16/12'],
  ['172.16.0.1', false, 'start of private 172.16/12'],
  ['172.31.255.254', false, 'near the end of private 172.16/12'],
  ['172.31.255.255', false, 'end of private 172.16/12'],
  ['172.32.0.1', true, 'just past 172.16/12'],
  ['192.168.1.1', false, 'private 192.168/16'],
  ['169.254.169.254', false, 'the cloud metadata address'],
  ['100.63.255.255', true, 'just before carrier-grade NAT'],
  ['100.64.0.1', false, 'carrier-grade NAT'],
  ['100.128.0.1', true, 'just past carrier-grade NAT'],
  ['0.0.0.0', false, 'unspecified v4'],
  ['224.0.0.1', false, 'multicast'],
  ['255.255.255.255', false, 'broadcast'],
  ['::1', false, 'v6 loopback'],
  ['::', false, 'v6 unspecified'],
  ['fc00::1', false, 'unique local fc00::/8'],
  ['fd12::1', false, 'unique local fd00::/8'],
  ['fd00:ec2::254', false, 'the AWS v6 metadata address'],
  ['fe80::1', false, 'v6 link-local'],
  ['fe80::1%eth0', false, 'v6 link-local with a zone'],
  ['ff02::1', false, 'v6 multicast'],
  ['2001:db8::1', false, 'v6 documentation'],
  ['2001:0:4136:e378::1', false, 'Teredo'],
  ['::ffff:127.0.0.1', false, 'mapped loopback, dotted'],
  ['::ffff:7f00:1', false, 'mapped loopback, hex'],
  ['::ffff:10.0.0.1', false, 'mapped private'],
  ['::ffff:a9fe:a9fe', false, 'mapped metadata address, hex'],
  ['::ffff:8.8.8.8', true, 'mapped public'],
  ['::7f00:1', false, 'v4-compatible loopback'],
  ['64:ff9b::a00:1', false, 'NAT64 of 10.0.0.1'],
  ['64:ff9b::808:808', true, 'NAT64 of 8.8.8.8'],
  ['2002:a00:1::', false, '6to4 of 10.0.0.1'],
  ['2002:7f00:1::', false, '6to4 of 127.0.0.1'],
  ['2002:a9fe:a9fe::1', false, '6to4 of the metadata address'],
  ['2002:808:808::1', true, '6to4 of 8.8.8.8'],
  ['8.8.8.8', true, 'Google DNS'],
  ['2606:4700:4700::1111', true, 'Cloudflare DNS v6'],
  ['93.184.215.14', true, 'example.com'],
  ['example.com', false, 'a name, not an address']
]

/** The table's non-public addresses, with why each is not public. */
export const NON_PUBLIC_ADDRESSES: ReadonlyArray<readonly [string, string]> = ADDRESSES.filter(
  ([ip, isPublic]) => !isPublic && ip !== 'example.com'
).map(([ip, , why]) => [ip, why] as const)

/** Names that stand for a non-public address wherever they are resolved. */
export const NON_PUBLIC_NAMES: readonly string[] = ['localhost']

/**
 * Other spellings of non-public v4 addresses that URL parsers (WHATWG, and so undici following a
 * redirect) read as dotted quads: decimal, octal, hex, and short forms.
 */
export const V4_SPELLINGS: ReadonlyArray<readonly [string, string]> = [
  ['2130706433', '127.0.0.1 in decimal'],
  ['0x7f000001', '127.0.0.1 in hex'],
  ['017700000001', '127.0.0.1 in octal'],
  ['0177.0.0.1', '127.0.0.1 with an octal first part'],
  ['0x7f.0.0.1', '127.0.0.1 with a hex first part'],
  ['127.1', '127.0.0.1 in short form'],
  ['2852039166', 'the metadata address in decimal'],
  ['0xa9fea9fe', 'the metadata address in hex'],
  ['0251.0376.0251.0376', 'the metadata address in octal'],
  ['167772161', '10.0.0.1 in decimal'],
  ['0', '0.0.0.0 as one number']
]

/** An address or name as the host of a URL: v6 in brackets, a zone's `%` escaped. */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host.replace('%', '%25')}]` : host
}
