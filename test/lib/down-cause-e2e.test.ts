/**
 * Why a site is down (issue 54): a site answering HTTP 500 everywhere shows `http: 500` as its
 * cause on the status record, on the outage it opened, on its site page and on a status page that
 * lists it, in words there too ("HTTP 500 from 3 of 3 locations"), never "could not reach the site".
 * On both engines: the cause is written with the site's state and the outage, and read back.
 */
import t from 'tap'
import { apiClient } from '../helpers/api-client.js'
import { until } from '../helpers/poll.js'
import { storePage } from '../helpers/status-pages.js'
import { startTrackedService } from '../helpers/tracked-service.js'
import { engines } from '../helpers/db.js'

for (const engine of engines()) {
  t.test(`${engine}: a site answering 500 shows http: 500 as its cause everywhere`, async (t) => {
    const tracked = await startTrackedService(t, {
      engine,
      site: { domain: 'shop.test', name: 'Shop' },
      env: { CHECK_INTERVAL_S: '1', CACHE_TTL_S: '0' },
      respond: (_req, res) => res.writeHead(500).end('oops')
    })
    const base = tracked.service.server.info.uri
    const client = apiClient(base, tracked.key)
    await storePage(
      tracked.service.db,
      { slug: 'acme', title: 'Acme', description: null, logo_url: null },
      [{ domain: 'shop.test', name: 'Our shop' }],
      new Date()
    )

    const outages = await until(
      () => client.listOutages({ domain: 'shop.test' }),
      (page) => page.outages.length === 1,
      20_000
    )
    const [outage] = outages.outages
    t.equal(outage?.cause?.summary, 'HTTP 500 from 3 of 3 locations', 'the outage keeps its cause in words')
    t.equal(outage?.cause?.locations.length, 3)
    for (const l of outage?.cause?.locations ?? []) t.match(l, { status: 'down', code: 'http_5xx', error: 'http: 500', http_code: 500 })

    const status = await client.getStatus('shop.test')
    t.equal(status.status, 'down')
    t.equal(status.cause?.summary, 'HTTP 500 from 3 of 3 locations', 'the status record says why')
    for (const l of status.cause?.locations ?? []) t.match(l, { code: 'http_5xx', error: 'http: 500', http_code: 500 })

    const sitePage = await (await fetch(`${base}/sites/shop.test`)).text()
    t.match(sitePage, /Why: HTTP 500 from 3 of 3 locations/, 'the site page says why in words')
    t.match(sitePage, /<code>http: 500<\/code>/, 'and each location its error')
    t.notMatch(sitePage, /could not reach the site/)
    t.match(sitePage, /class="outage-cause">HTTP 500 from 3 of 3 locations/, 'its outage row says why it opened')

    const statusPage = await (await fetch(`${base}/status/acme`)).text()
    t.match(statusPage, /HTTP 500 from 3 of 3 locations \(<code>http: 500<\/code>\)/, 'the status page says why')
    const view = (await (await fetch(`${base}/status/acme.json`)).json()) as { sites: Array<{ cause: unknown }> }
    t.same(view.sites[0]?.cause, { summary: 'HTTP 500 from 3 of 3 locations', errors: ['http: 500'] })
  })
}
