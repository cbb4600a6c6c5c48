/**
 * Our own resolver failing is not the site's outage (issue 54): with DNS_SERVERS pointing at a
 * resolver that refuses, or one that answers SERVFAIL for everything (the root zone too), every
 * location reports `error` for itself and no outage opens; a name whose own servers fail (SERVFAIL
 * for it alone) or that does not exist (NXDOMAIN) is still the site's `down`, and opens one.
 */
import t, { type Test } from 'tap'
import { apiClient } from '../helpers/api-client.js'
import { startDnsZone, type ZoneEntry } from '../helpers/dns-zone.js'
import { holds } from '../helpers/poll.js'
import { startTrackedService, type TargetPorts } from '../helpers/tracked-service.js'

/** The service with one tracked site whose target is reached by name (target.test) through `dnsServer`. */
async function serviceWith(t: Test, dnsServer: string) {
  const tracked = await startTrackedService(t, {
    engine: 'sqlite',
    site: { domain: 'shop.test', name: 'Shop' },
    env: (p: TargetPorts) => ({
      DNS_SERVERS: dnsServer,
      CHECK_INTERVAL_S: '1',
      CACHE_TTL_S: '0',
      // The site is dialled at a name the resolvers are asked about: target.test on the target's ports.
      CONNECT_TO: `:443:target.test:${p.closed},:80:target.test:${p.http}`
    })
  })
  return { tracked, client: apiClient(tracked.service.server.info.uri, tracked.key) }
}

const zoneOf = (t: Test, target: ZoneEntry) => startDnsZone(t, { 'target.test': target, '.': { NS: ['a.root-servers.test'] } })

t.test('a resolver that refuses: error at every location, no outage', async (t) => {
  const zone = await zoneOf(t, { rcode: 'REFUSED' })
  const { tracked, client } = await serviceWith(t, zone.address)
  const body = await client.checkDomain('shop.test')
  t.match(body, { status: 'unavailable', locations_answered: 0 })
  for (const l of body.locations) t.match(l, { status: 'error', code: 'dns_refused', error: "dns: REFUSED (this location's resolver)" })
  t.ok(
    await holds(async () => Number((await tracked.service.db('checks').count({ n: '*' }).first())?.n) >= 3, 10_000),
    'scheduled checks are recorded'
  )
  t.same((await client.listOutages({ domain: 'shop.test' })).outages, [], 'no outage opened')
  t.not((await client.getStatus('shop.test')).status, 'down')
})

t.test('a resolver that is gone (nothing listens): error at every location, no outage', async (t) => {
  const { client } = await serviceWith(t, '127.0.0.1:9')
  const body = await client.checkDomain('shop.test')
  for (const l of body.locations) t.match(l, { status: 'error', code: 'dns_refused' })
  t.same((await client.listOutages({ domain: 'shop.test' })).outages, [])
})

t.test('a resolver that fails everything (the root zone too) is ours; the name failing alone is the site', async (t) => {
  const broken = await startDnsZone(t, { 'target.test': { rcode: 'SERVFAIL' }, '.': { rcode: 'SERVFAIL' } })
  const ours = await serviceWith(t, broken.address)
  for (const l of (await ours.client.checkDomain('shop.test')).locations) t.match(l, { status: 'error', code: 'dns_servfail' })

  const zone = await zoneOf(t, { rcode: 'SERVFAIL' })
  const { client } = await serviceWith(t, zone.address)
  const body = await client.checkDomain('shop.test')
  t.match(body, { status: 'down' })
  for (const l of body.locations) t.match(l, { status: 'down', code: 'dns_servfail', error: 'dns: SERVFAIL' })
  t.ok(
    await holds(async () => (await client.listOutages({ domain: 'shop.test' })).outages.length === 1, 10_000),
    "the name's own failure opens an outage"
  )
})
