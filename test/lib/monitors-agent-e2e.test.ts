import net from 'node:net'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createKey } from '../../lib/store/keys.js'
import { natsUsers, startAgentProcess } from '../helpers/agents.js'
import { apiClient } from '../helpers/api-client.js'
import { startDnsZone } from '../helpers/dns-zone.js'
import { natsUrlWithAuth, startNats } from '../helpers/nats.js'
import { holds } from '../helpers/poll.js'
import { closedPort, makeCert, startHttpsTarget } from '../helpers/targets.js'
import { startTrackedService } from '../helpers/tracked-service.js'

/*
 * Monitors through an agent location (issue 47): two local locations and one served by a
 * `site-status agent` process over a real nats-server. The agent gets each monitor's target and
 * check through the protocol, dials by its own CONNECT_TO and asks its own resolver: a TCP monitor
 * of a closed port opens its outage with the agent's vote, an open one stays up, a DNS monitor goes
 * down when the answer changes, and a TLS monitor asserting more than 7 days left sees a certificate
 * expiring in 3 (trusted by the agent through NODE_EXTRA_CA_CERTS) and goes down for it.
 */

t.setTimeout(180_000)

const AGENT = 'Frankfurt 1, Germany'
const DAY = 86_400_000
/** A location's entry in a stored check. */
type Entry = { location: string; status: string; code?: string | null; tls_expires_at?: string | null }
const open = net.createServer((socket) => {
  socket.on('error', () => {})
  socket.end('+OK\r\n')
})
await new Promise<void>((resolve) => open.listen(0, '127.0.0.1', resolve))
t.teardown(() => open.close())
const openPort = (open.address() as net.AddressInfo).port
const closed = await closedPort()
const zone = await startDnsZone(t, { 'mail.site.test': { MX: ['10 mx.site.test'] } })
const soon = makeCert({ days: 3, subject: '/O=Site Status Tests/CN=Three Days' })
const tlsTarget = await startHttpsTarget(soon)
t.teardown(() => tlsTarget.close())
const caFile = join(t.testdir(), 'three-days.pem')
writeFileSync(caFile, soon.cert)

t.test('tcp, tls and dns monitors with an agent location, on sqlite', async (t) => {
  const password = `p${randomBytes(12).toString('hex')}`
  const nats = await startNats(t, { users: natsUsers(password, ['fra1']) })
  const routes = [
    `db.site.test:5432:127.0.0.1:${openPort}`,
    `gone.site.test:5432:127.0.0.1:${closed}`,
    `soon.site.test:8443:127.0.0.1:${tlsTarget.port}`
  ]
  const { service } = await startTrackedService(t, {
    engine: 'sqlite',
    site: { domain: 'plain.site.test', name: 'Plain' },
    extraCa: soon.cert,
    env: (ports) => ({
      LOCATIONS: JSON.stringify([{ label: 'Local 1, Testland' }, { label: 'Local 2, Testland' }, { label: AGENT, agent: 'fra1' }]),
      NATS_URL: natsUrlWithAuth(nats.url, 'central', password),
      CHECK_INTERVAL_S: '1',
      PROBE_TIMEOUT_MS: '2000',
      DNS_SERVERS: zone.address,
      CONNECT_TO: [...routes, `:443:127.0.0.1:${ports.closed}`, `:80:127.0.0.1:${ports.http}`].join(',')
    })
  })
  await startAgentProcess(t, 'fra1', {
    NATS_URL: natsUrlWithAuth(nats.url, 'agent-fra1', password),
    ALLOW_PRIVATE_TARGETS: '1',
    PROBE_TIMEOUT_MS: '2000',
    DNS_SERVERS: zone.address,
    CONNECT_TO: routes.join(','),
    NODE_EXTRA_CA_CERTS: caFile
  })
  const manage = generateKey()
  await createKey({ db: service.db, name: 'manage', keyHash: hashKey(manage), rateLimit: 100_000, scopes: 'read,manage', now: new Date() })
  const client = apiClient(service.server.info.uri, manage)
  await client.addMonitor({ name: 'Orders DB', target: 'db.site.test', check: { type: 'tcp', port: 5432, tls: false } })
  await client.addMonitor({ name: 'Gone DB', target: 'gone.site.test', check: { type: 'tcp', port: 5432, tls: false } })
  await client.addMonitor({
    name: 'Mail MX',
    target: 'mail.site.test',
    check: { type: 'dns', record: 'MX', expect: ['10 mx.site.test'], rcode: 'NOERROR' }
  })
  await client.addMonitor({
    name: 'IMAPS',
    target: 'soon.site.test',
    check: { type: 'tls', port: 8443, assertions: [{ source: 'certificate_days', comparison: 'greater_than', target: '7' }] }
  })
  const newest = async (slug: string): Promise<Entry[]> => {
    const row = await service
      .db('checks')
      .join('sites', 'sites.id', 'checks.site_id')
      .where('sites.domain', `monitor:${slug}`)
      .orderBy('checks.id', 'desc')
      .first('checks.locations')
    return row ? JSON.parse(row.locations as string) : []
  }
  const agentSaid = async (slug: string, status: string): Promise<boolean> =>
    (await newest(slug)).some((l) => l.location === AGENT && l.status === status)

  t.ok(await holds(async () => (await client.getMonitorStatus('gone-db')).last_outage !== null, 30_000), 'the closed port: an outage')
  t.ok(await holds(() => agentSaid('gone-db', 'down'), 15_000), 'the agent location voted down')
  t.match(
    (await newest('gone-db')).find((l) => l.location === AGENT),
    { code: 'connect_refused' }
  )

  t.ok(await holds(() => agentSaid('orders-db', 'up'), 30_000), 'the agent reached the open port by its own route')
  t.match(await client.getMonitorStatus('orders-db'), { status: 'up', last_outage: null })

  t.ok(await holds(() => agentSaid('mail-mx', 'up'), 30_000), "the agent's resolver gave the expected MX")
  zone.set('mail.site.test', { MX: ['20 other.site.test'] })
  t.ok(await holds(async () => (await client.getMonitorStatus('mail-mx')).last_outage !== null, 30_000), 'the answer changed: an outage')
  t.match(
    (await newest('mail-mx')).find((l) => l.location === AGENT),
    { status: 'down', code: 'dns_answer_mismatch' }
  )

  t.ok(
    await holds(async () => (await client.getMonitorStatus('imaps')).last_outage !== null, 30_000),
    '3 days left of more than 7: an outage'
  )
  const seen = (await newest('imaps')).find((l) => l.location === AGENT)
  t.match(seen, { status: 'down', code: 'assertion_failed' }, 'the agent judged the days, its handshake good')
  const left = Math.floor((Date.parse(seen?.tls_expires_at ?? '') - Date.now()) / DAY)
  t.ok(left >= 2 && left <= 3, `the agent saw the certificate expire in 3 days (${left} whole days left)`)
})
