import t from 'tap'
import { networkInterfaces } from 'node:os'
import { checkHost } from '../../../lib/net/host-check.js'
import {
  NON_PUBLIC_ERROR,
  POLICY_ERRORS,
  POLICY_REFUSALS,
  inRanges,
  isAllowedAddress,
  isPolicyRefusal,
  isPublicAddress,
  judgesAddresses,
  nonPublicAddresses
} from '../../../lib/rules/target-policy.js'
import { ADDRESSES } from '../../helpers/address-table.js'

// One table for this test and for its re-run through redirects and CONNECT_TO (test/reliability/security.test.ts).
const addresses = ADDRESSES

t.test('isPublicAddress judges each address', async (t) => {
  for (const [ip, expected, why] of addresses) {
    t.equal(isPublicAddress(ip), expected, `${ip} (${why}) is ${expected ? 'public' : 'not public'}`)
  }
})

const resolvesTo =
  (...ips: string[]) =>
  async (): Promise<string[]> =>
    ips

t.test('a name resolving to a non-public address is refused by default and allowed by configuration', async (t) => {
  for (const [ip, isPublic, why] of addresses) {
    if (isPublic || ip === 'example.com') continue
    const refused = await checkHost('target.test', { allowPrivate: false }, { lookup: resolvesTo(ip) })
    t.same(refused, { ok: false, reason: 'non_public', error: NON_PUBLIC_ERROR }, `${ip} (${why}) refused`)
    const allowed = await checkHost('target.test', { allowPrivate: true }, { lookup: resolvesTo(ip) })
    t.same(allowed, { ok: true, addresses: [ip] }, `${ip} (${why}) allowed with allowPrivate`)
  }
})

t.test('a name resolving only to public addresses is allowed', async (t) => {
  const got = await checkHost(
    'example.com',
    { allowPrivate: false },
    { lookup: resolvesTo('93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c') }
  )
  t.same(got, { ok: true, addresses: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] })
})

t.test('a name with one public and one private record is refused', async (t) => {
  for (const order of [
    ['8.8.8.8', '10.0.0.1'],
    ['10.0.0.1', '8.8.8.8']
  ]) {
    const got = await checkHost('rebind.test', { allowPrivate: false }, { lookup: resolvesTo(...order) })
    t.match(got, { ok: false, reason: 'non_public' }, order.join(', '))
  }
})

t.test('an address literal is judged without a lookup', async (t) => {
  const lookup = async (): Promise<string[]> => {
    throw new Error('lookup must not be called')
  }
  t.match(await checkHost('127.0.0.1', { allowPrivate: false }, { lookup }), { ok: false, reason: 'non_public' })
  t.match(await checkHost('[::1]', { allowPrivate: false }, { lookup }), { ok: false, reason: 'non_public' })
  t.same(await checkHost('[::1]', { allowPrivate: true }, { lookup }), { ok: true, addresses: ['::1'] })
  t.same(await checkHost('8.8.8.8', { allowPrivate: false }, { lookup }), { ok: true, addresses: ['8.8.8.8'] })
})

t.test('a DNS failure is reported with its code, whatever the policy', async (t) => {
  const lookup = async (): Promise<string[]> => {
    throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' })
  }
  for (const allowPrivate of [false, true]) {
    t.match(
      await checkHost('nowhere.test', { allowPrivate }, { lookup }),
      { ok: false, reason: 'dns', code: 'NXDOMAIN' },
      `allowPrivate ${allowPrivate}`
    )
  }
  const empty = await checkHost('empty.test', { allowPrivate: false }, { lookup: resolvesTo() })
  t.match(empty, { ok: false, reason: 'dns', code: 'NODATA' }, 'no records at all')
})

t.test('the real resolver sends localhost to loopback, which is refused by default', async (t) => {
  const refused = await checkHost('localhost', { allowPrivate: false })
  t.same(refused, { ok: false, reason: 'non_public', error: NON_PUBLIC_ERROR })
  const allowed = await checkHost('localhost', { allowPrivate: true })
  t.equal(allowed.ok, true)
  if (allowed.ok) t.ok(allowed.addresses.length > 0 && allowed.addresses.every((ip) => !isPublicAddress(ip)), allowed.addresses.join(', '))
})

t.test('allowRanges opens only the listed ranges', async (t) => {
  const policy = { allowPrivate: false, allowRanges: ['10.20.0.0/16', '127.0.0.2/32', 'fd00::/8'] }
  const cases: Array<[string, boolean]> = [
    ['10.20.3.4', true],
    ['10.21.0.1', false],
    ['127.0.0.2', true],
    ['127.0.0.1', false],
    ['fd12::1', true],
    ['fe80::1', false],
    ['169.254.169.254', false],
    ['8.8.8.8', true]
  ]
  for (const [ip, allowed] of cases) t.equal(isAllowedAddress(ip, policy), allowed, `${ip} ${allowed ? 'allowed' : 'refused'}`)
  t.match(await checkHost('intranet.test', policy, { lookup: resolvesTo('10.20.0.9') }), { ok: true })
  t.match(
    await checkHost('mixed.test', policy, { lookup: resolvesTo('10.20.0.9', '10.99.0.1') }),
    { ok: false, reason: 'non_public' },
    'one address outside the ranges refuses the name'
  )
})

t.test('a look-up that does not answer within its timeout fails as a DNS timeout', async (t) => {
  const never = (): Promise<string[]> => new Promise(() => {})
  t.same(await checkHost('hung.test', { allowPrivate: false }, { lookup: never, timeoutMs: 50 }), {
    ok: false,
    reason: 'dns',
    error: 'domain does not resolve (TIMEOUT)',
    code: 'TIMEOUT'
  })
  t.same(
    await checkHost('fast.test', { allowPrivate: false }, { lookup: async () => ['10.0.0.1'], timeoutMs: 50 }),
    { ok: false, reason: 'non_public', error: NON_PUBLIC_ERROR },
    'an answer in time is judged as before'
  )
})

t.test('DENY_TARGETS refuses its ranges, public or not, whatever ALLOW_PRIVATE_TARGETS says', async (t) => {
  const denyRanges = ['93.184.215.0/24', '2606:2800::/32', '127.0.0.9/32']
  for (const allowPrivate of [false, true]) {
    t.notOk(
      isAllowedAddress('93.184.215.14', { allowPrivate, denyRanges }),
      `a public address in a denied range (allowPrivate ${allowPrivate})`
    )
    t.notOk(isAllowedAddress('2606:2800:21f::1', { allowPrivate, denyRanges }))
    t.notOk(isAllowedAddress('[2606:2800:21f::1]', { allowPrivate, denyRanges }), 'bracketed')
    t.ok(isAllowedAddress('8.8.8.8', { allowPrivate, denyRanges }), 'an address outside them')
  }
  t.notOk(
    isAllowedAddress('127.0.0.9', { allowPrivate: true, denyRanges }),
    'a private address allowed by ALLOW_PRIVATE_TARGETS, but denied'
  )
  t.notOk(
    isAllowedAddress('10.20.0.9', { allowPrivate: false, allowRanges: ['10.20.0.0/16'], denyRanges: ['10.20.0.0/24'] }),
    'deny wins over an allowed range'
  )
  const got = await checkHost('denied.test', { allowPrivate: true, denyRanges }, { lookup: resolvesTo('8.8.8.8', '93.184.215.14') })
  t.match(got, { ok: false, reason: 'non_public' }, 'a name with one denied address is refused')
  t.notOk(judgesAddresses({ allowPrivate: true }), 'with everything allowed there is nothing to judge')
  t.ok(judgesAddresses({ allowPrivate: true, denyRanges }), 'but a deny list is judged even then')
})

t.test("this machine's own addresses are non-public, whatever range they are in", async (t) => {
  const nonPublic = nonPublicAddresses(['127.0.0.1', '203.0.113.9', '8.8.4.4', '2a00:1450:4001:800::2004', 'fe80::1%eth0'])
  t.notOk(isPublicAddress('8.8.4.4', nonPublic), 'its public v4 address')
  t.notOk(isPublicAddress('::ffff:8.8.4.4', nonPublic), 'the same in a v6 form')
  t.notOk(isPublicAddress('2a00:1450:4001:800::2004', nonPublic), 'its public v6 address')
  t.ok(isPublicAddress('8.8.8.8', nonPublic), 'a public address of someone else')
  t.ok(isAllowedAddress('8.8.4.4', { allowPrivate: true }), 'ALLOW_PRIVATE_TARGETS widens the address rule, this part of it too')
  // The module's own list is read from this machine's interfaces at start.
  const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
  t.ok(own.length > 0, 'this machine has addresses')
  for (const address of own) t.notOk(isPublicAddress(address), `${address}, one of this machine's, is non-public`)
})

t.test('a refusal is told by its code, and each code names the 400 it becomes', async (t) => {
  const cases: Array<[string | null, boolean]> = [
    ['policy_non_public', true],
    ['policy_port', true],
    ['dns_nxdomain', false],
    [POLICY_REFUSALS.policy_non_public, false],
    [null, false]
  ]
  for (const [code, refusal] of cases) t.equal(isPolicyRefusal(code), refusal, `${String(code)} ${refusal ? 'is' : 'is not'} a refusal`)
  t.same(POLICY_ERRORS, { policy_non_public: NON_PUBLIC_ERROR, policy_port: 'domain redirects to a port other than 80 or 443' })
  t.same(
    POLICY_REFUSALS,
    { policy_non_public: `policy: ${NON_PUBLIC_ERROR}`, policy_port: 'policy: domain redirects to a port other than 80 or 443' },
    'the text a location reports'
  )
})

t.test('a range list answers the same for an address it has seen, past the answers it keeps', async (t) => {
  const ranges = ['10.1.0.0/16', 'fd00::/8']
  const addresses = Array.from({ length: 5000 }, (_, i) => `10.${1 + (i % 2)}.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`)
  const first = addresses.map((a) => inRanges(ranges, a))
  t.same(
    addresses.map((a) => inRanges(ranges, a)),
    first,
    'asked again, every address gets its first answer'
  )
  t.same(
    first.map((inside, i) => inside === addresses[i]?.startsWith('10.1.')),
    first.map(() => true),
    'which is the range check'
  )
  t.same([inRanges(ranges, '[fd00::1]'), inRanges(ranges, 'fd00::1'), inRanges(ranges, 'not-an-ip')], [true, true, false])
})
