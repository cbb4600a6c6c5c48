// bench/badge: badge requests per second from the real service (dist build) against bare hapi
// answering a constant SVG of the same size, in the same run.
//   npm run bench:badge     (builds first; about a minute; loopback and a temporary SQLite file only)
// Knobs: BENCH_SITES (100), BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_CONCURRENCY (64), BENCH_DOCS (1: write
// the figures into docs/benchmarks.md).
import { execFileSync, fork, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openDb } from '../dist/lib/store/db.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { recordCheck } from '../dist/lib/store/checks.js'
import { addSites } from '../dist/lib/store/sites.js'
import { ask, freePort, median, pin, start, stop, writeFigures } from './processes.mjs'

const SITES = Number(process.env.BENCH_SITES ?? 100)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const DOCS = process.env.BENCH_DOCS !== '0'
const GOAL = 0.8
const ROOT = fileURLToPath(new URL('..', import.meta.url))

const TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100
/** CPU seconds a process (all its threads) has used so far. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S
}

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

const dir = mkdtempSync(join(os.tmpdir(), 'bench-badge-'))
const children = []
// The service checks its sites on schedule; a loopback target answers those probes so nothing leaves the machine.
const target = spawn(process.execPath, ['-e', `
  const s = require('node:http').createServer((q, r) => r.end('ok'))
  s.listen(0, '127.0.0.1', () => console.log(s.address().port))
`], { stdio: ['ignore', 'pipe', 'inherit'] })
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
    await recordCheck({ db, check: { siteId: Number(siteId), checkedAt: now, status: i % 10 === 0 ? 'down' : 'up', blocked: false, partial: false, responseMs: 50, locationsAnswered: 3, locationsTotal: 3, source: 'schedule', locations: [] } })
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
  console.error(`bench/badge: ${SITES} tracked sites, ${ROUNDS} rounds x ${SECONDS} s, ${CONCURRENCY} requests in flight`)
  // The server measured gets CPU 0, the load generator CPU 1; the two servers take turns.
  let pinned = true
  const ours = await start('./monitor-sut.mjs', env, 0)
  children.push(ours.child)
  const bare = await start('./bare-hapi.mjs', {}, 0)
  children.push(bare.child)
  const load = fork(new URL('./load.mjs', import.meta.url), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  children.push(load)
  pinned = pin(load.pid, 1)

  const paths = domains.map((d) => `/api/badge/${d}`)
  const probe = await fetch(`${ours.uri}${paths[1]}`)
  const svg = await probe.text()
  if (probe.status !== 200 || !svg.includes('Site 1: up')) throw new Error(`unexpected badge: ${probe.status} ${svg.slice(0, 200)}`)
  const baselineSvg = await (await fetch(`${bare.uri}${paths[1]}`)).text()

  /** One round against a server: its answers per second, and its CPU time per answer. */
  const run = async ({ uri, child }) => {
    const before = cpuSeconds(child.pid)
    const result = await ask(load, { url: uri, headers: {}, seconds: SECONDS, concurrency: CONCURRENCY, paths })
    return { ...result, cpuUs: ((cpuSeconds(child.pid) - before) * 1e6) / Math.max(1, result.rate * SECONDS) }
  }
  // One unmeasured round each first: the JIT warms up over the first seconds of load.
  await run(bare)
  await run(ours)
  const baseline = []
  const measured = []
  const pairs = []
  const cpu = { bare: [], ours: [] }
  let failures = 0
  for (let r = 0; r < ROUNDS; r++) {
    const b = await run(bare)
    const o = await run(ours)
    baseline.push(b.rate)
    measured.push(o.rate)
    pairs.push(o.rate / b.rate)
    cpu.bare.push(b.cpuUs)
    cpu.ours.push(o.cpuUs)
    failures += b.failed + o.failed
    console.error(`  round ${r + 1}: bare hapi ${fmt(b.rate)}/s (${fmt(b.cpuUs, 1)} CPU µs each), badge ${fmt(o.rate)}/s (${fmt(o.cpuUs, 1)} CPU µs each)`)
  }
  const stats = await ask(ours.child, 'stats')
  load.kill()
  bare.child.kill()
  await stop(ours.child)

  const ratio = median(measured) / median(baseline)
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const table = [
    `Run ${when}: ${os.availableParallelism?.() ?? os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, ` +
      `${pinned ? 'server measured pinned to CPU 0, load generator to CPU 1' : 'no CPU pinning'}, ${ROUNDS} rounds x ${SECONDS} s after one warm-up round each, ` +
      `${CONCURRENCY} requests in flight over keep-alive connections, ${SITES} tracked sites requested in turn, no Accept-Encoding (both send the plain SVG).`,
    '',
    '| system | median req/s | rounds (req/s) | median server CPU µs / request | body |',
    '|---|---:|---|---:|---:|',
    `| bare hapi: \`GET /api/badge/{domain}\` answering a constant SVG | ${fmt(median(baseline))} | ${baseline.map((x) => fmt(x)).join(', ')} | ${fmt(median(cpu.bare), 1)} | ${baselineSvg.length} B |`,
    `| ours: \`GET /api/badge/{domain}\` (dist build, SQLite, LOG_LEVEL=warn) | ${fmt(median(measured))} | ${measured.map((x) => fmt(x)).join(', ')} | ${fmt(median(cpu.ours), 1)} | ${svg.length} B |`,
    '',
    '| measurement | figure | goal | met |',
    '|---|---:|---:|---|',
    `| ours / bare hapi (medians) | ${fmt(ratio, 2)}x | >= ${GOAL}x | ${ratio >= GOAL ? 'yes' : '**no**'} |`,
    `| ours / bare hapi, median of the per-round ratios | ${fmt(median(pairs), 2)}x | | (for reference: each pair ran back to back) |`,
    `| bare hapi / ours, CPU per request (medians) | ${fmt(median(cpu.bare) / median(cpu.ours), 2)}x | | (for reference: steadier when other load shares the machine) |`,
    `| non-200 answers | ${failures} | 0 | ${failures === 0 ? 'yes' : '**no**'} |`,
    `| service peak RSS | ${fmt(stats.rss / 1024 / 1024)} MB | | |`
  ].join('\n')
  console.log(`\n${table}\n`)
  if (DOCS) writeFigures('benchmarks.md', 'bench/badge', table)
} finally {
  await cleanup()
}
