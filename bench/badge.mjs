// bench/badge: badge requests per second from the real service (dist build) against bare hapi
// answering a constant SVG of the same size, in the same run, driven by wrk (bench/wrk.mjs),
// pinned (servers on CPU 0, wrk on CPU 1) and unpinned.
//   npm run bench:badge     (builds first; about two minutes; loopback and a temporary SQLite file only)
// Knobs: BENCH_SITES (100), BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_CONCURRENCY (64), BENCH_DOCS (1: write
// the figures into docs/benchmarks.md).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { openDb } from '../dist/lib/store/db.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { recordCheck } from '../dist/lib/monitoring/record/record-check.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
import { ask, freePort, median, start, stop, writeFigures } from './processes.mjs'
import { compareServers, wrkVersion } from './wrk.mjs'

const SITES = Number(process.env.BENCH_SITES ?? 100)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const DOCS = process.env.BENCH_DOCS !== '0'
const GOAL = 0.8

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

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
  console.error(
    `bench/badge: ${SITES} tracked sites, wrk, ${CONCURRENCY} connections, ${ROUNDS} rounds x ${SECONDS} s, pinned then unpinned`
  )
  const ours = await start('./monitor-sut.mjs', env)
  children.push(ours.child)
  const bare = await start('./bare-hapi.mjs', {})
  children.push(bare.child)

  const paths = domains.map((d) => `/api/badge/${d}`)
  const probe = await fetch(`${ours.uri}${paths[1]}`)
  const svg = await probe.text()
  if (probe.status !== 200 || !svg.includes('Site 1: up')) throw new Error(`unexpected badge: ${probe.status} ${svg.slice(0, 200)}`)
  const baselineSvg = await (await fetch(`${bare.uri}${paths[1]}`)).text()

  const systems = [
    { name: 'bare hapi', uri: bare.uri, pid: bare.child.pid },
    { name: 'badge', uri: ours.uri, pid: ours.child.pid }
  ]
  const runs = []
  for (const pinned of [true, false]) {
    runs.push(await compareServers({ systems, paths, pinned, rounds: ROUNDS, seconds: SECONDS, connections: CONCURRENCY }))
  }
  const stats = await ask(ours.child, 'stats')
  bare.child.kill()
  await stop(ours.child)

  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const rows = []
  const goals = []
  for (const run of runs) {
    const [b, o] = run.systems
    const mode = run.pinned ? 'pinned' : 'unpinned'
    const line = (label, s, body) =>
      `| ${mode} | ${label} | ${fmt(s.median.rps)} | ${s.rps.map((x) => fmt(x)).join(', ')} | ${fmt(s.median.p50Ms, 2)} / ${fmt(s.median.p99Ms, 2)} | ${fmt(s.median.cpuUs, 1)} | ${s.non2xx + s.socketErrors} | ${body} B |`
    rows.push(line('bare hapi: constant SVG', b, baselineSvg.length))
    rows.push(line('ours: `GET /api/badge/{domain}`', o, svg.length))
    const ratio = o.median.rps / b.median.rps
    const pairs = median(run.perRound.map(([x, y]) => y / x))
    const goal = run.pinned ? `>= ${GOAL}x` : '(none; for reference)'
    const met = run.pinned ? (ratio >= GOAL ? 'yes' : '**no**') : ''
    goals.push(`| ${mode} | ${fmt(ratio, 2)}x | ${fmt(pairs, 2)}x | ${fmt(b.median.cpuUs / o.median.cpuUs, 2)}x | ${goal} | ${met} |`)
  }
  const failures = runs.flatMap((r) => r.systems).reduce((n, s) => n + s.non2xx + s.socketErrors, 0)
  const table = [
    `Run ${when}: ${os.availableParallelism?.() ?? os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, wrk ${wrkVersion()} (1 thread, ` +
      `${CONCURRENCY} keep-alive connections), ${ROUNDS} rounds x ${SECONDS} s after one warm-up round each, every round running bare hapi then ours back to back; ` +
      `pinned: both servers on CPU 0 (taking turns), wrk on CPU 1; unpinned: no taskset. ${SITES} tracked sites requested in turn, no Accept-Encoding (both send the plain SVG).`,
    '',
    '| mode | system | median req/s | rounds (req/s) | median latency p50 / p99 (ms) | median server CPU µs / request | non-2xx + socket errors | body |',
    '|---|---|---:|---|---:|---:|---:|---:|',
    ...rows,
    '',
    '| mode | ours / bare hapi (medians) | median of per-round ratios | CPU per request, bare / ours | goal | met |',
    '|---|---:|---:|---:|---|---|',
    ...goals,
    '',
    `Errors over all rounds: ${failures}. Service peak RSS: ${fmt(stats.rss / 1024 / 1024)} MB.`
  ].join('\n')
  console.log(`\n${table}\n`)
  if (DOCS) writeFigures('benchmarks.md', 'bench/badge', table)
} finally {
  await cleanup()
}
