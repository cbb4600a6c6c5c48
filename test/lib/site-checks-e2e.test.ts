import t from 'tap'
import { generateKey, hashKey } from '../../lib/keys.js'
import { createKey } from '../../lib/store/keys.js'
import { apiClient } from '../helpers/api-client.js'
import { engines } from '../helpers/db.js'
import { holds } from '../helpers/poll.js'
import { bearer } from '../helpers/server.js'
import { SseClient } from '../helpers/sse.js'
import { startProxy } from '../helpers/targets.js'
import { startTrackedService } from '../helpers/tracked-service.js'

/*
 * A tracked site's own request and assertions, end to end: the real service, its scheduler and three
 * locations (one direct, two through CONNECT proxies dialing from their own loopback addresses, so
 * the target tells the locations apart). The site is an API whose health endpoint answers a POST
 * with an Authorization header; its `$.status` turns "degraded" at one location (no outage), then at
 * two (an outage, judged by the assertion at each location and counted by the quorum). The header
 * reaches the target and nothing else: no answer, page, event or log line holds it.
 */

const API = 'api.example.com'
const TOKEN = 'Bearer tok_e2e_7c0ffee5ecret'
const FROM = ['127.0.0.1', '127.0.0.2', '127.0.0.3'] as const

for (const engine of engines()) {
  t.test(`a JSON health endpoint degraded at two locations opens an outage, at one it does not, on ${engine}`, async (t) => {
    const degraded = new Set<string>()
    const seen: Array<{ method?: string; url?: string; authorization?: string; body: string }> = []
    const proxies = await Promise.all(FROM.slice(1).map((localAddress) => startProxy({ localAddress })))
    t.teardown(() => Promise.all(proxies.map((p) => p.close())))
    const { service, key, logs } = await startTrackedService(t, {
      engine,
      site: { domain: 'plain.example.com', name: 'Plain' },
      env: {
        CHECK_INTERVAL_S: '1',
        PROBE_TIMEOUT_MS: '3000',
        LOCATIONS: JSON.stringify([
          { label: 'Direct 1, Testland' },
          ...proxies.map((p, i) => ({ label: `Proxy ${i + 1}, Testland`, proxy: `http://127.0.0.1:${p.port}` }))
        ])
      },
      respond: (req, res, host) => {
        if (host !== API) {
          res.writeHead(200).end('ok')
          return
        }
        const from = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '')
        let body = ''
        req.setEncoding('utf8')
        req.on('data', (chunk: string) => (body += chunk))
        req.on('end', () => {
          seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, body })
          const ok = req.method === 'POST' && req.headers.authorization === TOKEN
          res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
          res.end(JSON.stringify({ status: ok && !degraded.has(from) ? 'ok' : 'degraded', checks: { db: 'ok' } }))
        })
      }
    })
    const base = `http://127.0.0.1:${service.server.info.port}`
    const manage = generateKey()
    await createKey({
      db: service.db,
      name: 'manage',
      keyHash: hashKey(manage),
      rateLimit: 100_000,
      scopes: 'read,manage',
      now: new Date()
    })
    const client = apiClient(base, manage)
    const stream = await SseClient.connect(`${base}/api/v1/events`, bearer(key))
    t.teardown(() => {
      stream.close()
    })
    const typesOf = (): string[] => stream.events.filter((e) => e.data.site?.domain === API && e.type !== 'site.added').map((e) => e.type)
    const checkedAfter = (after: number) => async () => {
      const s = await client.getStatus(API)
      return s.checked_at !== null && Date.parse(s.checked_at) > after
    }

    const added = await client.addSite({
      domain: API,
      name: 'API',
      check: {
        type: 'http',
        method: 'POST',
        path: '/health?deep=1',
        headers: { Authorization: TOKEN, 'Content-Type': 'application/json' },
        body: '{"probe":true}',
        assertions: [
          { source: 'json_body', property: '$.status', comparison: 'equals', target: 'ok' },
          { source: 'status_code', comparison: 'equals', target: '200' }
        ]
      }
    })
    t.equal(added.settings.check?.type === 'http' ? added.settings.check.headers?.authorization : undefined, '********')

    t.ok(await holds(checkedAfter(Date.now()), 15_000), 'checked with its own request')
    t.match(await client.getStatus(API), { status: 'up', partial: false }, 'every location judged the answer ok')
    const asked = seen.filter((r) => r.url === '/health?deep=1')
    t.ok(asked.length >= 3, 'each location sent the request')
    t.ok(
      asked.every((r) => r.method === 'POST' && r.authorization === TOKEN && r.body === '{"probe":true}'),
      'as given: method, path with query, the Authorization header and the body'
    )

    degraded.add(FROM[2])
    t.ok(await holds(checkedAfter(Date.now()), 15_000), 'checked with one location degraded')
    t.ok(await holds(checkedAfter(Date.now()), 15_000), 'and again')
    t.match(await client.getStatus(API), { status: 'up', partial: true, last_outage: null }, 'one location alone opens no outage')

    degraded.add(FROM[1])
    await stream.waitFor(() => typesOf().includes('outage.opened'), 15_000, 'outage.opened')
    t.match(await client.getStatus(API), { status: 'down', last_outage: { ended_at: null } })
    const siteId = (await service.db('sites').where({ domain: API }).first('id')).id as number
    const newest = await service.db('checks').where({ site_id: siteId }).orderBy('id', 'desc').first('locations')
    const codes = (JSON.parse(newest.locations) as Array<{ code?: string; error: string | null }>).map((l) => l.code ?? null)
    t.same(
      codes.filter((c) => c !== null && c !== 'ok').sort(),
      ['assertion_failed', 'assertion_failed'],
      'two locations failed the assertion'
    )
    degraded.clear()
    await stream.waitFor(() => typesOf().includes('outage.closed'), 15_000, 'outage.closed')
    t.same(typesOf(), ['outage.opened', 'outage.closed'], 'the outage opened and closed once')

    // The secret reached the target, and nowhere else.
    const answers = await Promise.all(
      [
        ['/api/v1/status/' + API, bearer(key)],
        ['/api/v1/sites', bearer(key)],
        ['/api/v1/outages?domain=' + API, bearer(key)],
        ['/api/v1/events?since=0', bearer(key)],
        ['/sites/' + API, {}],
        ['/', {}],
        ['/metrics', bearer(key)]
      ].map(async ([path, headers]) => {
        const controller = new AbortController()
        const res = await fetch(base + (path as string), { headers: headers as Record<string, string>, signal: controller.signal })
        // The events stream stays open: read what it replays at once, then close it.
        const text = path === '/api/v1/events?since=0' ? await firstChunk(res) : await res.text()
        controller.abort()
        return [path, text] as const
      })
    )
    for (const [path, text] of answers) t.notOk(text.includes('tok_e2e_7c0ffee5ecret'), `${path as string} never holds the header's value`)
    t.notOk(JSON.stringify(stream.events).includes('tok_e2e_7c0ffee5ecret'), 'nor does any event')
    t.notOk(logs.lines.join('\n').includes('tok_e2e_7c0ffee5ecret'), 'nor any log line')
  })
}

async function firstChunk(res: Response): Promise<string> {
  const reader = res.body?.getReader()
  if (reader === undefined) return ''
  const { value } = await reader.read()
  await reader.cancel()
  return new TextDecoder().decode(value)
}
