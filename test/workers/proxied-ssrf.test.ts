import http from 'node:http'
import t from 'tap'
import { parseConnectTo, type LocationConfig } from '../../config/index.js'
import { Locations } from '../../lib/probing/locations/index.js'
import { CheckSupervisor, TargetPolicyError } from '../../lib/probing/supervisor.js'
import { createResolver } from '../../lib/net/resolver.js'
import { PORT_ERROR, PORT_REFUSAL, POLICY_REFUSAL } from '../../lib/rules/target-policy.js'
import { createLogger } from '../../lib/logger.js'
import { startDnsServer } from '../helpers/dns-server.js'
import { closedPort, listenOn, startInternalService, startProxy } from '../helpers/targets.js'
import { TEST_POOL } from '../helpers/compiled.js'

// The attack: a public site (127.0.0.2 stands in for one: the only range the policy opens) redirects
// the probe to an internal service (127.0.0.1), by a name only the proxy's network resolves, by a name
// that resolves to loopback, or to another port of the site itself.
const inner = await startInternalService()
const innerPort = inner.port
const innerHits = inner.hits
const site = http.createServer((req, res) => {
  const to: Record<string, string> = {
    'proxyname.site.test': 'http://redis/',
    'rebind.site.test': 'http://sneaky.test/',
    'port.site.test': 'http://port.site.test:22/'
  }
  const target = to[(req.headers.host ?? '').replace(/:\d+$/, '')]
  if (target === undefined) res.end('public page')
  else res.writeHead(302, { location: target }).end()
})
const sitePort = await listenOn(site, '127.0.0.2')
const closed = await closedPort()

// This machine's resolver: the site's names are public (127.0.0.2), sneaky.test is loopback, and
// `redis` does not exist here. The proxies' own resolver knows `redis`.
const dns = await startDnsServer([
  { suffix: 'site.test', A: ['127.0.0.2'], AAAA: [] },
  { suffix: 'sneaky.test', A: ['127.0.0.1'], AAAA: [] }
])
const proxies = await Promise.all(
  [1, 2, 3].map(() => startProxy({ names: { redis: '127.0.0.1', 'sneaky.test': '127.0.0.1', 'sub.site.test': '127.0.0.2' } }))
)
t.teardown(async () => {
  for (const p of proxies) await p.close()
  await dns.close()
  await inner.close()
  await new Promise((resolve) => site.close(resolve))
})

// Names are kept (so they are resolved), ports are mapped: https is refused, http reaches the site,
// and port 80 of the internal names reaches the internal service.
const connectTo = parseConnectTo(
  [`:443::${closed}`, `redis:80::${innerPort}`, `sneaky.test:80::${innerPort}`, `:80::${sitePort}`, `:22::${innerPort}`].join(',')
)

function pools(resolve: 'local' | 'proxy', allowPrivate = false): Locations {
  const locations: LocationConfig[] = proxies.map((p, i) => ({
    label: `Proxy ${i + 1}, Testland`,
    proxy: `http://127.0.0.1:${p.port}`,
    resolve
  }))
  const p = new Locations({
    ...TEST_POOL,
    locations,
    connectTo,
    policy: { allowPrivate, allowRanges: ['127.0.0.2/32'] },
    dns: { servers: [dns.address], timeoutMs: 1500 },
    timeoutMs: 3000,
    userAgent: 'proxied-ssrf-test',
    logger: createLogger({ level: 'silent' })
  })
  t.teardown(() => p.close())
  return p
}
const local = pools('local')
const allowing = pools('local', true)
await Promise.all([local.ready(), allowing.ready()])
const asked = (what: (connect: string) => boolean) => proxies.some((p) => p.connects.some(what))

t.test('a name only the proxy can resolve is not passed to it: the location reports dns, not up', async (t) => {
  const results = await local.probeAll('proxyname.site.test')
  for (const r of results)
    t.match(r, { status: 'error', http_code: 302, code: 'dns_nxdomain', error: 'dns: NXDOMAIN', final_url: 'http://redis/' }, r.location)
  t.same(innerHits, [], 'the internal service was never reached')
  t.notOk(
    asked((c) => c.startsWith('redis')),
    'no proxy was asked to CONNECT to the name'
  )
  t.ok(
    proxies.every((p) => p.connects.includes(`127.0.0.2:${sitePort}`)),
    'the tunnels went to the vetted address, not the name'
  )
})

t.test('a name that resolves here to loopback is refused before any tunnel is asked for', async (t) => {
  const results = await local.probeAll('rebind.site.test')
  for (const r of results)
    t.match(r, { status: 'down', code: 'policy_non_public', error: POLICY_REFUSAL, final_url: 'http://sneaky.test/' }, r.location)
  t.same(innerHits, [])
  t.notOk(
    asked((c) => c.startsWith('127.0.0.1') || c.startsWith('sneaky')),
    'no proxy was asked for the internal address'
  )
})

t.test('a redirect to another port of the site is refused, even where private targets are allowed', async (t) => {
  for (const p of [local, allowing]) {
    const results = await p.probeAll('port.site.test')
    for (const r of results) t.match(r, { status: 'down', http_code: 302, code: 'policy_port', error: PORT_REFUSAL }, r.location)
  }
  t.same(innerHits, [], 'port 22 (mapped to the internal service) was never reached')
  const checks = new CheckSupervisor({
    prober: local,
    cacheTtlS: 0,
    policy: { allowPrivate: false, allowRanges: ['127.0.0.2/32'] },
    connectTo,
    lookup: createResolver({ servers: [dns.address], timeoutMs: 1000 })
  })
  await t.rejects(checks.check('port.site.test'), new TargetPolicyError(PORT_ERROR), 'the check answers 400 saying why')
})

t.test('resolve: "proxy" asks the proxy for the name itself (regional answers; its own ACL must hold)', async (t) => {
  const byName = pools('proxy')
  await byName.ready()
  const results = await byName.probeAll('sub.site.test')
  for (const r of results) t.match(r, { status: 'up', http_code: 200 }, r.location)
  t.ok(
    proxies.every((p) => p.connects.includes(`sub.site.test:${sitePort}`)),
    'the CONNECT line carries the name'
  )
})
