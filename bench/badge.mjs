// bench/badge: badge requests per second from the real service (dist build) against bare hapi
// serving the same SVG bytes with the same headers from memory, in the same run, driven by wrk
// (bench/wrk.mjs), pinned (servers on CPU 0, wrk on CPU 1) and unpinned. Each badge the service
// has: the site badge `GET /api/badge/{domain}`, and the page badge `GET /api/badge/page/{slug}`
// where the build has that route (pages made through `POST /api/v1/pages`).
//   npm run bench:badge     (builds first; about four minutes; loopback and a temporary SQLite file only)
// Knobs: BENCH_SITES (100), BENCH_PAGES (10, of BENCH_SITES / BENCH_PAGES sites each), BENCH_ROUNDS
// (5), BENCH_SECONDS (5), BENCH_CONCURRENCY (64), BENCH_DOCS (1: write the figures into docs/benchmarks.md).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { join } from 'node:path'
import { openDb } from '../dist/lib/store/db.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { recordCheck } from '../dist/lib/monitoring/record/record-check.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
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
const GOAL = 0.8

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
  await addSites({ db, now: new Date(now.getTime() - 3_600_000), entries: domains.map((domain, i) => ({ domain, name: `Site ${i}` })) })
  // A fresh check per site, so every badge shows a real status (a few down, the rest up).
  const ids = await db('sites').orderBy('id').pluck('id')
  for (const [i, siteId] of ids.entries()) {
    await recordCheck({
      db,
      check: {
        siteId: Number(siteId),
        checkedAt: now,
        status: i % 10 === 0 ? 'down' : 'up',
        blocked: false,
        partial: false,
        responseMs: 50,
        locationsAnswered: 3,
        locationsTotal: 3,
        source: 'schedule',
        locations: []
      }
    })
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

  const endpoints = [
    {
      name: 'site badge',
      route: '/api/badge/{domain}',
      label: '`GET /api/badge/{domain}`',
      paths: domains.map((d) => `/api/badge/${d}`),
      probe: 1
    },
    {
      name: 'page badge',
      route: '/api/badge/page/{slug}',
      label: '`GET /api/badge/page/{slug}`',
      paths: slugs.map((s) => `/api/badge/page/${s}`),
      probe: 0
    }
  ]
  const missing = []
  for (const e of endpoints) {
    e.answer = await getRaw(`${ours.uri}${e.paths[e.probe]}`)
    if (e.answer.status === 404 && e.answer.body.includes('no such route')) missing.push(e)
    else if (e.answer.status !== 200 || !e.answer.body.startsWith('<svg'))
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
    for (const e of measured) {
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
  const goals = []
  for (const run of runs) {
    const [b, o] = run.systems
    const mode = run.pinned ? 'pinned' : 'unpinned'
    const line = (label, s) =>
      `| ${mode} | ${label} | ${fmt(s.median.rps)} | ${s.rps.map((x) => fmt(x)).join(', ')} | ${fmt(s.median.p50Ms, 2)} / ${fmt(s.median.p99Ms, 2)} | ${fmt(s.median.cpuUs, 1)} | ${s.non2xx + s.socketErrors} |`
    rows.push(line(`bare hapi, ${run.e.name}'s bytes (${run.e.answer.body.length} B)`, b))
    rows.push(line(`ours: ${run.e.label}`, o))
    const ratio = o.median.rps / b.median.rps
    const pairs = median(run.perRound.map(([x, y]) => y / x))
    const goal = run.pinned ? `>= ${GOAL}x` : '(none; for reference)'
    const met = run.pinned ? (ratio >= GOAL ? 'yes' : '**no**') : ''
    goals.push(
      `| ${mode} | ${run.e.name} | ${fmt(ratio, 2)}x | ${fmt(pairs, 2)}x | ${fmt(b.median.cpuUs / o.median.cpuUs, 2)}x | ${goal} | ${met} |`
    )
  }
  const failures = runs.flatMap((r) => r.systems).reduce((n, s) => n + s.non2xx + s.socketErrors, 0)
  const table = [
    `Run ${when} at ${commit}: ${os.availableParallelism?.() ?? os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, wrk ${wrkVersion()} (1 thread, ` +
      `${CONCURRENCY} keep-alive connections), ${ROUNDS} rounds x ${SECONDS} s after one warm-up round each, every round running bare hapi then ours back to back; ` +
      `pinned: both servers on CPU 0 (taking turns), wrk on CPU 1; unpinned: no taskset. ${SITES} tracked sites and ${PAGES} pages requested in turn, ` +
      `no Accept-Encoding; bare hapi answers the same bytes with the same headers (checked before the rounds). ` +
      `1-minute load average before the run ${loadBefore.toFixed(2)}, at its end ${load.toFixed(2)} (the run's own load included).` +
      (missing.length > 0 ? ` Not on this build: ${missing.map((e) => e.label).join(', ')}.` : ''),
    '',
    '| mode | system | median req/s | rounds (req/s) | median latency p50 / p99 (ms) | median server CPU µs / request | non-2xx + socket errors |',
    '|---|---|---:|---|---:|---:|---:|',
    ...rows,
    '',
    '| mode | badge | ours / bare hapi (medians) | median of per-round ratios | CPU per request, bare / ours | goal | met |',
    '|---|---|---:|---:|---:|---|---|',
    ...goals,
    '',
    `Errors over all rounds: ${failures}. Service peak RSS: ${fmt(stats.rss / 1024 / 1024)} MB.`
  ].join('\n')
  console.log(`\n${table}\n`)
  if (DOCS) writeFigures('benchmarks.md', 'bench/badge', table)
} finally {
  await cleanup()
}
