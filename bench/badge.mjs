// bench/badge: badge requests per second from the real service (dist build) against bare hapi
// serving the same bytes with the same headers from memory, in the same run, driven by wrk
// (bench/wrk.mjs), pinned (servers on CPU 0, wrk on CPU 1) and unpinned. Each badge the service
// has: the status badges of sites and pages (`GET /api/badge/{domain}`, `GET /api/badge/page/{slug}`),
// their uptime and response-time badges (SVG and shields.io JSON), the page state's JSON, a site's
// chart, and a heartbeat's state and uptime badges, where the build has those routes (pages and
// heartbeats made through the API, each heartbeat pinged once). Every site has
// 40 days of monitoring and a week of hourly response times, so every figure is worked out.
//   npm run bench:badge     (builds first; about 17 minutes; loopback and a temporary SQLite file only)
// Knobs: BENCH_SITES (100), BENCH_PAGES (10, of BENCH_SITES / BENCH_PAGES sites each), BENCH_ROUNDS
// (5), BENCH_SECONDS (5), BENCH_CONCURRENCY (64), BENCH_ONLY (names, comma-separated: only those
// badges), BENCH_UNPINNED (the badges also measured unpinned; default the site's status, uptime and
// response-time badges and its chart), BENCH_DOCS (1: write the figures into docs/benchmarks.md).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { join } from 'node:path'
import { openDb } from '../dist/lib/store/db.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { recordCheck } from '../dist/lib/monitoring/record/record-check.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
import { insertChecks } from '../dist/lib/store/checks.js'
import { createKey } from '../dist/lib/store/keys.js'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { ask, currentCommit, freePort, median, start, stop, writeFigures } from './processes.mjs'
import { compareServers, wrkVersion } from './wrk.mjs'

const SITES = Number(process.env.BENCH_SITES ?? 100)
const PAGES = Number(process.env.BENCH_PAGES ?? 10)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const DOCS = process.env.BENCH_DOCS !== '0'
const ONLY = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',') : null
const UNPINNED = (process.env.BENCH_UNPINNED ?? 'site badge,site uptime,site response time,site chart').split(',')
const GOAL = 0.8
const HOUR = 3_600_000
const DAY = 24 * HOUR

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** One answer as wrk gets it: no Accept-Encoding, nothing decoded. */
function getRaw(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }))
      })
      .on('error', reject)
  })
}

/** The headers two servers must agree on: all but those of the connection and the clock. */
const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive'])
const comparable = (headers) => Object.fromEntries(Object.entries(headers).filter(([name]) => !PER_CONNECTION.has(name)))

// Other work on the machine shows in the figures: the load before the bench starts is reported with them.
const loadBefore = os.loadavg()[0]
const commit = currentCommit()
const dir = mkdtempSync(join(os.tmpdir(), 'bench-badge-'))
const children = []
// The service checks its sites on schedule; a loopback target answers those probes so nothing leaves the machine.
const target = spawn(
  process.execPath,
  [
    '-e',
    `
  const s = require('node:http').createServer((q, r) => r.end('ok'))
  s.listen(0, '127.0.0.1', () => console.log(s.address().port))
`
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] }
)
children.push(target)
const cleanup = async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}

try {
  const targetPort = await new Promise((resolve) => target.stdout.once('data', (d) => resolve(Number(String(d).trim()))))
  const closed = await freePort()
  const databaseUrl = `sqlite:${join(dir, 'bench.sqlite')}`
  const db = openDb(databaseUrl)
  await migrateLatest(db)
  const now = new Date()
  const domains = Array.from({ length: SITES }, (_, i) => `s${i}.bench.test`)
  await addSites({ db, now: new Date(now.getTime() - 41 * DAY), entries: domains.map((domain, i) => ({ domain, name: `Site ${i}` })) })
  // 40 days of monitoring, an hour's outage 3 days ago for every seventh site, a week of hourly
  // response times, and a fresh check per site so every badge shows a real status (a few down).
  const ids = await db('sites').orderBy('id').pluck('id')
  const check = (siteId, at, status, responseMs) => ({
    siteId: Number(siteId),
    checkedAt: new Date(at),
    status,
    blocked: false,
    partial: false,
    responseMs,
    locationsAnswered: 3,
    locationsTotal: 3,
    source: 'schedule',
    locations: []
  })
  const hourly = []
  for (const [i, siteId] of ids.entries()) {
    await recordCheck({ db, check: check(siteId, now.getTime() - 40 * DAY, 'up', 80) })
    if (i % 7 === 0) {
      await recordCheck({ db, check: check(siteId, now.getTime() - 3 * DAY, 'down', null) })
      await recordCheck({ db, check: check(siteId, now.getTime() - 3 * DAY + HOUR, 'up', 90) })
    }
    for (let k = 1; k <= 7 * 24; k++) hourly.push(check(siteId, now.getTime() - k * HOUR + 60_000, 'up', 50 + ((i + k) % 100)))
  }
  await insertChecks({ db, checks: hourly })
  for (const [i, siteId] of ids.entries()) {
    await recordCheck({ db, check: check(siteId, now.getTime(), i % 10 === 0 ? 'down' : 'up', i % 10 === 0 ? null : 50) })
  }
  const manageKey = generateKey()
  await createKey({ db, name: 'bench', keyHash: hashKey(manageKey), rateLimit: 1_000_000, scopes: 'manage', now })
  await db.destroy()

  const env = {
    DATABASE_URL: databaseUrl,
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${targetPort}`,
    // A day between scheduled checks: the badges measured are the ones recorded above.
    CHECK_INTERVAL_S: '86400',
    PORT: '0',
    LOG_LEVEL: 'warn'
  }
  const ours = await start('./monitor-sut.mjs', env)
  children.push(ours.child)

  // Pages of consecutive sites; page 0 holds a down site (s0), so its badge is not `operational`.
  const perPage = Math.max(1, Math.floor(SITES / PAGES))
  const slugs = []
  for (let p = 0; p < PAGES; p++) {
    const res = await fetch(`${ours.uri}/api/v1/pages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${manageKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        slug: `page-${p}`,
        title: `Page ${p}`,
        sites: domains.slice(p * perPage, (p + 1) * perPage).map((domain) => ({ domain }))
      })
    })
    if (res.status !== 201) throw new Error(`POST /api/v1/pages: ${res.status} ${await res.text()}`)
    slugs.push(`page-${p}`)
  }

  // Heartbeats made through the API, each pinged once: their badges read the heartbeat once a second.
  const HEARTBEATS = Math.max(1, Math.floor(SITES / 10))
  const heartbeats = []
  for (let i = 0; i < HEARTBEATS; i++) {
    const res = await fetch(`${ours.uri}/api/v1/heartbeats`, {
      method: 'POST',
      headers: { authorization: `Bearer ${manageKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ slug: `job-${i}`, name: `Job ${i}`, schedule: { every_s: 86_400 }, grace_s: 3600 })
    })
    if (res.status !== 201) throw new Error(`POST /api/v1/heartbeats: ${res.status} ${await res.text()}`)
    const pinged = await fetch(new URL(new URL((await res.json()).ping_url).pathname, ours.uri))
    if (pinged.status !== 200) throw new Error(`ping: ${pinged.status}`)
    heartbeats.push(`job-${i}`)
  }

  const site = (name, suffix, query = '') => ({
    name,
    route: `/api/badge/{domain}${suffix}`,
    label: `\`GET /api/badge/{domain}${suffix}${query}\``,
    paths: domains.map((d) => `/api/badge/${d}${suffix}${query}`),
    probe: 1
  })
  const page = (name, suffix, query = '') => ({
    name,
    route: `/api/badge/page/{slug}${suffix}`,
    label: `\`GET /api/badge/page/{slug}${suffix}${query}\``,
    paths: slugs.map((slug) => `/api/badge/page/${slug}${suffix}${query}`),
    probe: 0
  })
  const heartbeat = (name, suffix, query = '') => ({
    name,
    route: `/api/badge/heartbeat/{slug}${suffix}`,
    label: `\`GET /api/badge/heartbeat/{slug}${suffix}${query}\``,
    paths: heartbeats.map((slug) => `/api/badge/heartbeat/${slug}${suffix}${query}`),
    probe: 0
  })
  const endpoints = [
    site('site badge', ''),
    site('site uptime', '/uptime', '?window=30d'),
    site('site uptime JSON', '/uptime/endpoint', '?window=30d'),
    site('site response time', '/response-time'),
    site('site response time JSON', '/response-time/endpoint'),
    site('site chart', '/chart.svg'),
    page('page badge', ''),
    page('page JSON', '/endpoint'),
    page('page uptime', '/uptime', '?window=30d'),
    page('page uptime JSON', '/uptime/endpoint', '?window=30d'),
    page('page response time', '/response-time'),
    page('page response time JSON', '/response-time/endpoint'),
    heartbeat('heartbeat badge', ''),
    heartbeat('heartbeat uptime', '/uptime', '?window=30d')
  ].filter((e) => ONLY === null || ONLY.includes(e.name))
  const missing = []
  for (const e of endpoints) {
    // The first look at every site's response times reads them; the rounds measure what follows.
    for (const path of e.paths) await getRaw(`${ours.uri}${path}`)
    e.answer = await getRaw(`${ours.uri}${e.paths[e.probe]}`)
    if (e.answer.status === 404 && e.answer.body.includes('no such route')) missing.push(e)
    else if (e.answer.status !== 200 || !/^(<svg|\{"schemaVersion":1,)/.test(e.answer.body))
      throw new Error(`${e.name}: ${e.answer.status} ${e.answer.body.slice(0, 200)}`)
  }
  const measured = endpoints.filter((e) => !missing.includes(e))
  const bare = await start('./bare-hapi.mjs', {
    BARE_BADGES: JSON.stringify(measured.map((e) => ({ path: e.route, body: e.answer.body, headers: comparable(e.answer.headers) })))
  })
  children.push(bare.child)
  for (const e of measured) {
    const b = await getRaw(`${bare.uri}${e.paths[e.probe]}`)
    const [want, got] = [comparable(e.answer.headers), comparable(b.headers)]
    if (b.body !== e.answer.body || JSON.stringify(Object.entries(want).sort()) !== JSON.stringify(Object.entries(got).sort())) {
      throw new Error(`${e.name}: bare hapi answers otherwise:\n${JSON.stringify(want)}\n${JSON.stringify(got)}`)
    }
  }
  console.error(
    `bench/badge: ${SITES} tracked sites, ${PAGES} pages; ${measured.map((e) => e.name).join(', ')}; wrk, ${CONCURRENCY} connections, ` +
      `${ROUNDS} rounds x ${SECONDS} s, pinned then unpinned`
  )

  const systems = [
    { name: 'bare hapi', uri: bare.uri, pid: bare.child.pid },
    { name: 'ours', uri: ours.uri, pid: ours.child.pid }
  ]
  const runs = []
  for (const pinned of [true, false]) {
    for (const e of measured.filter((m) => pinned || UNPINNED.includes(m.name))) {
      console.error(`  ${e.name}, ${pinned ? 'pinned' : 'unpinned'}:`)
      runs.push({
        e,
        ...(await compareServers({ systems, paths: e.paths, pinned, rounds: ROUNDS, seconds: SECONDS, connections: CONCURRENCY }))
      })
    }
  }
  const stats = await ask(ours.child, 'stats')
  bare.child.kill()
  await stop(ours.child)

  const load = os.loadavg()[0]
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const rows = []
  for (const run of runs) {
    const [b, o] = run.systems
    const ratio = o.median.rps / b.median.rps
    const pairs = median(run.perRound.map(([x, y]) => y / x))
    const met = run.pinned ? (ratio >= GOAL ? 'yes' : '**no**') : '(reference)'
    rows.push(
      `| ${run.pinned ? 'pinned' : 'unpinned'} | ${run.e.label} | ${run.e.answer.body.length} | ${fmt(b.median.rps)} | ${fmt(o.median.rps)} | ` +
        `${fmt(ratio, 2)}x | ${fmt(pairs, 2)}x | ${fmt(b.median.cpuUs, 1)} / ${fmt(o.median.cpuUs, 1)} | ${fmt(o.median.p99Ms, 2)} | ${o.non2xx + o.socketErrors + b.non2xx + b.socketErrors} | ${met} |`
    )
  }
  const failures = runs.flatMap((r) => r.systems).reduce((n, s) => n + s.non2xx + s.socketErrors, 0)
  const spread = runs.filter((r) => r.pinned).map((r) => Math.max(...r.systems[1].rps) / Math.min(...r.systems[1].rps))
  const table = [
    `Run ${when} at ${commit}: ${os.availableParallelism?.() ?? os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, wrk ${wrkVersion()} (1 thread, ` +
      `${CONCURRENCY} keep-alive connections), ${ROUNDS} rounds x ${SECONDS} s after one warm-up round each, every round running bare hapi then ours back to back; ` +
      `pinned: both servers on CPU 0 (taking turns), wrk on CPU 1; unpinned: no taskset. ${SITES} tracked sites and ${PAGES} pages requested in turn, ` +
      `no Accept-Encoding; bare hapi answers the same bytes with the same headers (checked before the rounds). ` +
      `1-minute load average before the run ${loadBefore.toFixed(2)}, at its end ${load.toFixed(2)} (the run's own load included); ` +
      `ours' pinned rounds spread by up to ${fmt(Math.max(...spread), 2)}x (fastest / slowest round of a badge).` +
      (missing.length > 0 ? ` Not on this build: ${missing.map((e) => e.label).join(', ')}.` : ''),
    '',
    '| mode | badge | bytes | bare hapi req/s | ours req/s | ours / bare (medians) | median of per-round ratios | CPU µs / request, bare / ours | ours p99 (ms) | errors | >= 0.8x |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows,
    '',
    `Errors over all rounds: ${failures}. Service peak RSS: ${fmt(stats.rss / 1024 / 1024)} MB.`
  ].join('\n')
  console.log(`\n${table}\n`)
  if (DOCS) writeFigures('benchmarks.md', 'bench/badge', table)
} finally {
  await cleanup()
}
