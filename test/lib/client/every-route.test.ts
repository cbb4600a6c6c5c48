import t from 'tap'
import { generateKey, hashKey } from '../../../lib/keys.js'
import { createKey } from '../../../lib/store/keys.js'
import { SiteStatusClient, SiteStatusError, type ServiceEvent } from '../../../lib/client/index.js'
import { storePage } from '../../helpers/status-pages.js'
import { startTrackedService } from '../../helpers/tracked-service.js'
import { receiver } from '../../helpers/webhooks.js'

// Every method of the client against the real service (real location actors probing a loopback
// target, the event feed, the webhook dispatcher), answers and errors alike. The batch route's
// methods are tested against a stand-in (streams.test.ts) until the route is in this tree.
const TRACKED = { domain: 'tracked.example.com', name: 'Tracked' }

t.test('every route method works on the real service', async (t) => {
  const tracked = await startTrackedService(t, { engine: 'sqlite', site: TRACKED, env: {} })
  const baseUrl = `http://127.0.0.1:${tracked.service.server.info.port}`
  const key = generateKey()
  await createKey({
    db: tracked.service.db,
    name: 'manager',
    keyHash: hashKey(key),
    rateLimit: 100_000,
    scopes: 'read,check,manage',
    now: new Date()
  })
  const client = new SiteStatusClient({ baseUrl, key })

  t.match(await client.health(), { status: 'ok', database: 'ok' })
  t.equal((await client.getOpenApi()).openapi, '3.1.0')
  t.match(await client.getRateLimit(), { limit: 100_000, remaining: 100_000 })
  t.match(await client.getMetrics(), /^# HELP /m)

  const check = await client.checkDomain('Tracked.Example.com')
  t.match(check, { domain: 'tracked.example.com', status: 'up', cached: false })
  t.equal(check.locations.length, tracked.config.locations.length, "each location's answer")
  t.match(client.budget, { limit: 100_000, remaining: 100_000 - 5, pending: 0 }, 'a check spent 5 units')
  const missing = await client.checkDomain('tracked.example.com', { expect: { body_contains: 'Sign in' } })
  t.match(missing, { status: 'down', cached: false }, 'expectations travel with the check: the body lacks the text')
  t.ok(missing.locations.every((l) => l.error === 'expect: body_contains not found'))
  const found = await client.checkDomain('tracked.example.com', { expect: { body_contains: 'ok', max_response_ms: 60_000 } })
  t.match(found, { status: 'up', slow: false })
  const batch = await client.checkDomains(['tracked.example.com'], { expect: { status: [503] } })
  t.match(batch.results, [{ domain: 'tracked.example.com', status: 'down' }], 'a batch takes them too')

  t.match(await client.getStatus('tracked.example.com'), { domain: 'tracked.example.com', name: 'Tracked' })
  t.same(
    (await client.listSites({ limit: 10 })).sites.map((s) => s.domain),
    ['tracked.example.com']
  )
  t.same(await client.listOutages({ domain: 'tracked.example.com', ongoing: '1' }), { outages: [], next_cursor: null })
  t.match(await client.getSla('tracked.example.com'), { domain: 'tracked.example.com', incidents: 0, maintenance_seconds: 0 })
  const window = await client.addMaintenanceWindow('tracked.example.com', {
    weekly: { day: 'sun', time: '03:00', duration_minutes: 60, zone: 'UTC' },
    reason: 'patching'
  })
  t.match(window, { id: Number, weekly: { day: 'sun', time: '03:00', duration_minutes: 60, zone: 'UTC' }, reason: 'patching' })
  t.same((await client.listMaintenanceWindows('tracked.example.com')).windows, [window])
  await client.removeMaintenanceWindow('tracked.example.com', window.id)
  t.same((await client.listMaintenanceWindows('tracked.example.com')).windows, [], 'the window is gone')

  const page = await client.createPage({ slug: 'acme', title: 'Acme', sites: [{ domain: 'Tracked.Example.com', name: 'Main' }] })
  t.match(page, { slug: 'acme', title: 'Acme', description: null, sites: [{ domain: 'tracked.example.com', name: 'Main' }] })
  t.same((await client.listPages()).pages, [page])
  t.same(await client.getPage('acme'), page)
  t.match(await client.changePage('acme', { description: 'Our services', sites: [{ domain: 'tracked.example.com' }] }), {
    description: 'Our services',
    sites: [{ domain: 'tracked.example.com', name: null }]
  })
  t.match(await client.statusPage('acme'), /<h1>Acme<\/h1>[^]*Our services/, 'the page as HTML, for people')
  await client.deletePage('acme')
  t.same((await client.listPages()).pages, [], 'the page is gone')

  const hook = await receiver(t)
  const webhook = await client.createWebhook({ url: hook.url, events: ['site.added'] })
  t.match(webhook, { url: hook.url, events: ['site.added'], secret: /^whsec_/ })
  t.same(
    (await client.listWebhooks()).webhooks.map((w) => w.id),
    [webhook.id]
  )

  const delivered = hook.arrived()
  t.match(await client.addSite({ domain: 'New.Example.com', name: 'New' }), {
    domain: 'new.example.com',
    name: 'New',
    status: 'pending'
  })
  // Replayed from the stored log: no race with the stream's opening.
  let added: ServiceEvent | undefined
  for await (const event of client.streamEvents({ since: 0 })) {
    if (event.type === 'site.added' && event.data.site.domain === 'new.example.com') {
      added = event
      break
    }
  }
  t.match(added, { type: 'site.added', data: { site: { domain: 'new.example.com', name: 'New' } } })
  t.match(JSON.parse((await delivered).body), { type: 'site.added', data: { site: { domain: 'new.example.com' } } }, 'the webhook was sent')
  const [delivery] = (await client.listDeliveries(webhook.id, { limit: 5 })).deliveries
  t.match(delivery, { type: 'site.added', event_id: added?.id })
  t.match(await client.retryDelivery(webhook.id, delivery?.id ?? 0), { id: delivery?.id, status: 'pending' })
  await client.removeSite('new.example.com')
  t.equal((await client.getSla('new.example.com')).domain, 'new.example.com', 'a removed site keeps its history')
  await t.rejects(client.getStatus('new.example.com'), { name: 'SiteStatusError', status: 404 }, 'and is no longer tracked')
  await client.deleteWebhook(webhook.id)
  t.same((await client.listWebhooks()).webhooks, [], 'the webhook is gone')

  t.match(await client.getBadge('tracked.example.com', { style: 'flat-square' }), /^<svg /)
  t.match(await client.getEndpointBadge('tracked.example.com'), { schemaVersion: 1, label: 'Tracked' })
  t.match(await client.getUptimeBadge('tracked.example.com', { window: '7d', logo: 'clock' }), /^<svg .*uptime 7d: /)
  t.match(await client.getUptimeEndpointBadge('tracked.example.com', { window: '24h' }), { schemaVersion: 1, label: 'uptime 24h' })
  t.match(await client.getResponseTimeBadge('tracked.example.com', { thresholds: '100,200,300' }), /^<svg .*response time 24h: /)
  t.match(await client.getResponseTimeEndpointBadge('tracked.example.com', { window: '30d' }), { label: 'response time 30d' })
  t.match(await client.getChartBadge('tracked.example.com', { window: '7d' }), /^<svg .*<title id="chart-title">Tracked: response time/)
  t.match(await client.siteListPage(), /tracked\.example\.com/)
  t.match(await client.sitePage('tracked.example.com'), /<html/)

  const db = tracked.service.db
  await storePage(
    db,
    { slug: 'tracked', title: 'Tracked services', description: null, logo_url: null },
    [{ domain: 'tracked.example.com' }],
    new Date()
  )
  t.match(await client.getStatusPage('tracked'), { slug: 'tracked', title: 'Tracked services', sites: [{ domain: 'tracked.example.com' }] })
  t.match(
    await client.getStatusPageFeed('tracked'),
    /^<\?xml version="1\.0" encoding="utf-8"\?>\n<feed xmlns="http:\/\/www\.w3\.org\/2005\/Atom">/
  )
  t.match(await client.getPageBadge('tracked', { style: 'flat-square' }), /^<svg .*Tracked services: /)
  t.match(await client.getPageEndpointBadge('tracked'), { schemaVersion: 1, label: 'Tracked services' })
  t.match(await client.getPageUptimeBadge('tracked', { window: '90d' }), /^<svg .*uptime 90d: /)
  t.match(await client.getPageUptimeEndpointBadge('tracked'), { label: 'uptime 30d' })
  t.match(await client.getPageResponseTimeBadge('tracked', { label: 'speed' }), /^<svg .*speed: /)
  t.match(await client.getPageResponseTimeEndpointBadge('tracked', { window: '7d' }), { label: 'response time 7d' })

  t.test('and each error comes with its status, its code and the server text, never the key', async (t) => {
    const reader = new SiteStatusClient({ baseUrl, key: tracked.key })
    const stranger = new SiteStatusClient({ baseUrl, key: generateKey() })
    const cases: Array<[string, () => Promise<unknown>, number, string]> = [
      ['an untracked site', () => client.getStatus('untracked.example.com'), 404, 'not_found'],
      ['a bad domain', () => client.checkDomain('not a domain'), 400, 'bad_request'],
      ['an unknown key', () => stranger.listSites(), 401, 'unauthorized'],
      ['a key without the manage scope', () => reader.addSite({ domain: 'other.example.com' }), 403, 'forbidden'],
      ['a site tracked already', () => client.addSite({ domain: 'tracked.example.com' }), 409, 'conflict'],
      [
        'a page of an untracked site',
        () => client.createPage({ slug: 'x', title: 'X', sites: [{ domain: 'untracked.example.com' }] }),
        400,
        'bad_request'
      ],
      ['a page that is gone', () => client.getPage('acme'), 404, 'not_found'],
      ['a webhook that is gone', () => client.deleteWebhook(webhook.id), 404, 'not_found'],
      ['a bad outages parameter', () => client.listOutages({ limit: 500 }), 400, 'bad_request'],
      ['an HTML page of an untracked site', () => client.sitePage('untracked.example.com'), 404, 'not_found'],
      ['a figure badge of no page', () => client.getPageUptimeEndpointBadge('nope'), 404, 'not_found'],
      ['a bad badge window', () => client.getChartBadge('tracked.example.com', { window: '30d' as '7d' }), 400, 'bad_request']
    ]
    for (const [what, call, status, code] of cases) {
      const error = await call().then(
        () => undefined,
        (err: unknown) => err
      )
      t.ok(error instanceof SiteStatusError, `${what}: a SiteStatusError`)
      t.match(error, { status, code, message: /\S/ }, `${what}: ${status} ${code}`)
      const shown = `${String(error)} ${JSON.stringify(error)}`
      t.notOk(shown.includes(key) || shown.includes(tracked.key), `${what}: no key in the error`)
    }
    const forbidden = await reader.addSite({ domain: 'other.example.com' }).catch((err: unknown) => err as SiteStatusError)
    t.match(forbidden, { message: /manage/ }, "the message is the server's: it names the scope")
  })
})
