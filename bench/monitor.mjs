// bench/monitor: the scheduler at scale and the status endpoint against bare hapi, in one run.
//   npm run bench:monitor     (builds first; about four minutes; loopback and the local MySQL only)
// Knobs: BENCH_SITES (10000), BENCH_INTERVAL_S (60), BENCH_RUN_S (150), BENCH_ROUNDS (3),
// BENCH_SECONDS (5), BENCH_MYSQL_URL (default TEST_MYSQL_URL or mysql://root@127.0.0.1:3306/test),
// BENCH_DOCS (1: rewrite the figures in docs/benchmarks.md).
import { fork, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { openDb } from '../dist/lib/store/db.js'
import { createKey } from '../dist/lib/store/keys.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { addSites } from '../dist/lib/store/sites.js'
import { ask, freePort, median, pin, start, stop, writeFigures } from './processes.mjs'

const SITES = Number(process.env.BENCH_SITES ?? 10_000)
const INTERVAL_S = Number(process.env.BENCH_INTERVAL_S ?? 60)
const RUN_S = Number(process.env.BENCH_RUN_S ?? 150)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const DOCS = (process.env.BENCH_DOCS ?? '1') === '1'
const MYSQL = process.env.BENCH_MYSQL_URL ?? process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'
const here = (file) => new URL(file, import.meta.url)

function peakRss(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
}

const mb = (bytes) => (bytes / 1024 / 1024).toFixed(0)

// A target for every site, in its own process.
const target = spawn(process.execPath, ['-e', `
  const s = require('node:http').createServer((q, r) => r.end('ok'))
  s.keepAliveTimeout = 0
  s.listen(0, '127.0.0.1', () => console.log(s.address().port))
`], { stdio: ['ignore', 'pipe', 'inherit'] })
const targetPort = await new Promise((resolve) => target.stdout.once('data', (d) => resolve(Number(String(d).trim()))))
const closed = await freePort()

const dbName = `bench_monitor_${process.pid}`
const admin = openDb(MYSQL)
await admin.raw(`CREATE DATABASE \`${dbName}\``)
const url = new URL(MYSQL)
url.pathname = `/${dbName}`
const db = openDb(url.toString())
const cleanup = async () => {
  target.kill()
  await db.destroy().catch(() => {})
  await admin.raw(`DROP DATABASE IF EXISTS \`${dbName}\``).catch(() => {})
  await admin.destroy()
}

try {
  await migrateLatest(db)
  const now = new Date()
  for (let i = 0; i < SITES; i += 1000) {
    await addSites({ db, now, entries: Array.from({ length: Math.min(1000, SITES - i) }, (_, j) => ({ domain: `s${i + j}.bench.test`, name: null })) })
  }
  const key = generateKey()
  await createKey({ db, name: 'bench', keyHash: hashKey(key), rateLimit: 1_000_000, now })
  const env = {
    DATABASE_URL: url.toString(),
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${targetPort}`,
    PORT: '0',
    LOG_LEVEL: 'warn'
  }
  console.error(`bench/monitor: ${SITES} sites x 3 locations every ${INTERVAL_S} s for ${RUN_S} s on MySQL`)

  // Phase 1: the scheduler at scale.
  const sut = await start('./monitor-sut.mjs', { ...env, CHECK_INTERVAL_S: String(INTERVAL_S) })
  const first = await ask(sut.child, 'stats')
  const startedAt = performance.now()
  const checksBefore = Number((await db('checks').count({ n: '*' }))[0].n)
  let rssPeak = 0
  while (performance.now() - startedAt < RUN_S * 1000) {
    await sleep(5000)
    rssPeak = Math.max(rssPeak, peakRss(sut.child.pid))
    const s = await ask(sut.child, 'stats')
    console.error(`  ${((performance.now() - startedAt) / 1000).toFixed(0)} s: started ${s.scheduler.started}, on time ${s.scheduler.onTime}, late ${s.scheduler.late}, skipped ${s.scheduler.skipped}, running ${s.scheduler.running}, queued ${s.scheduler.queued}, rss ${mb(s.rss)} MB`)
  }
  const last = await ask(sut.child, 'stats')
  const elapsedS = (performance.now() - startedAt) / 1000
  const checksAfter = Number((await db('checks').count({ n: '*' }))[0].n)
  rssPeak = Math.max(rssPeak, peakRss(sut.child.pid))
  await stop(sut.child)
  const sched = last.scheduler
  const onTimeShare = sched.started === 0 ? 0 : sched.onTime / sched.started
  const cpuPercent = ((last.cpu.user + last.cpu.system - first.cpu.user - first.cpu.system) / 1e6 / elapsedS) * 100
  const rowsPerS = (checksAfter - checksBefore) / elapsedS

  // Phase 2: the status endpoint against bare hapi, each alone on the machine in turn.
  // The server measured gets CPU 0, the load generator CPU 1.
  const status = await start('./monitor-sut.mjs', { ...env, CHECK_INTERVAL_S: '86400' }, 0)
  const bare = await start('./bare-hapi.mjs', {}, 0)
  const load = fork(here('./load.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  pin(load.pid, 1)
  const paths = Array.from({ length: 1000 }, (_, i) => `/api/v1/status/s${(i * 7919) % SITES}.bench.test`)
  const ours = []
  const baseline = []
  let failures = 0
  // One unmeasured round each first: the JIT warms up over the first seconds of load.
  await ask(load, { url: bare.uri, headers: {}, seconds: SECONDS, concurrency: 64, paths })
  await ask(load, { url: status.uri, headers: { authorization: `Bearer ${key}` }, seconds: SECONDS, concurrency: 64, paths })
  for (let r = 0; r < ROUNDS; r++) {
    const b = await ask(load, { url: bare.uri, headers: {}, seconds: SECONDS, concurrency: 64, paths })
    const o = await ask(load, { url: status.uri, headers: { authorization: `Bearer ${key}` }, seconds: SECONDS, concurrency: 64, paths })
    baseline.push(b.rate)
    ours.push(o.rate)
    failures += b.failed + o.failed
    console.error(`  round ${r + 1}: bare hapi ${b.rate.toFixed(0)}/s, status ${o.rate.toFixed(0)}/s`)
  }
  load.kill()
  bare.child.kill()
  await stop(status.child)

  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const table = [
    `Run ${when}: ${SITES} tracked sites x 3 locations every ${INTERVAL_S} s for ${elapsedS.toFixed(0)} s on MySQL (MariaDB on this machine), ` +
      `loopback targets, Node ${process.version}; then the status endpoint and bare hapi each pinned to CPU 0 with the load generator on CPU 1, ` +
      `${ROUNDS} rounds x ${SECONDS} s, 64 connections.`,
    '',
    '| measurement | figure | goal |',
    '|---|---|---|',
    `| checks started | ${sched.started} in ${elapsedS.toFixed(0)} s (${sched.late} late, ${sched.skipped} skipped) | |`,
    `| started within 5 s of due | ${(onTimeShare * 100).toFixed(2)}% | >= 99% |`,
    `| service CPU (2 cores = 200%) | ${cpuPercent.toFixed(0)}% | |`,
    `| service peak RSS | ${mb(rssPeak)} MB | < 400 MB |`,
    `| check rows written | ${rowsPerS.toFixed(1)}/s | |`,
    `| bare hapi, median of ${ROUNDS} | ${median(baseline).toFixed(0)} req/s | |`,
    `| GET /api/v1/status, median of ${ROUNDS} | ${median(ours).toFixed(0)} req/s | |`,
    `| status / bare hapi | ${(median(ours) / median(baseline)).toFixed(2)}x | >= 0.6x |`,
    `| non-200 answers | ${failures} | 0 |`
  ].join('\n')
  console.log(table)
  if (DOCS) writeFigures('benchmarks.md', 'bench/monitor', table)
} finally {
  await cleanup()
}
