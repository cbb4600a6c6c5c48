import net from 'node:net'
import t from 'tap'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createKey } from '../../lib/store/keys.js'
import { apiClient } from '../helpers/api-client.js'
import { engines } from '../helpers/db.js'
import { startDnsZone } from '../helpers/dns-zone.js'
import { holds } from '../helpers/poll.js'
import { bearer } from '../helpers/server.js'
import { closedPort, makeCert, startHttpsTarget } from '../helpers/targets.js'
import { startTrackedService } from '../helpers/tracked-service.js'

/*
 * Monitors of kind tcp, tls and dns, end to end on loopback (issue 47): the real service, its
 * scheduler (the lease scheduler on MySQL) and three local locations, each monitor a `sites` row
 * probed by its own check at its target: a TCP monitor of a closed port opens its outage and one of
 * an open port does not; a DNS monitor goes down when its answer changes; a TLS monitor sees a
 * certificate expiring in 3 days and announces it. Every name reaches loopback through CONNECT_TO
 * and a DNS server in this process (DNS_SERVERS).
 */

const DAY = 86_400_000
const open = net.createServer((socket) => {
  socket.on('error', () => {})
  socket.end('+OK ready\r\n')
})
await new Promise<void>((resolve) => open.listen(0, '127.0.0.1', resolve))
t.teardown(() => open.close())
const openPort = (open.address() as net.AddressInfo).port
const closed = await closedPort()
const soon = makeCert({ days: 3, subject: '/O=Site Status Tests/CN=Three Days' })
const tlsTarget = await startHttpsTarget(soon)
t.teardown(() => tlsTarget.close())
const zone = await startDnsZone(t, { 'mail.site.test': { MX: ['10 mx.site.test'] } })

for (const engine of engines()) {
  t.test(`tcp, tls and dns monitors probed on the schedule, on ${engine}`, async (t) => {
    zone.set('mail.site.test', { MX: ['10 mx.site.test'] })
    const { service, key } = await startTrackedService(t, {
      engine,
      site: { domain: 'plain.site.test', name: 'Plain' },
      extraCa: soon.cert,
      env: (ports) => ({
        CHECK_INTERVAL_S: '1',
        PROBE_TIMEOUT_MS: '2000',
        DNS_SERVERS: zone.address,
        CONNECT_TO: [
          `db.site.test:5432:127.0.0.1:${openPort}`,
          `gone.site.test:5432:127.0.0.1:${closed}`,
          `soon.site.test:8443:127.0.0.1:${tlsTarget.port}`,
          `:443:127.0.0.1:${ports.closed}`,
          `:80:127.0.0.1:${ports.http}`
        ].join(',')
      })
    })
    const manage = generateKey()
    await createKey({
      db: service.db,
      name: 'manage',
      keyHash: hashKey(manage),
      rateLimit: 100_000,
      scopes: 'read,manage',
      now: new Date()
    })
    const client = apiClient(service.server.info.uri, manage)

    await client.addMonitor({
      name: 'Orders DB',
      target: 'db.site.test',
      check: { type: 'tcp', port: 5432, expect_prefix: '+OK', tls: false }
    })
    await client.addMonitor({ name: 'Gone DB', target: 'gone.site.test', check: { type: 'tcp', port: 5432, tls: false } })
    await client.addMonitor({
      name: 'Mail MX',
      target: 'mail.site.test',
      check: { type: 'dns', record: 'MX', expect: ['10 mx.site.test'], rcode: 'NOERROR' }
    })
    await client.addMonitor({ name: 'IMAPS', target: 'soon.site.test', check: { type: 'tls', port: 8443 } })
    const status = (slug: string) => client.getMonitorStatus(slug)
    const checkedTwice = async (slug: string): Promise<boolean> => {
      const id = (
        await service
          .db('sites')
          .where({ domain: `monitor:${slug}` })
          .first('id')
      ).id as number
      const row = await service.db('checks').where({ site_id: id }).count({ n: '*' }).first()
      return Number(row?.n ?? 0) >= 2
    }

    t.ok(await holds(async () => (await status('gone-db')).last_outage !== null, 20_000), 'the closed port opened an outage')
    const gone = await status('gone-db')
    t.match(gone, { kind: 'tcp', target: 'gone.site.test', status: 'down', last_outage: { ended_at: null } })
    t.match(gone.cause?.locations[0], { code: 'connect_refused' }, 'refused at the locations')
    const listed = await client.listOutages({ monitor: 'gone-db' })
    t.match(listed.outages, [{ domain: 'monitor:gone-db', monitor: { kind: 'tcp', slug: 'gone-db' } }])

    t.ok(await holds(() => checkedTwice('orders-db'), 20_000), 'the open port was checked')
    t.match(await status('orders-db'), { status: 'up', partial: false, last_outage: null }, 'the open port: up, no outage')

    t.ok(await holds(async () => (await status('mail-mx')).status === 'up', 20_000), 'the MX record as expected: up')
    zone.set('mail.site.test', { MX: ['20 other.site.test'] })
    t.ok(await holds(async () => (await status('mail-mx')).last_outage !== null, 20_000), 'the answer changed: an outage')
    const mail = await status('mail-mx')
    t.match(mail, { kind: 'dns', status: 'down' })
    t.match(mail.cause?.locations[0], { code: 'dns_answer_mismatch' })

    t.ok(await holds(async () => (await status('imaps')).tls !== null, 20_000), 'the certificate was seen')
    const imaps = await status('imaps')
    t.match(imaps, { kind: 'tls', status: 'up' })
    const left = Math.floor((Date.parse(imaps.tls?.expires_at ?? '') - Date.now()) / DAY)
    t.ok(left >= 2 && left <= 3, `expires in 3 days (${left} whole days left)`)
    t.ok(
      await holds(
        async () => Number((await service.db('events').where({ type: 'certificate.expiring' }).count({ n: '*' }).first())?.n) > 0,
        10_000
      ),
      'announced'
    )
    const expiring = (await service.db('events').where({ type: 'certificate.expiring' }).select('data')).map((r: { data: string }) =>
      JSON.parse(r.data)
    )
    t.match(expiring, [{ monitor: { kind: 'tls', slug: 'imaps' }, threshold_days: 7 }], 'certificate.expiring names the monitor')

    const metrics = await fetch(`${service.server.info.uri}/metrics`, { headers: bearer(key) }).then((r) => r.text())
    t.match(metrics, /probe_success\{monitor="orders-db",kind="tcp",location="[^"]+"\} 1/, 'per monitor and location')
    t.match(metrics, /probe_dns_lookup_time_seconds\{monitor="mail-mx",kind="dns",location=/)
    t.notMatch(metrics, /domain="monitor:/, 'never as a domain')
    t.match(await client.getMonitorBadge('gone-db'), /down/, 'its badge')
  })
}
