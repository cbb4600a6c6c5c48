// bench/metrics: GET /metrics at 10,000 tracked sites x 3 locations, scrape time and size.
//   npm run bench:metrics     (builds first; about three minutes; loopback and a temporary SQLite file only)
// Part 1, the real service (dist build, its own process): its scheduler checks every site against a
// loopback target until /metrics shows a probe_success series for every site and location; then
// BENCH_SCRAPES scrapes one after another, as Prometheus sends them (gzip) and uncompressed, timed
// from request to the last byte, while the scheduler keeps checking. The probes there go over
// plain http, so no probe_ssl_earliest_cert_expiry series is in it. Part 2, in this process: the
// same metrics built over the same sites with every location's result carrying a certificate expiry,
// so every per-site series is in the exposition, streamed BENCH_SCRAPES times with the main thread's CPU
// time and the longest event-loop wait measured.
// Knobs: BENCH_SITES (10000), BENCH_SCRAPES (50), BENCH_INTERVAL_S (60), BENCH_DOCS (1: write the
// figures into docs/benchmarks.md).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { ServiceMetrics } from '../dist/lib/metrics/service-metrics.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
import { SiteStates } from '../dist/lib/monitoring/state/site-state.js'
import { openDb } from '../dist/lib/store/db.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { ask, freePort, start, stop, writeFigures } from './processes.mjs'

const SITES = Number(process.env.BENCH_SITES ?? 10_000)
const SCRAPES = Number(process.env.BENCH_SCRAPES ?? 50)
const INTERVAL_S = Number(process.env.BENCH_INTERVAL_S ?? 60)
const DOCS = (process.env.BENCH_DOCS ?? '1') === '1'
const LOCATIONS = ['Frankfurt 1, Germany', 'Virginia 1, United States', 'Singapore 1, Singapore']
const TOKEN = 'bench-metrics-token-0123456789abcdef'

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const pct = (xs, p) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** One scrape over a fresh connection: time to the last byte, bytes on the wire, and the body when not compressed. */
function scrape(uri, gzip) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = http.get(
      `${uri}/metrics`,
      { headers: { authorization: `Bearer ${TOKEN}`, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) }, agent: false },
      (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => {
          const body = Buffer.concat(chunks)
          if (res.statusCode !== 200) reject(new Error(`/metrics answered ${res.statusCode}: ${body.toString().slice(0, 200)}`))
          else
            resolve({
              ms: performance.now() - started,
              bytes: body.length,
              encoding: res.headers['content-encoding'] ?? 'identity',
              text: gzip ? null : body.toString()
            })
        })
      }
    )
    req.on('error', reject)
  })
}

const count = (text, name) => text.split('\n').filter((l) => l.startsWith(`${name}{`)).length

const dir = mkdtempSync(join(os.tmpdir(), 'bench-metrics-'))
const children = []
const target = spawn(
  process.execPath,
  [
    '-e',
    `const s = require('node:http').createServer((q, r) => r.end('ok')); s.listen(0, '127.0.0.1', () => console.log(s.address().port))`
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] }
)
children.push(target)

try {
  const targetPort = await new Promise((resolve) => target.stdout.once('data', (d) => resolve(Number(String(d).trim()))))
  const closed = await freePort()
  const databaseUrl = `sqlite:${join(dir, 'bench.sqlite')}`
  const db = openDb(databaseUrl)
  await migrateLatest(db)
  const domains = Array.from({ length: SITES }, (_, i) => `site-${i}.metrics-bench.test`)
  await addSites({ db, now: new Date(Date.now() - 3_600_000), entries: domains.map((domain, i) => ({ domain, name: `Site ${i}` })) })
  await db.destroy()

  console.error(
    `bench/metrics: ${fmt(SITES)} sites x ${LOCATIONS.length} locations, checked every ${INTERVAL_S} s; waiting for every probe series`
  )
  const service = await start('./monitor-sut.mjs', {
    DATABASE_URL: databaseUrl,
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${targetPort}`,
    CHECK_INTERVAL_S: String(INTERVAL_S),
    LOCATIONS: JSON.stringify(LOCATIONS.map((label) => ({ label }))),
    METRICS_TOKEN: TOKEN,
    PORT: '0',
    LOG_LEVEL: 'warn'
  })
  children.push(service.child)
  const filledBy = Date.now() + (INTERVAL_S * 3 + 60) * 1000
  let seen = 0
  for (;;) {
    const { text } = await scrape(service.uri, false)
    seen = count(text, 'probe_success')
    if (seen >= SITES * LOCATIONS.length) break
    if (Date.now() > filledBy) throw new Error(`only ${seen} probe_success series after ${INTERVAL_S * 3 + 60} s`)
    await sleep(5000)
  }
  console.error(`  every site and location has its series; ${SCRAPES} scrapes each way`)

  await ask(service.child, 'stats') // resets the event-loop delay histogram
  const plain = []
  const gzip = []
  let sample
  for (let i = 0; i < SCRAPES; i++) {
    const p = await scrape(service.uri, false)
    sample = p
    plain.push(p)
    gzip.push(await scrape(service.uri, true))
  }
  const stats = await ask(service.child, 'stats')
  await stop(service.child)

  // Part 2: every location's result carries a certificate expiry, so every series is present.
  const local = openDb(databaseUrl)
  const now = new Date()
  const states = new SiteStates({ intervalMs: INTERVAL_S * 1000, publicUrl: 'http://127.0.0.1' })
  await states.refresh(local, now)
  const expires = new Date(now.getTime() + 40 * 86_400_000).toISOString()
  for (const domain of domains) {
    const siteId = states.siteId(domain)
    const locations = LOCATIONS.map((location, i) => ({
      location,
      status: 'up',
      http_code: 200,
      response_ms: 40 + i * 30,
      error: null,
      final_url: `https://${domain}/`,
      timings: { dns: 1, connect: 5, tls: 10, first_byte: 20, total: 40 + i * 30 },
      tls_expires_at: expires
    }))
    states.apply(
      {
        siteId,
        checkedAt: now,
        status: 'up',
        blocked: false,
        partial: false,
        responseMs: 70,
        locationsAnswered: 3,
        locationsTotal: 3,
        source: 'schedule',
        locations
      },
      { current: true, step: 'none', outage: null }
    )
  }
  await local.destroy()
  const metrics = new ServiceMetrics({ now: () => now })
  metrics.watch({ states })
  // Each scrape streamed to nowhere: wall time, main-thread CPU, and the longest the event loop waited meanwhile.
  const rendered = []
  const cpuMs = []
  const blockedMs = []
  let full = ''
  for (let i = 0; i < SCRAPES; i++) {
    const loop = monitorEventLoopDelay({ resolution: 1 })
    loop.enable()
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    let text = ''
    for await (const chunk of metrics.stream()) text += chunk
    rendered.push(performance.now() - t0)
    const cpu = process.cpuUsage(c0)
    cpuMs.push((cpu.user + cpu.system) / 1000)
    loop.disable()
    blockedMs.push(loop.max / 1e6)
    full = text
  }

  const row = (label, runs, bytes) =>
    `| ${label} | ${fmt(
      pct(
        runs.map((r) => r.ms ?? r),
        50
      ),
      1
    )} | ${fmt(
      pct(
        runs.map((r) => r.ms ?? r),
        99
      ),
      1
    )} | ${fmt(Math.max(...runs.map((r) => r.ms ?? r)), 1)} | ${bytes} |`
  const lines = (text) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const table = [
    `Run ${when}: ${os.availableParallelism?.() ?? os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, ` +
      `a shared machine (other work ran on it meanwhile). ${fmt(SITES)} tracked sites x ${LOCATIONS.length} locations, SQLite. ` +
      `${SCRAPES} scrapes of each kind, one at a time, each on a new connection, timed from request to last byte.`,
    '',
    '| scrape | median ms | p99 ms | max ms | size |',
    '|---|---:|---:|---:|---:|',
    row('service over HTTP, uncompressed, scheduler running', plain, `${fmt(sample.bytes)} B, ${fmt(lines(sample.text))} samples`),
    row(`service over HTTP, gzip (as Prometheus asks), scheduler running`, gzip, `${fmt(gzip[0].bytes)} B (${gzip[0].encoding})`),
    row(
      'the stream in process (no HTTP), every location with a certificate expiry',
      rendered,
      `${fmt(Buffer.byteLength(full))} B, ${fmt(lines(full))} samples`
    ),
    '',
    `Part 1 had ${fmt(count(sample.text, 'probe_success'))} probe_success and ${fmt(count(sample.text, 'site_status_outage_ongoing'))} site_status_outage_ongoing series ` +
      `(probes over plain http: no probe_ssl_earliest_cert_expiry); part 2 had ${fmt(count(full, 'probe_ssl_earliest_cert_expiry'))} probe_ssl_earliest_cert_expiry series. ` +
      `In process, a scrape took ${fmt(pct(cpuMs, 50), 1)} ms of CPU (median; p99 ${fmt(pct(cpuMs, 99), 1)} ms) and the event loop waited at most ${fmt(pct(blockedMs, 50), 1)} ms ` +
      `(median of each scrape's longest wait; p99 ${fmt(pct(blockedMs, 99), 1)} ms). ` +
      `Service event-loop delay over the scrapes of part 1 (scheduler included): p99 ${fmt(stats.delay.p99, 1)} ms, max ${fmt(stats.delay.max, 1)} ms; RSS ${fmt(stats.rss / 1024 / 1024)} MB.`
  ].join('\n')
  console.log(`\n${table}\n`)
  if (DOCS) writeFigures('benchmarks.md', 'bench/metrics', table)
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}
