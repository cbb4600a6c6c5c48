import t from 'tap'
import { SiteStatusClient, SiteStatusError } from '../../../lib/client/index.js'
import { addSites } from '../../../lib/monitoring/add-sites.js'
import { migratedDb } from '../../helpers/db.js'
import { storePage } from '../../helpers/status-pages.js'
import { testServer } from '../../helpers/server.js'
import { receiver } from '../../helpers/webhooks.js'

t.test("the client's alerting methods against a real server", async (t) => {
  const { db } = await migratedDb('sqlite', t)
  const { server, issueKey } = await testServer({ db, env: { ALLOW_PRIVATE_TARGETS: '1', HOST: '127.0.0.1' } })
  await server.start()
  t.teardown(() => server.stop())
  const client = new SiteStatusClient({ baseUrl: server.info.uri, key: await issueKey({ scopes: 'manage' }) })
  const hook = await receiver(t)

  const channel = await client.createChannel({ name: 'chat', kind: 'slack', config: { url: hook.url } })
  t.match(channel, { id: Number, kind: 'slack', secret_fields: ['url'] })
  t.same((await client.listChannels()).channels, [channel])
  t.same(await client.getChannel(channel.id), channel)
  t.match(await client.changeChannel(channel.id, { name: 'team chat' }), { name: 'team chat' })
  t.match(await client.testChannel(channel.id), { delivered: true, http_code: 200, answer: 'thanks' })
  t.match((await client.listChannelDeliveries(channel.id, { limit: 1 })).deliveries, [{ kind: 'test', status: 'delivered' }])

  const policy = await client.createAlertPolicy({ name: 'web', channels: [channel.id], after_min: 5 })
  t.match(policy, { name: 'web', after_min: 5, default: false })
  t.same((await client.listAlertPolicies()).policies, [policy])
  t.same(await client.getAlertPolicy(policy.id), policy)
  t.match(await client.changeAlertPolicy(policy.id, { default: true }), { default: true })

  await addSites({ db, entries: [{ domain: 'app.example.com', name: null }], now: new Date() })
  t.same(await client.setSiteAlerting('app.example.com', { alert_policy: policy.id }), {
    domain: 'app.example.com',
    alert_policy: policy.id,
    page_policies: [],
    depends_on: null
  })
  t.match(await client.getSiteAlerting('app.example.com'), { alert_policy: policy.id })
  await storePage(db, { slug: 'shop', title: 'Shop', description: null, logo_url: null }, [{ domain: 'app.example.com' }], new Date())
  t.same(await client.setPageAlerting('shop', policy.id), { slug: 'shop', alert_policy: policy.id })
  t.same(await client.getPageAlerting('shop'), { slug: 'shop', alert_policy: policy.id })

  await client.deleteAlertPolicy(policy.id)
  await client.deleteChannel(channel.id)
  t.same((await client.listChannels()).channels, [])
  await t.rejects(client.getChannel(channel.id), SiteStatusError)
  const refused: unknown = await client.createChannel({ name: 'x', kind: 'slack', config: { url: 'ftp://x' } }).catch((err: unknown) => err)
  t.match(refused, { status: 400 })
})
