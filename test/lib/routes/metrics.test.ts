import { spawn } from 'node:child_process'
import { gunzipSync } from 'node:zlib'
import t from 'tap'
import type { LocationResult } from '../../../lib/probing/locations/index.js'
import { parseExposition, samplesOf } from '../../helpers/exposition.js'
import { matchesOpenApi } from '../../helpers/openapi.js'
import { PROMTOOL, prometheusMissing } from '../../helpers/prometheus.js'
import { bearer } from '../../helpers/server.js'
import { MIN, trackedServer } from '../../helpers/sites.js'

const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const TOKEN = 'scrape-me-9f3a7c21d4e6b850'
const PROMETHEUS_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

function location(
  label: string,
  status: LocationResult['status'],
  httpCode: number,
  responseMs: number,
  tlsExpiresAt?: string | null
): LocationResult {
  return {
    location: label,
    status,
    http_code: httpCode,
    response_ms: responseMs,
    error: status === 'up' ? null : `http: ${httpCode}`,
    final_url: `https://x.example/`,
    timings: { dns: 1, connect: 1, tls: 1, first_byte: 1, total: responseMs },
    ...(tlsExpiresAt === undefined ? {} : { tls_expires_at: tlsExpiresAt })
  }
}

const sites = [
  { domain: 'up.example.com', name: 'Up' },
  { domain: 'down.example.com', name: 'Down' },
  { domain: 'split.example.com', name: 'Split' },
  { domain: 'never.example.com', name: 'Never checked' }
]

t.test('/metrics answers a key with read or the METRICS_TOKEN, and nobody else', async (t) => {
  const site = await trackedServer(t, { sites, start: T0, env: { METRICS_TOKEN: TOKEN } })
  const reader = await site.issueKey({ scopes: 'read', limit: 1 })
  const checker = await site.issueKey({ scopes: 'check' })
  const scrape = (headers: Record<string, string> = {}) => site.server.inject({ url: '/metrics', headers })

  const none = await scrape()
  t.equal(none.statusCode, 401, 'no credentials: 401')
  t.match(JSON.parse(none.payload), { error: String })
  matchesOpenApi(t, none)

  const outside = await scrape(bearer(checker))
  t.equal(outside.statusCode, 403, 'a key without read: 403')
  t.match(JSON.parse(outside.payload), { error: String })

  const wrong = await scrape({ authorization: `Bearer ${TOKEN}x` })
  t.equal(wrong.statusCode, 401, 'a wrong token: 401')
  t.match(JSON.parse(wrong.payload), { error: String })
  t.equal(wrong.headers['content-type'], 'application/json; charset=utf-8')

  const token = await scrape({ authorization: `Bearer ${TOKEN}` })
  t.equal(token.statusCode, 200, 'the token: 200')
  t.equal(token.headers['content-type'], PROMETHEUS_TYPE)
  t.equal(token.headers['ratelimit-limit'], undefined, 'the token has no budget to show')
  t.match(token.payload, /^# HELP /m)
  matchesOpenApi(t, token)

  // The key's limit is 1 a minute: scrapes cost nothing, so three of them still leave it whole.
  for (let i = 0; i < 3; i++) {
    const keyed = await scrape(bearer(reader))
    t.equal(keyed.statusCode, 200, `a read key, scrape ${i + 1}: 200`)
    t.equal(keyed.headers['content-type'], PROMETHEUS_TYPE)
    t.equal(keyed.headers['ratelimit-remaining'], '1', 'costs 0')
  }
  const budget = JSON.parse((await site.server.inject({ url: '/api/v1/rate_limit', headers: bearer(reader) })).payload)
  t.equal(budget.used, 0, 'nothing of the budget was used')

  // The key spends its one unit, then is refused: the refusal is counted.
  t.equal((await site.server.inject({ url: '/api/v1/status/up.example.com', headers: bearer(reader) })).statusCode, 200)
  t.equal((await site.server.inject({ url: '/api/v1/status/up.example.com', headers: bearer(reader) })).statusCode, 429)
  const after = parseExposition((await scrape({ authorization: `Bearer ${TOKEN}` })).payload)
  t.same(
    samplesOf(after, 'site_status_refusals_total', { reason: 'rate_limit' }).map((s) => s.value),
    [1],
    'rate-limit refusals are counted'
  )
})

t.test('/metrics is gzipped for a scraper that accepts it', async (t) => {
  const site = await trackedServer(t, { sites, start: T0, env: { METRICS_TOKEN: TOKEN } })
  const res = await site.server.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}`, 'accept-encoding': 'gzip' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-encoding'], 'gzip')
  t.match(gunzipSync(res.rawPayload).toString(), /^# TYPE site_status_outage_ongoing gauge$/m)
})

t.test('without METRICS_TOKEN a bearer token that is no key is refused', async (t) => {
  const site = await trackedServer(t, { sites, start: T0 })
  const res = await site.server.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(res.statusCode, 401)
  t.match(JSON.parse(res.payload), { error: String })
})

t.test('/metrics shows each site and location as blackbox_exporter does, from the newest check', async (t) => {
  const site = await trackedServer(t, { sites, start: T0 })
  const key = await site.issueKey({ scopes: 'read,manage', limit: 1000 })
  const expiry = '2027-01-15T12:00:00.000Z'
  await site.feed('up.example.com', 'up', T0, {
    locations: [location('A 1, X', 'up', 200, 120, expiry), location('B 1, Y', 'up', 200, 80, null), location('C 1, Z', 'down', 503, 40)]
  })
  await site.feed('down.example.com', 'down', T0, {
    locations: [location('A 1, X', 'down', 0, 1000), location('B 1, Y', 'down', 500, 30), location('C 1, Z', 'down', 500, 20)]
  })
  await site.feed('split.example.com', 'unconfirmed', T0, { locations: [location('A 1, X', 'up', 200, 50)] })
  site.clock.now = T0 + 1000

  const scrape = async () => {
    const res = await site.server.inject({ url: '/metrics', headers: bearer(key) })
    t.equal(res.statusCode, 200)
    return parseExposition(res.payload)
  }
  let samples = await scrape()
  const value = (name: string, labels: Record<string, string>) => samplesOf(samples, name, labels).map((s) => s.value)
  const up = { domain: 'up.example.com' }
  t.same(value('probe_success', { ...up, location: 'A 1, X' }), [1])
  t.same(value('probe_success', { ...up, location: 'C 1, Z' }), [0], 'a location that saw it down')
  t.same(value('probe_duration_seconds', { ...up, location: 'A 1, X' }), [0.12], 'in seconds')
  t.same(value('probe_http_status_code', { ...up, location: 'C 1, Z' }), [503])
  t.same(value('probe_http_status_code', { domain: 'down.example.com', location: 'A 1, X' }), [0], 'no response: 0')
  t.same(value('probe_ssl_earliest_cert_expiry', up), [Date.parse(expiry) / 1000], 'only where the expiry is known, in Unix seconds')
  t.same(samplesOf(samples, 'probe_ssl_earliest_cert_expiry', up)[0]?.labels, { ...up, location: 'A 1, X' })
  t.same(value('probe_ssl_earliest_cert_expiry', { domain: 'down.example.com' }), [], 'none without tls_expires_at')
  t.equal(samplesOf(samples, 'probe_success', { domain: 'split.example.com' }).length, 1, 'the locations the check carried')

  t.same(value('site_status_up', up), [1])
  t.same(value('site_status_up', { domain: 'down.example.com' }), [0])
  t.same(value('site_status_up', { domain: 'split.example.com' }), [], 'absent while unconfirmed')
  t.same(value('site_status_up', { domain: 'never.example.com' }), [], 'absent while unavailable')
  t.same(value('site_status_outage_ongoing', { domain: 'down.example.com' }), [1])
  t.same(value('site_status_outage_ongoing', up), [0])
  t.same(value('site_status_outage_ongoing', { domain: 'never.example.com' }), [0])
  t.same(value('probe_success', { domain: 'never.example.com' }), [], 'no probe series before a check')
  t.same(value('site_status_sites', {}), [4])

  const removed = await site.server.inject({ method: 'DELETE', url: '/api/v1/sites/up.example.com', headers: bearer(key) })
  t.equal(removed.statusCode, 204)
  samples = await scrape()
  t.same(
    samples.filter((s) => s.labels.domain === 'up.example.com'),
    [],
    'a removed site has no series left'
  )
  t.equal(samplesOf(samples, 'probe_success', { domain: 'down.example.com' }).length, 3, 'the others keep theirs')

  site.clock.now = T0 + 3 * MIN + 1
  samples = await scrape()
  t.same(samplesOf(samples, 'probe_success'), [], 'a stale check shows no probe series')
  t.same(samplesOf(samples, 'site_status_up'), [], 'nor an up or down verdict')
  t.same(value('site_status_outage_ongoing', { domain: 'down.example.com' }), [1], 'the outage stays ongoing')
})

t.test('promtool accepts the exposition', { skip: prometheusMissing() ?? false }, async (t) => {
  const site = await trackedServer(t, { sites, start: T0, env: { METRICS_TOKEN: TOKEN } })
  await site.feed('up.example.com', 'up', T0, {
    locations: [location('A 1, X', 'up', 200, 120, '2027-01-15T12:00:00.000Z'), location('B "1", Y', 'up', 200, 80)]
  })
  site.clock.now = T0 + 1000
  const res = await site.server.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(res.statusCode, 200)
  t.match(res.payload, /probe_ssl_earliest_cert_expiry\{/, 'every kind of series is in it')
  t.same(
    samplesOf(parseExposition(res.payload), 'probe_success', { location: 'B "1", Y' }).map((s) => s.value),
    [1],
    'a label with quotes is escaped'
  )
  const promtool = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  promtool.stdout.on('data', (d: Buffer) => (output += d.toString()))
  promtool.stderr.on('data', (d: Buffer) => (output += d.toString()))
  promtool.stdin.end(res.payload)
  const code = await new Promise<number | null>((resolve) => promtool.on('close', resolve))
  t.equal(code, 0, 'promtool check metrics exits 0')
  t.equal(output.trim(), '', 'with no lint problem')
})
