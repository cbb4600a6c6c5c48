import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { parseConnectTo } from '../../config/index.js'
import { Locations } from '../../lib/probing/locations/index.js'
import { POLICY_REFUSAL } from '../../lib/rules/target-policy.js'
import { createLogger } from '../../lib/logger.js'
import { closedPort, startProxy } from '../helpers/targets.js'
import { TEST_POOL } from '../helpers/compiled.js'

// Behind a proxy each actor resolves every hop itself and judges the address before asking for a
// tunnel to it. Every location here is proxied: no direct location can refuse on the others' behalf.
const listen = async (server: http.Server, host: string): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return (server.address() as AddressInfo).port
}
const innerHits: string[] = []
const inner = http.createServer((req, res) => {
  innerHits.push(req.headers.host ?? '')
  res.end('internal')
})
const site = http.createServer((_req, res) => {
  res.writeHead(302, { location: 'http://inner.site.test/' }).end()
})
const innerPort = await listen(inner, '127.0.0.1')
const sitePort = await listen(site, '127.0.0.2') // the one range the policy opens
const closed = await closedPort()
const proxies = await Promise.all([startProxy(), startProxy(), startProxy()])
const connectTo = parseConnectTo(
  [
    `jump.site.test:443:127.0.0.2:${closed}`,
    `jump.site.test:80:127.0.0.2:${sitePort}`,
    `inner.site.test:443:127.0.0.1:${closed}`,
    `inner.site.test:80:127.0.0.1:${innerPort}`
  ].join(',')
)
const locations = proxies.map((p, i) => ({
  label: `Proxy ${i + 1}, Testland`,
  proxy: `http://127.0.0.1:${p.port}`,
  resolve: 'local' as const
}))

const pools = (allowPrivate: boolean): Locations => {
  const p = new Locations({
    ...TEST_POOL,
    locations,
    connectTo,
    policy: { allowPrivate, allowRanges: ['127.0.0.2/32'] },
    timeoutMs: 3000,
    userAgent: 'proxied-policy-test',
    logger: createLogger({ level: 'silent' })
  })
  t.teardown(() => p.close())
  return p
}

t.teardown(async () => {
  for (const p of proxies) await p.close()
  await new Promise((resolve) => inner.close(resolve))
  await new Promise((resolve) => site.close(resolve))
})

t.test('a redirect into a non-public address is refused at every proxied location', async (t) => {
  const refusing = pools(false)
  await refusing.ready()
  const results = await refusing.probeAll('jump.site.test')
  t.equal(results.length, 3)
  for (const r of results) {
    // As at a direct location, the refused hop is the last URL tried.
    t.match(
      r,
      { status: 'down', http_code: 302, code: 'policy_non_public', error: POLICY_REFUSAL, final_url: 'http://inner.site.test/' },
      r.location
    )
  }
  t.same(innerHits, [], 'the internal server was never reached')
  for (const [i, p] of proxies.entries()) {
    t.ok(p.connects.includes(`127.0.0.2:${sitePort}`), `proxy ${i + 1} tunnelled to the allowed site`)
    t.notOk(
      p.connects.some((c) => c.startsWith('127.0.0.1:')),
      `proxy ${i + 1} was never asked for the internal address`
    )
  }
})

t.test('with ALLOW_PRIVATE_TARGETS the same redirect is followed through every proxy', async (t) => {
  const allowing = pools(true)
  await allowing.ready()
  const results = await allowing.probeAll('jump.site.test')
  for (const r of results) t.match(r, { status: 'up', http_code: 200, error: null, final_url: 'http://inner.site.test/' }, r.location)
  t.equal(innerHits.length, 3, 'each location fetched the internal page once')
  for (const [i, p] of proxies.entries()) t.ok(p.connects.includes(`127.0.0.1:${innerPort}`), `proxy ${i + 1} tunnelled to it`)
})
