// bench/redis-limit: the per-request cost of the shared rate limit. The keyed status route
// (`GET /api/v1/status/{domain}`, cost 1) from the real service (dist build) twice in the same run:
// without REDIS_URL (the in-memory window) and with REDIS_URL (one Lua script call to Redis per
// request), driven by wrk (bench/wrk.mjs), pinned then unpinned.
//   npm run bench:redis     (builds first; about three minutes; loopback, temporary SQLite files and
//                            a private redis-server on a free loopback port only)
// Knobs: BENCH_SITES (100), BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_CONCURRENCY (64), BENCH_DOCS (1: write
// the figures into docs/benchmarks.md).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
import { openDb } from '../dist/lib/store/db.js'
import { createKey } from '../dist/lib/store/keys.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { freePort, median, start, stop, writeFigures } from './processes.mjs'
import { compareServers, cpuSeconds, setCpus, wrkVersion } from './wrk.mjs'

const SITES = Number(process.env.BENCH_SITES ?? 100)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const DOCS = process.env.BENCH_DOCS !== '0'
const REDIS_SERVER = '/usr/bin/redis-server'

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

const dir = mkdtempSync(join(os.tmpdir(), 'bench-redis-'))
const children = []
const cleanup = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}

/** A SQLite database with the sites and a key whose limit no run reaches; returns its URL and the key. */
async function database(name) {
  const url = `sqlite:${join(dir, `${name}.sqlite`)}`
  const db = openDb(url)
  await migrateLatest(db)
  await addSites({ db, now: new Date(), entries: Array.from({ length: SITES }, (_, i) => ({ domain: `s${i}.bench.test`, name: null })) })
  const key = generateKey()
  await createKey({ db, name: 'bench', keyHash: hashKey(key), rateLimit: 1_000_000, now: new Date() })
  await db.destroy()
  return { url, key }
}

try {
  const redisPort = await freePort()
  const redis = spawn(REDIS_SERVER, ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore'
  })
  children.push(redis)
  const closed = await freePort()
  const common = {
    ALLOW_PRIVATE_TARGETS: '1',
    // Nothing answers the scheduled probes (a closed port), and a day passes between them: the
    // status route answers from memory in both systems alike.
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${closed}`,
    CHECK_INTERVAL_S: '86400',
    PORT: '0',
    LOG_LEVEL: 'warn'
  }
  const memoryDb = await database('memory')
  const redisDb = await database('redis')
  console.error(`bench/redis-limit: ${SITES} sites, wrk, ${CONCURRENCY} connections, ${ROUNDS} rounds x ${SECONDS} s, pinned then unpinned`)
  const memory = await start('./monitor-sut.mjs', { ...common, DATABASE_URL: memoryDb.url })
  children.push(memory.child)
  const shared = await start('./monitor-sut.mjs', { ...common, DATABASE_URL: redisDb.url, REDIS_URL: `redis://127.0.0.1:${redisPort}/0` })
  children.push(shared.child)

  const paths = Array.from({ length: SITES }, (_, i) => `/api/v1/status/s${i}.bench.test`)
  for (const [uri, key] of [
    [memory.uri, memoryDb.key],
    [shared.uri, redisDb.key]
  ]) {
    const r = await fetch(`${uri}${paths[1]}`, { headers: { authorization: `Bearer ${key}` } })
    if (r.status !== 200 || r.headers.get('ratelimit-limit') !== '1000000')
      throw new Error(`unexpected answer: ${r.status} ${await r.text()}`)
  }
  // The Redis system is the service and its redis-server: pinned, both on CPU 0 as on one machine.
  const systems = [
    { name: 'memory', uri: memory.uri, pid: memory.child.pid, headers: { authorization: `Bearer ${memoryDb.key}` } },
    { name: 'redis', uri: shared.uri, pid: shared.child.pid, headers: { authorization: `Bearer ${redisDb.key}` } }
  ]
  const runs = []
  for (const pinned of [true, false]) {
    setCpus(redis.pid, pinned ? '0' : `0-${os.availableParallelism() - 1}`)
    const before = cpuSeconds(redis.pid)
    const run = await compareServers({ systems, paths, pinned, rounds: ROUNDS, seconds: SECONDS, connections: CONCURRENCY })
    // Warm-up and measured rounds alike; the request count is estimated from the measured rates.
    const requests = run.systems[1].rps.reduce((x, y) => x + y, 0) * SECONDS * ((ROUNDS + 1) / ROUNDS)
    runs.push({ ...run, redisCpuUs: ((cpuSeconds(redis.pid) - before) * 1e6) / requests })
  }
  await stop(memory.child)
  await stop(shared.child)

  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const rows = []
  for (const run of runs) {
    const mode = run.pinned ? 'pinned' : 'unpinned'
    for (const s of run.systems) {
      const label = s.name === 'memory' ? 'without REDIS_URL (in-memory window)' : 'with REDIS_URL (one script call per request)'
      const extra = s.name === 'redis' ? ` + ${fmt(run.redisCpuUs, 1)} in redis-server` : ''
      rows.push(
        `| ${mode} | ${label} | ${fmt(s.median.rps)} | ${s.rps.map((x) => fmt(x)).join(', ')} | ${fmt(s.median.p50Ms, 2)} / ${fmt(s.median.p99Ms, 2)} | ${fmt(s.median.cpuUs, 1)}${extra} | ${s.non2xx + s.socketErrors} |`
      )
    }
    const [m, r] = run.systems
    rows.push(
      `| ${mode} | with / without | ${fmt(r.median.rps / m.median.rps, 2)}x (per round: ${fmt(median(run.perRound.map(([x, y]) => y / x)), 2)}x) | | | | |`
    )
  }
  const table = [
    `Run ${when}: ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, wrk ${wrkVersion()} (1 thread, ` +
      `${CONCURRENCY} keep-alive connections), ${ROUNDS} rounds x ${SECONDS} s after one warm-up round each, both systems back to back in every round; ` +
      `pinned: both services and redis-server on CPU 0, wrk on CPU 1; unpinned: no taskset. ${SITES} tracked sites requested in turn with one key ` +
      `(limit 1,000,000/min, never reached), no Accept-Encoding. Redis: a private redis-server on loopback, no persistence.`,
    '',
    '| mode | system | median req/s | rounds (req/s) | median latency p50 / p99 (ms) | median CPU µs / request | non-2xx + socket errors |',
    '|---|---|---:|---|---:|---:|---:|',
    ...rows
  ].join('\n')
  console.log(`\n${table}\n`)
  if (DOCS) writeFigures('benchmarks.md', 'bench/redis-limit', table)
} finally {
  cleanup()
}
