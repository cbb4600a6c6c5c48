/**
 * Monitors' rows (tcp, tls, dns) round trip on both engines, and the queries that read the sites to
 * probe or hold in memory take them, but not heartbeats; the web sites' own lists leave them out.
 */
import t from 'tap'
import { addSite } from '../../../lib/monitoring/add-sites.js'
import { addHeartbeat } from '../../../lib/heartbeats/manage.js'
import { NO_EXPECTATIONS } from '../../../lib/rules/expectations.js'
import { monitorDomain } from '../../../lib/rules/monitor.js'
import { isDuplicateKey } from '../../../lib/store/db.js'
import { listDueTimes, listUnscheduledSites } from '../../../lib/store/leases.js'
import { findMonitor, insertMonitor, listMonitors, markMonitorRemoved, writeMonitor } from '../../../lib/store/monitors.js'
import { listTrackedIds, loadSiteStates } from '../../../lib/store/site-states.js'
import { listTrackedSites } from '../../../lib/store/sites.js'
import { engines, migratedDb } from '../../helpers/db.js'

const NOW = new Date('2026-11-29T12:00:00.000Z')
const TCP = JSON.stringify({ type: 'tcp', port: 5432, send: null, expect_prefix: null, tls: false, assertions: [] })
const DNS = JSON.stringify({ type: 'dns', record: 'MX', expect: ['10 mx.example.com'], rcode: 'NOERROR', assertions: [] })

for (const engine of engines()) {
  t.test(`monitors' rows on ${engine}`, async (t) => {
    const { db } = await migratedDb(engine, t)
    await addSite({ db, entry: { domain: 'shop.example.com', name: 'Shop' }, now: NOW })
    await addHeartbeat({
      db,
      slug: 'backup',
      settings: { name: 'Backup', schedule: { every_s: 60 }, grace_s: 30, max_runtime_s: null },
      now: NOW
    })
    const columns = {
      name: 'Orders DB',
      kind: 'tcp',
      target: 'db.example.com',
      interval_s: 30,
      expect: { ...NO_EXPECTATIONS, max_response_ms: 500 },
      check: TCP
    }
    const row = await insertMonitor({ db, domain: monitorDomain('orders-db'), monitor: columns, now: NOW })
    t.match(row, {
      domain: 'monitor:orders-db',
      name: 'Orders DB',
      kind: 'tcp',
      target: 'db.example.com',
      interval_s: 30,
      expect: { max_response_ms: 500, status: null },
      check: TCP,
      status: 'unavailable',
      checked_at: null,
      added_at: NOW
    })
    await t.rejects(
      insertMonitor({ db, domain: monitorDomain('orders-db'), monitor: columns, now: NOW }).catch((err: unknown) => {
        throw new Error(isDuplicateKey(err) ? 'duplicate' : String(err))
      }),
      { message: 'duplicate' },
      'one monitor a slug'
    )
    await insertMonitor({ db, domain: monitorDomain('mail'), monitor: { ...columns, name: 'Mail', kind: 'dns', check: DNS }, now: NOW })

    t.same(
      (await listMonitors({ db, limit: 10 })).map((m) => [m.domain, m.kind]),
      [
        ['monitor:mail', 'dns'],
        ['monitor:orders-db', 'tcp']
      ]
    )
    t.same(
      (await listMonitors({ db, limit: 1, after: 'monitor:mail' })).map((m) => m.domain),
      ['monitor:orders-db']
    )

    const probed = (await listTrackedIds({ db })).map((s) => [s.domain, s.kind, s.target]).sort()
    t.same(
      probed,
      [
        ['monitor:mail', 'dns', 'db.example.com'],
        ['monitor:orders-db', 'tcp', 'db.example.com'],
        ['shop.example.com', 'http', null]
      ],
      'the sites to probe: web sites and monitors, never heartbeats'
    )
    t.same((await loadSiteStates({ db, since: new Date(0) })).map((s) => s.site.domain).sort(), [
      'monitor:mail',
      'monitor:orders-db',
      'shop.example.com'
    ])
    t.same((await listDueTimes({ db })).map((s) => s.domain).sort(), ['monitor:mail', 'monitor:orders-db', 'shop.example.com'])
    t.same((await listUnscheduledSites({ db, limit: 10 })).map((s) => s.domain).sort(), [
      'monitor:mail',
      'monitor:orders-db',
      'shop.example.com'
    ])
    t.same(
      (await listTrackedSites({ db })).map((s) => s.domain),
      ['shop.example.com'],
      'the web sites alone'
    )

    const later = new Date(NOW.getTime() + 60_000)
    await writeMonitor({
      db,
      id: row.id,
      monitor: { ...columns, kind: 'tls', target: 'db2.example.com', interval_s: null, check: TCP },
      now: later
    })
    t.match(await findMonitor({ db, domain: 'monitor:orders-db' }), { kind: 'tls', target: 'db2.example.com', interval_s: null })

    await markMonitorRemoved({ db, row, now: later })
    t.equal(await findMonitor({ db, domain: 'monitor:orders-db' }), null)
    t.match(
      await db('sites').where({ id: row.id }).first('domain', 'removed_at'),
      { domain: `monitor:orders-db~${row.id}` },
      'kept as history'
    )
    t.ok(await insertMonitor({ db, domain: monitorDomain('orders-db'), monitor: columns, now: later }), 'the slug is free again')
  })
}
