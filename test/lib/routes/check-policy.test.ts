import t, { type Test } from 'tap'
import { lookup as dnsLookup } from 'node:dns/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadConfig } from '../../../config/index.js'
import { createProbing } from '../../../lib/probing/build.js'
import { createLogger } from '../../../lib/logger.js'
import { migratedDb } from '../../helpers/db.js'
import { bearer, testServer } from '../../helpers/server.js'
import { closedPort } from '../../helpers/targets.js'
import { TEST_ACTORS } from '../../helpers/compiled.js'

const REFUSED = { error: 'domain resolves to a non-public address' }

/** A target on one loopback address that counts requests per Host and redirects `jump.*` to internal.site.test. */
async function target(address: string): Promise<{ port: number; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = []
  const server = http.createServer((req, res) => {
    const host = req.headers.host ?? ''
    hits.push(host)
    if (host.startsWith('jump.')) res.writeHead(302, { location: 'http://internal.site.test/' }).end()
    else res.writeHead(200).end('ok')
  })
  await new Promise<void>((resolve) => server.listen(0, address, resolve))
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () =>
      new Promise((resolve) =>
        server.close(() => {
          resolve()
        })
      )
  }
}

async function stack(t: Test, env: Record<string, string>, lookup?: (host: string) => Promise<string[]>) {
  const config = loadConfig({ PROBE_TIMEOUT_MS: '2000', CACHE_TTL_S: '0', ...env })
  let probes = 0
  const { locations: pools, checks } = createProbing(config, {
    logger: createLogger({ level: 'silent' }),
    userAgent: 'policy-test',
    ...TEST_ACTORS,
    lookup,
    prober: (pools) => ({
      probeAll: (domain) => {
        probes++
        return pools.probeAll(domain)
      }
    })
  })
  t.teardown(() => pools.close())
  await pools.ready()
  const { db } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, env, checks })
  const key = await issueKey({ limit: 100_000 })
  const check = async (domain: string) => {
    const res = await server.inject({
      method: 'POST',
      url: '/api/v1/check',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: { domain }
    })
    return { status: res.statusCode, body: JSON.parse(res.payload) }
  }
  return { check, probes: () => probes }
}

const NON_PUBLIC = [
  '127.0.0.1',
  '10.1.2.3',
  '172.16.0.1',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '::1',
  'fc00::1',
  'fd00:ec2::254',
  'fe80::1',
  '::ffff:127.0.0.1',
  '224.0.0.1'
]

t.test('names resolving to non-public addresses are refused before anything is fetched', async (t) => {
  const names = new Map(NON_PUBLIC.map((ip, i) => [`n${i}.example.com`, ip]))
  names.set('mixed.example.com', '93.184.215.14')
  const lookup = async (host: string) => (host === 'mixed.example.com' ? ['93.184.215.14', '10.0.0.1'] : [names.get(host) ?? ''])
  const { check, probes } = await stack(t, {}, lookup)
  for (const [domain, ip] of names) {
    t.same(await check(domain), { status: 400, body: REFUSED }, `${domain} -> ${ip}${domain.startsWith('mixed') ? ' and 10.0.0.1' : ''}`)
  }
  t.equal(probes(), 0, 'no location was asked to fetch any of them')
})

t.test('address literals are not domains at all', async (t) => {
  const { check, probes } = await stack(t, {})
  for (const ip of [
    '127.0.0.1',
    '10.1.2.3',
    '169.254.169.254',
    '2130706433',
    '0x7f.0.0.1',
    '[::1]',
    '[::ffff:127.0.0.1]',
    'http://[fe80::1]/'
  ]) {
    const { status, body } = await check(ip)
    t.equal(status, 400, ip)
    t.match(body, { error: /not an IP address/ }, ip)
  }
  t.equal(probes(), 0)
})

t.test('ALLOW_PRIVATE_TARGETS=1 lets the same names through', async (t) => {
  const ok = await target('127.0.0.1')
  t.teardown(ok.close)
  const names = new Map(NON_PUBLIC.map((ip, i) => [`n${i}.example.com`, ip]))
  const lookup = async (host: string) => [names.get(host) ?? '127.0.0.1']
  // The policy lookup says where a name resolves; every real connection goes to the loopback target.
  const closed = await closedPort()
  const { check } = await stack(t, { ALLOW_PRIVATE_TARGETS: '1', CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${ok.port}` }, lookup)
  for (const domain of names.keys()) {
    const { status, body } = await check(domain)
    t.equal(status, 200, domain)
    t.equal(body.status, 'up', domain)
  }
})

t.test('CONNECT_TO targets are judged by the address they dial', async (t) => {
  const ok = await target('127.0.0.1')
  t.teardown(ok.close)
  for (const host2 of ['127.0.0.1', '[::ffff:127.0.0.1]', 'localhost']) {
    // Only the checked name is faked as public; localhost still resolves through /etc/hosts.
    const lookup = async (host: string) =>
      host === 'public-looking.example.com' ? ['93.184.215.14'] : (await dnsLookup(host, { all: true })).map((a) => a.address)
    const { check, probes } = await stack(t, { CONNECT_TO: `:443:${host2}:${ok.port},:80:${host2}:${ok.port}` }, lookup)
    t.same(await check('public-looking.example.com'), { status: 400, body: REFUSED }, `a public name dialled at ${host2} is refused`)
    t.equal(probes(), 0)
  }
  t.same(ok.hits, [], 'the loopback target was never reached')
})

t.test('a redirect from an allowed target into a non-public address is refused', async (t) => {
  // 127.0.0.2 stands for an allowed intranet range; 127.0.0.1 for everything else that is private.
  const allowed = await target('127.0.0.2')
  const inner = await target('127.0.0.1')
  t.teardown(async () => {
    await allowed.close()
    await inner.close()
  })
  const closed = await closedPort()
  const { check } = await stack(t, {
    ALLOW_PRIVATE_TARGETS: '127.0.0.2/32',
    CONNECT_TO: [`internal.site.test:80:127.0.0.1:${inner.port}`, `:443:127.0.0.2:${closed}`, `:80:127.0.0.2:${allowed.port}`].join(',')
  })
  const plain = await check('ok.site.test')
  t.equal(plain.status, 200, 'a target inside the allowed range is checked')
  t.equal(plain.body.status, 'up')
  t.same(await check('jump.site.test'), { status: 400, body: REFUSED }, 'its redirect into 127.0.0.1 is refused')
  t.ok(allowed.hits.includes('jump.site.test'), 'the first hop was fetched')
  t.same(inner.hits, [], 'the redirect target never was')
})
