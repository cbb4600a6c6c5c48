import http from 'node:http'
import t from 'tap'
import { parseConnectTo, type LocationConfig } from '../../config/index.js'
import { Locations } from '../../lib/probing/locations/index.js'
import { createLogger } from '../../lib/logger.js'
import { startDnsServer } from '../helpers/dns-server.js'
import { squidMissing, startSquid } from '../helpers/squid.js'
import { closedPort, listenOn, startInternalService } from '../helpers/targets.js'
import { TEST_POOL } from '../helpers/compiled.js'

// Locations with "resolve": "proxy" trust their proxy with the site's names: a real Squid running
// the shipped deploy/squid.conf must refuse what the service's own policy would, by address after
// its own look-up. The attack: a public site redirects to a name that only the proxy's network
// resolves, to an internal service.
const missing = squidMissing()
if (missing !== null) {
  t.comment(missing)
  t.pass('skipped: squid is not installed')
} else {
  const inner = await startInternalService()
  const innerPort = inner.port
  const innerHits = inner.hits
  const site = http.createServer((req, res) => {
    if ((req.headers.host ?? '').startsWith('jump.')) res.writeHead(302, { location: 'http://internal.corp/' }).end()
    else res.end('public page')
  })
  const sitePort = await listenOn(site, '127.0.0.2')
  const closed = await closedPort()
  const dns = await startDnsServer([{ suffix: 'site.test', A: ['127.0.0.2'], AAAA: [] }])
  t.teardown(async () => {
    await dns.close()
    await inner.close()
    await new Promise((resolve) => site.close(resolve))
  })
  const squid = await startSquid(t, {
    hosts: { 'ok.site.test': '127.0.0.2', 'jump.site.test': '127.0.0.2', 'internal.corp': '127.0.0.1' },
    ports: [sitePort, innerPort, closed],
    exceptions: ['127.0.0.2']
  })
  const locations: LocationConfig[] = [1, 2, 3].map((n) => ({
    label: `Squid ${n}, Testland`,
    proxy: `http://127.0.0.1:${squid.port}`,
    resolve: 'proxy'
  }))
  const pools = new Locations({
    ...TEST_POOL,
    locations,
    connectTo: parseConnectTo(`:443::${closed},internal.corp:80::${innerPort},:80::${sitePort}`),
    policy: { allowPrivate: false, allowRanges: ['127.0.0.2/32'] },
    dns: { servers: [dns.address], timeoutMs: 2500 },
    timeoutMs: 5000,
    userAgent: 'squid-test',
    logger: createLogger({ level: 'silent' })
  })
  t.teardown(() => pools.close())
  await pools.ready()

  t.test('Squid tunnels to a public site by name', async (t) => {
    for (const r of await pools.probeAll('ok.site.test'))
      t.match(r, { status: 'up', http_code: 200, final_url: 'http://ok.site.test/' }, r.location)
  })

  t.test('a redirect to a name that Squid resolves to a private address is refused by Squid: never up', async (t) => {
    const results = await pools.probeAll('jump.site.test')
    for (const r of results) {
      t.match(
        r,
        { status: 'down', http_code: 302, code: 'proxy_refused', error: 'proxy: 403', final_url: 'http://internal.corp/' },
        r.location
      )
    }
    t.same(innerHits, [], 'the internal service was never reached')
    t.match(squid.log(), new RegExp(`TCP_DENIED/403 \\d+ CONNECT internal\\.corp:${innerPort}`), "Squid's log shows the refusal")
  })
}
