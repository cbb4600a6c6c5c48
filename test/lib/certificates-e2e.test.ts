import { X509Certificate } from 'node:crypto'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { loadConfig } from '../../config/index.js'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createLogger } from '../../lib/logger.js'
import { startService, type RunningService } from '../../lib/main.js'
import { addSite } from '../../lib/monitoring/add-sites.js'
import { openDb, type Db } from '../../lib/store/db.js'
import { createKey } from '../../lib/store/keys.js'
import { apiClient } from '../helpers/api-client.js'
import { chromiumMissing, launchChromium } from '../helpers/browser.js'
import { createMigratedDatabase, engines } from '../helpers/db.js'
import { matchesOpenApi } from '../helpers/openapi.js'
import { holds } from '../helpers/poll.js'
import { bearer, LogCapture } from '../helpers/server.js'
import { SseClient } from '../helpers/sse.js'
import { closedPort, makeCert, startHttpsTarget, startHttpTarget } from '../helpers/targets.js'
import { receiver } from '../helpers/webhooks.js'
import { TEST_ACTORS } from '../helpers/compiled.js'

/*
 * The whole path, for real over loopback: certificates made here with 3 and 30 days left, probed by
 * the service's location actors, recorded, shown in the status record and on the page, announced
 * once as certificate.expiring to a stream and a webhook, and not again after a restart.
 */

const DAY = 86_400_000
const soon = makeCert({ days: 3, subject: '/O=Site Status Tests/CN=Three Days' })
const later = makeCert({ days: 30, subject: '/O=Site Status Tests/CN=Thirty Days' })
const soonTarget = await startHttpsTarget(soon)
const laterTarget = await startHttpsTarget(later)
const web = await startHttpTarget()
const closed = await closedPort()
t.teardown(async () => {
  await Promise.all([soonTarget.close(), laterTarget.close(), web.close()])
})

const browserMissing = chromiumMissing()
if (browserMissing !== null) t.comment(browserMissing)

const notAfter = (pem: string): string => new Date(new X509Certificate(pem).validTo).toISOString()
const daysLeft = (iso: string): number => Math.floor((Date.parse(iso) - Date.now()) / DAY)

const CONNECT_TO = [
  `soon.site.test:443:127.0.0.1:${soonTarget.port}`,
  `later.site.test:443:127.0.0.1:${laterTarget.port}`,
  `:443:127.0.0.1:${closed}`,
  `:80:127.0.0.1:${web.port}`
].join(',')

for (const engine of engines()) {
  t.test(`certificates of 3 and 30 days, probed, shown and announced once, on ${engine}`, async (t) => {
    const database = await createMigratedDatabase(engine)
    t.teardown(() => database.cleanup())
    const setup = openDb(database.url)
    for (const domain of ['later.site.test', 'plain.site.test'])
      await addSite({ db: setup, entry: { domain, name: domain }, now: new Date() })
    const key = generateKey()
    await createKey({ db: setup, name: 'e2e', keyHash: hashKey(key), rateLimit: 100_000, scopes: 'read,check,manage', now: new Date() })
    await setup.destroy()

    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      CHECK_INTERVAL_S: '1',
      PROBE_TIMEOUT_MS: '2000',
      ALLOW_PRIVATE_TARGETS: '1',
      CONNECT_TO
    })
    const start = (): Promise<RunningService> =>
      startService({
        config,
        actors: TEST_ACTORS,
        logger: createLogger({ level: 'info', stream: new LogCapture() }),
        extraCa: soon.cert + later.cert
      })
    let service = await start()
    let stopped = false
    t.teardown(async () => {
      if (!stopped) await service.stop()
    })
    // The API through the client, over the service's listening port; through inject where the raw
    // answer is checked against the OpenAPI document (matchesOpenApi reads an inject response).
    let client = apiClient(service.server.info.uri, key)
    const api = async (method: string, url: string, payload?: unknown) => {
      const res = await service.server.inject({
        method,
        url,
        headers: { ...bearer(key), ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
        payload: payload === undefined ? undefined : JSON.stringify(payload)
      })
      return { res, body: String(res.headers['content-type']).includes('json') ? JSON.parse(res.payload) : res.payload }
    }
    const checksOf = async (db: Db, domain: string): Promise<number> => {
      const row = await db('checks').join('sites', 'sites.id', 'checks.site_id').where('sites.domain', domain).count({ n: '*' }).first()
      return Number(row?.n ?? 0)
    }
    const announced = async (db: Db) =>
      (await db('events').where({ type: 'certificate.expiring' }).orderBy('id').select('data')).map((r: { data: string }) =>
        JSON.parse(r.data)
      )

    // Streams and webhooks: a stream replaying from the start, a webhook that wants only this type.
    const port = service.server.info.port
    const stream = await SseClient.connect(`http://127.0.0.1:${port}/api/v1/events?since=0`, bearer(key))
    t.teardown(() => {
      stream.close()
    })
    const hook = await receiver(t)
    const created = await api('POST', '/api/v1/webhooks', { url: hook.url, events: ['certificate.expiring'] })
    t.equal(created.res.statusCode, 201, 'a webhook may subscribe to certificate.expiring')
    matchesOpenApi(t, created.res)
    const secret = (created.body as { secret: string }).secret
    // Tracked only now, so that the webhook exists before its certificate is first seen.
    await client.addSite({ domain: 'soon.site.test', name: 'Soon' })
    t.equal(client.statuses.at(-1), 201)

    // An on-demand check reports each location's certificate.
    const checked = await api('POST', '/api/v1/check', { domain: 'soon.site.test' })
    t.equal(checked.res.statusCode, 200)
    matchesOpenApi(t, checked.res)
    t.equal(checked.body.locations.length, 3)
    for (const l of checked.body.locations) {
      t.match(l, {
        status: 'up',
        final_url: 'https://soon.site.test/',
        tls_expires_at: notAfter(soon.cert),
        tls_issuer: 'CN=Three Days, O=Site Status Tests'
      })
    }
    const plain = await client.checkDomain('plain.site.test')
    for (const l of plain.locations) t.match(l, { status: 'up', final_url: 'http://plain.site.test/', tls_expires_at: null })

    // The status records, once the scheduler has checked every site.
    const ready = await holds(async () => {
      const records = await Promise.all(['soon', 'later', 'plain'].map((d) => client.getStatus(`${d}.site.test`)))
      return records.every((r) => typeof r.checked_at === 'string') && records[0]?.tls !== null && records[1]?.tls !== null
    }, 20_000)
    t.ok(ready, 'every site was checked')
    const soonRecord = await api('GET', '/api/v1/status/soon.site.test')
    matchesOpenApi(t, soonRecord.res)
    t.same(soonRecord.body.tls, {
      expires_at: notAfter(soon.cert),
      days_remaining: daysLeft(notAfter(soon.cert)),
      issuer: 'CN=Three Days, O=Site Status Tests'
    })
    t.equal(soonRecord.body.tls.days_remaining, 2, 'made with 3 days: 2 whole days and some hours left')
    const laterRecord = await client.getStatus('later.site.test')
    t.same(laterRecord.tls, { expires_at: notAfter(later.cert), days_remaining: 29, issuer: 'CN=Thirty Days, O=Site Status Tests' })
    t.equal((await client.getStatus('plain.site.test')).tls, null, 'a site reached over http only has none')
    const listed = await api('GET', '/api/v1/sites')
    matchesOpenApi(t, listed.res)
    t.same(
      listed.body.sites.map((s: { domain: string; tls: { days_remaining: number } | null }) => [s.domain, s.tls?.days_remaining ?? null]),
      [
        ['later.site.test', 29],
        ['plain.site.test', null],
        ['soon.site.test', 2]
      ]
    )

    // The pages: a warning for the 3-day certificate, none for the 30-day one. (Handlebars writes `=` as &#x3D;.)
    const page = async (domain: string): Promise<string> =>
      (await service.server.inject(`/sites/${domain}`)).payload.replaceAll('&#x3D;', '=')
    const soonPage = await page('soon.site.test')
    t.match(
      soonPage,
      /<p id="certificate-warning" class="warning" role="alert">The TLS certificate expires on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(2 days left\)/
    )
    t.match(
      soonPage,
      /<dd id="certificate">expires <time datetime="[^"]+">[^<]+<\/time> \(2 days left\), issued by CN=Three Days, O=Site Status Tests<\/dd>/
    )
    const laterPage = await page('later.site.test')
    t.notMatch(laterPage, /certificate-warning/, 'no warning with 29 days left')
    t.match(laterPage, /\(29 days left\), issued by CN=Thirty Days/)
    t.match(await page('plain.site.test'), /<dd id="certificate">none seen/)
    if (engine === 'sqlite' && browserMissing === null) {
      // And as a visitor sees it, in headless Chromium: the warning is visible on one page only.
      const browser = await launchChromium(t)
      const tab = await browser.newPage()
      await tab.goto(`http://127.0.0.1:${port}/sites/soon.site.test`)
      t.ok(await tab.isVisible('#certificate-warning'), 'Chromium shows the warning for 2 days left')
      t.match(await tab.textContent('#certificate-warning'), /^The TLS certificate expires on .* \(2 days left\)/)
      t.equal(
        await tab.$eval('#certificate-warning', (el) => getComputedStyle(el).borderLeftStyle),
        'solid',
        "styled as a warning by the page's own sheet"
      )
      await tab.goto(`http://127.0.0.1:${port}/sites/later.site.test`)
      t.notOk(await tab.isVisible('#certificate-warning'), 'and none for 29 days left')
      t.match(await tab.textContent('#certificate'), /\(29 days left\), issued by CN=Thirty Days, O=Site Status Tests/)
      await browser.close()
    }

    // Announced once: more checks of the same certificate bring nothing new.
    const seen = await checksOf(service.db, 'soon.site.test')
    t.ok(await holds(async () => (await checksOf(service.db, 'soon.site.test')) >= seen + 3, 20_000), 'three more checks recorded')
    const events = await announced(service.db)
    t.equal(events.length, 1, 'one certificate.expiring in all')
    t.match(events[0], {
      site: { domain: 'soon.site.test', name: 'Soon' },
      expires_at: notAfter(soon.cert),
      days_remaining: 2,
      threshold_days: 7,
      issuer: 'CN=Three Days, O=Site Status Tests'
    })
    await stream.waitFor((c) => c.events.some((e) => e.type === 'certificate.expiring'), 10_000, 'certificate.expiring')
    t.same(
      stream.events.filter((e) => e.type === 'certificate.expiring').map((e) => e.data),
      events,
      'the stream carries it, with the same data'
    )
    t.ok(await holds(() => hook.got.length >= 1, 15_000), 'the webhook got it')
    const delivery = hook.got[0]
    const delivered = new Webhook(secret).verify(delivery?.body ?? '', delivery?.headers as Record<string, string>) as {
      type: string
      data: unknown
    }
    t.equal(delivered.type, 'certificate.expiring', 'signed, of the type subscribed to')
    t.same(delivered.data, events[0], 'with the same data')

    // A restart: the certificate is known at once, and nothing is announced again.
    stream.close()
    await service.stop()
    service = await start()
    client = apiClient(service.server.info.uri, key)
    const afterRestart = await client.getStatus('soon.site.test')
    t.same(afterRestart.tls, soonRecord.body.tls, 'the status record has the certificate before any new check')
    const before = await checksOf(service.db, 'soon.site.test')
    t.ok(await holds(async () => (await checksOf(service.db, 'soon.site.test')) >= before + 3, 20_000), 'checked again after the restart')
    t.equal((await announced(service.db)).length, 1, 'still one certificate.expiring after the restart')
    t.equal(hook.got.length, 1, 'and one delivery')
    await service.stop()
    stopped = true
  })
}
