import t, { type Test } from 'tap'
import { SiteStatusClient, isBatchCheckError, type BatchCheckItem } from '../../../lib/client/index.js'
import { heldTarget } from '../../helpers/held-target.js'
import { startTrackedService } from '../../helpers/tracked-service.js'

// checkMany and checkDomains against the real batch route: real actors probing a loopback target
// whose `*.held.test` sites never answer, so that a batch can be left while its probes are under way.
const TRACKED = { domain: 'tracked.example.com', name: 'Tracked' }

async function service(t: Test) {
  const site = await heldTarget(t)
  const tracked = await startTrackedService(t, {
    engine: 'sqlite',
    site: TRACKED,
    // A held site would be given up on after 20 s: a probe that ends sooner was ended by the hang-up.
    env: ({ closed }) => ({ PROBE_TIMEOUT_MS: '20000', CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${site.port}` })
  })
  const client = new SiteStatusClient({ baseUrl: `http://127.0.0.1:${tracked.service.server.info.port}`, key: tracked.key })
  return { site, tracked, client, locations: tracked.config.locations.length }
}

t.test('checkMany yields each line of a real batch, checkDomains answers it whole; both spend 5 per distinct domain', async (t) => {
  const { client } = await service(t)
  const domains = ['a.instant.test', 'B.Instant.test', 'http://a.instant.test/', 'not a domain', 'c.instant.test']
  const batch = client.checkMany(domains)
  const lines: BatchCheckItem[] = []
  for await (const line of batch) lines.push(line)
  t.same(lines.map((l) => [l.domain, isBatchCheckError(l) ? l.code : l.status]).sort(), [
    ['a.instant.test', 'up'],
    ['b.instant.test', 'up'],
    ['c.instant.test', 'up'],
    ['not a domain', 'invalid_domain']
  ])
  t.same(batch.summary, { domains: 4, checked: 3, cached: 0, errors: 1 })
  const spent = await client.getRateLimit()
  t.equal(spent.used, 15, 'three distinct valid domains: 15 units')

  const whole = await client.checkDomains(domains)
  t.same(whole.summary, { domains: 4, checked: 3, cached: 3, errors: 1 }, 'the same batch again: the results reused')
  t.equal((await client.getRateLimit()).used, 30)
  t.match(client.budget, { remaining: 100_000 - 30, pending: 0 })
})

t.test('leaving the checkMany loop hangs up: the probes only that batch waited for end at once', async (t) => {
  const { site, client, locations } = await service(t)
  const held = ['x1.held.test', 'x2.held.test']
  let leftAt = 0
  for await (const line of client.checkMany(['quick.instant.test', ...held])) {
    t.equal(line.domain, 'quick.instant.test', 'the quick domain completes first')
    await site.when(() => held.every((h) => site.seen(h) === locations))
    leftAt = Date.now()
    break
  }
  await site.when(() => held.every((h) => site.closes.filter((s) => s === h).length === locations))
  t.ok(Date.now() - leftAt < 10_000, 'the held probes ended long before their 20 s deadline')
})
