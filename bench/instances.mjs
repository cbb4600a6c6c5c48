// bench/instances: several `serve` instances on one MySQL database and one Redis as one service
// (issue 16), in two parts.
//   flock /tmp/site-status-bench.lock npm run bench:instances     (builds first; about six minutes)
// Every instance is the built CLI, `node dist/lib/cli/index.js serve`, the process an operator runs,
// with DATABASE_URL on one fresh MariaDB database (made here, dropped at the end), REDIS_URL on
// Redis database 13 (flushed before and after), INSTANCE_ID i1..i3 and LOG_LEVEL=warn.
//
// Part 1, the status endpoint through HAProxy: `GET /api/v1/status/{domain}` with a key, 1,000
// tracked domains in turn, driven by wrk (bench/wrk.mjs: 1 thread, 64 keep-alive connections)
// through Debian's haproxy (/usr/sbin/haproxy, a config written here: http mode, roundrobin,
// keep-alive to the backends, one process per set-up, started here and killed at the end) in front
// of 1, 2 and 3 instances, and straight at one instance as the baseline of HAProxy's own cost. The
// scheduler is kept quiet (CHECK_INTERVAL_S=86400). The three instances run throughout; the
// set-up with one or two behind HAProxy leaves the others idle. One unmeasured warm-up round per
// set-up, then BENCH_ROUNDS rounds, each running the four set-ups back to back; medians. CPU of the
// instances, of haproxy, of MariaDB and of the whole machine comes from /proc. BENCH_PIN=1: the
// instances on CPU 0, haproxy and wrk on CPU 1 (taskset), the per-core view.
//
// Part 2, the scheduler: BENCH_SITES tracked sites, CHECK_INTERVAL_S=BENCH_INTERVAL_S, three
// instances started at once for BENCH_RUN_S, every name sent by CONNECT_TO to a loopback target as in
// bench/monitor (port 80 to the target, 443 to a closed port), each instance to a port of its own on
// that target, so that the target's counts say which instance sent the requests. After the
// instances stop (recording what waits), the checks table says: scheduled checks written a second,
// duplicates (a site checked more than once within one of its cycles, cycles as `phaseOf` in
// lib/monitoring/schedule/phase-wheel.ts aligns them; and, whatever the phase, two checks of a site less than
// half an interval apart), due times with no check within one interval of them (late by more than
// one interval), and each instance's CPU and RSS. The instances share the schedule through leases;
// duplicate checks are counted as found, never assumed away.
//
// Knobs: BENCH_SITES (30000), BENCH_INTERVAL_S (60), BENCH_RUN_S (150), BENCH_ROUNDS (5),
// BENCH_SECONDS (5), BENCH_PIN (0), BENCH_STATUS (1; 0 skips part 1), BENCH_SCHEDULER (1; 0 skips
// part 2), BENCH_MYSQL_URL (default TEST_MYSQL_URL or mysql://root@127.0.0.1:3306/test; a database of
// the bench's own is made beside it), BENCH_REDIS_URL (redis://127.0.0.1:6379/13), BENCH_DOCS (1:
// rewrite the figures in docs/benchmarks.md), BENCH_NAME (the section written: bench/instances, or
// "bench/instances, pinned" with BENCH_PIN=1), BENCH_DEBUG (0; 1 prints each instance's log, three
// checks that were not up, and the scheduled checks a second).
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { loadConfig } from '../dist/config/index.js'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
import { phaseOf } from '../dist/lib/monitoring/schedule/phase-wheel.js'
import { createKey } from '../dist/lib/store/keys.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { currentCommit, freePort, median, scratchMysql, writeFigures } from './processes.mjs'
import { cpuSeconds, runWrk, setCpus, wrkVersion } from './wrk.mjs'

const num = (name, dflt) => {
  const v = process.env[name]
  return v === undefined || v === '' ? dflt : Number(v)
}
const SITES = num('BENCH_SITES', 30_000)
const INTERVAL_S = num('BENCH_INTERVAL_S', 60)
const RUN_S = num('BENCH_RUN_S', 150)
const ROUNDS = Math.max(1, num('BENCH_ROUNDS', 5))
const SECONDS = Math.max(1, num('BENCH_SECONDS', 5))
const PIN = num('BENCH_PIN', 0) === 1
const STATUS = num('BENCH_STATUS', 1) === 1
const SCHEDULER = num('BENCH_SCHEDULER', 1) === 1
const DOCS = num('BENCH_DOCS', 1) === 1
const NAME = process.env.BENCH_NAME ?? (PIN ? 'bench/instances, pinned' : 'bench/instances')
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/13'
const INSTANCES = 3
const CONNECTIONS = 64
const HAPROXY = '/usr/sbin/haproxy'
const CLI = fileURLToPath(new URL('../dist/lib/cli/index.js', import.meta.url))
/** The issue's sizes; a run below them is labelled a smoke run in the figures. */
const FULL = SITES >= 30_000 && RUN_S >= 150 && ROUNDS >= 5 && SECONDS >= 5
/** A scheduled check counts as on time when it started within this long of its due time (as bench/monitor). */
const ON_TIME_MS = 5000
const CORES = os.availableParallelism?.() ?? os.cpus().length

const mb = (bytes) => (bytes / 1024 / 1024).toFixed(0)
const fmt = (n, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-'
const pct = (xs, p) => (xs.length === 0 ? NaN : xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))])

function procStatus(pid, field) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024
  } catch {
    return 0
  }
}
const cpuOf = (pid) => {
  try {
    return cpuSeconds(pid)
  } catch {
    return NaN
  }
}
/** CPU seconds of this process's children that have ended and been reaped: each wrk run, once it is over. */
function reapedChildrenCpu() {
  const fields = readFileSync('/proc/self/stat', 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ')
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_S
}
const TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100
  } catch {
    return 100
  }
})()
/** Busy CPU seconds of the whole machine so far (every core; /proc/stat less idle and iowait). */
function machineCpu() {
  const fields = /^cpu\s+(.*)$/m.exec(readFileSync('/proc/stat', 'utf8'))[1].trim().split(/\s+/).map(Number)
  const [user, nice, system, , , irq, softirq, steal] = fields
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_S
}
/** MariaDB's server process, to show its share of the machine (it serves other work here too). */
function mysqldPid() {
  for (const name of ['mariadbd', 'mysqld']) {
    try {
      return Number(execFileSync('pidof', ['-s', name]).toString().trim())
    } catch {
      // not this one
    }
  }
  return null
}

/** Every process this bench started, killed on the way out whatever happens. */
const children = new Set()
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})
function track(child) {
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}
const exited = (child) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r))

async function get(url, headers = {}) {
  const res = await fetch(url, { headers })
  return { status: res.status, body: await res.text() }
}

/** Starts one `serve` instance and waits for its /healthz to answer 200. */
async function startInstance(n, env) {
  const port = await freePort()
  const child = track(
    spawn(process.execPath, [CLI, 'serve'], {
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', INSTANCE_ID: `i${n}` },
      stdio: ['ignore', 'pipe', 'pipe']
    })
  )
  // The log at LOG_LEVEL=warn: every line counted by its message, and the checks it says were
  // left unrecorded at the stop.
  let logged = ''
  let partial = ''
  const log = { lines: 0, messages: new Map(), unrecordedAtStop: 0 }
  const keep = (d) => {
    if (logged.length < 50_000) logged += d
    const lines = (partial + d).split('\n')
    partial = lines.pop()
    for (const line of lines) {
      if (line.trim() === '') continue
      log.lines++
      let entry
      try {
        entry = JSON.parse(line)
      } catch {
        entry = { msg: line.slice(0, 80) }
      }
      // Figures in a message (the scheduler's once-a-minute warning) would make every line its own.
      const msg = String(entry.msg ?? '').replace(/\d+(\.\d+)?/g, 'N')
      log.messages.set(msg, (log.messages.get(msg) ?? 0) + 1)
      if (entry.msg === 'checks not recorded at stop') log.unrecordedAtStop += Number(entry.pending ?? 0)
    }
  }
  child.stdout.setEncoding('utf8').on('data', keep)
  child.stderr.setEncoding('utf8').on('data', keep)
  const uri = `http://127.0.0.1:${port}`
  const deadline = performance.now() + 120_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance i${n} exited with ${child.exitCode}: ${logged.slice(0, 1000)}`)
    if (performance.now() > deadline) throw new Error(`instance i${n} did not answer /healthz in 120 s: ${logged.slice(0, 1000)}`)
    try {
      if ((await get(`${uri}/healthz`)).status === 200) break
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  return { id: `i${n}`, port, uri, child, pid: child.pid, log, text: () => logged }
}

/** SIGTERM (the service drains and records what waits), then SIGKILL after 60 s. */
async function stopInstance(inst) {
  if (inst.child.exitCode !== null || inst.child.signalCode !== null) return
  const gone = exited(inst.child)
  inst.child.kill('SIGTERM')
  const late = setTimeout(() => inst.child.kill('SIGKILL'), 60_000)
  await gone
  clearTimeout(late)
}

/** Starts haproxy (foreground, a config of its own) in front of `backends`; resolves once it forwards. */
async function startHaproxy(backends, dir) {
  const port = await freePort()
  const file = join(dir, `haproxy-${backends.length}.cfg`)
  writeFileSync(
    file,
    [
      'global',
      '  maxconn 4096',
      'defaults',
      '  mode http',
      '  option http-keep-alive',
      '  timeout connect 5s',
      '  timeout client 60s',
      '  timeout server 60s',
      '  timeout http-keep-alive 60s',
      'frontend fe',
      `  bind 127.0.0.1:${port}`,
      '  default_backend be',
      'backend be',
      '  balance roundrobin',
      '  http-reuse safe',
      ...backends.map((b) => `  server ${b.id} 127.0.0.1:${b.port}`),
      ''
    ].join('\n')
  )
  execFileSync(HAPROXY, ['-c', '-q', '-f', file], { stdio: ['ignore', 'ignore', 'inherit'] })
  const child = track(spawn(HAPROXY, ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'inherit'] }))
  const uri = `http://127.0.0.1:${port}`
  const deadline = performance.now() + 20_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}`)
    if (performance.now() > deadline) throw new Error('haproxy did not forward /healthz in 20 s')
    try {
      if ((await get(`${uri}/healthz`)).status === 200) break
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  return { uri, child, pid: child.pid, file }
}

function haproxyVersion() {
  try {
    return /version (\S+)/.exec(execFileSync(HAPROXY, ['-v']).toString())?.[1] ?? 'unknown'
  } catch {
    return 'unknown'
  }
}
function commit() {
  try {
    const head = currentCommit()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'lib', 'config', 'workers', 'migrations'], {
      stdio: ['ignore', 'pipe', 'ignore']
    })
      .toString()
      .trim()
    return dirty === '' ? head : `${head} with local changes`
  } catch {
    return 'unknown'
  }
}

async function flushRedis() {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await redis.connect()
    await redis.flushdb()
  } finally {
    redis.disconnect()
  }
}

// ---------------------------------------------------------------------------------------------
// The loopback target: one port per instance; it counts the requests reaching each port.

const target = track(
  spawn(
    process.execPath,
    [
      '-e',
      `
  const http = require('node:http')
  const counts = []
  const ports = []
  let listening = 0
  for (let i = 0; i < ${INSTANCES}; i++) {
    counts.push(0)
    const s = http.createServer((q, r) => {
      counts[i]++
      r.end('ok')
    })
    s.keepAliveTimeout = 0
    s.listen(0, '127.0.0.1', () => {
      ports[i] = s.address().port
      if (++listening === ${INSTANCES}) process.send({ ports })
    })
  }
  process.on('message', (m) => { if (m === 'counts') process.send({ counts }) })
`
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }
  )
)
const targetPorts = await new Promise((resolve) => target.once('message', (m) => resolve(m.ports)))
const targetCounts = () =>
  new Promise((resolve) => {
    target.once('message', (m) => resolve(m.counts))
    target.send('counts')
  })
const closed = await freePort()

const scratch = await scratchMysql('bench_instances')
const { db } = scratch
const tmp = mkdtempSync(join(os.tmpdir(), 'bench-instances-'))
const instances = []
const proxies = []

async function cleanup() {
  await Promise.all(instances.map((i) => stopInstance(i).catch(() => {})))
  for (const p of proxies) p.child.kill('SIGTERM')
  await Promise.all(proxies.map((p) => exited(p.child)))
  target.kill()
  await scratch.drop()
  await flushRedis().catch(() => {})
  rmSync(tmp, { recursive: true, force: true })
}

// Interrupted: stop what was started and drop the database before going.
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    cleanup().finally(() => process.exit(130))
  })

try {
  if (!STATUS && !SCHEDULER) throw new Error('BENCH_STATUS=0 and BENCH_SCHEDULER=0: nothing to run')
  await flushRedis()
  await migrateLatest(db)
  const now = new Date()
  for (let i = 0; i < SITES; i += 1000) {
    await addSites({
      db,
      now,
      entries: Array.from({ length: Math.min(1000, SITES - i) }, (_, j) => ({ domain: `s${i + j}.bench.test`, name: null }))
    })
  }
  const key = generateKey()
  // A limit no round comes near: a refused request would be measured as an error.
  await createKey({ db, name: 'bench', keyHash: hashKey(key), rateLimit: 1_000_000_000, now })
  const headers = { authorization: `Bearer ${key}` }
  const locations = loadConfig({ DATABASE_URL: 'sqlite::memory:' }).locations.length
  const common = {
    DATABASE_URL: scratch.url,
    REDIS_URL,
    ALLOW_PRIVATE_TARGETS: '1',
    LOG_LEVEL: 'warn',
    // The same on every instance, as the contract asks (and no race to make data/webhook.key).
    WEBHOOK_KEY: randomBytes(32).toString('base64')
  }
  const connectTo = (i) => `:443:127.0.0.1:${closed},:80:127.0.0.1:${targetPorts[i]}`
  const mysqld = mysqldPid()
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const out = [
    `Run ${when}, build ${commit()}: ${FULL ? '' : '**smoke run at reduced size, not the issue’s figures** ('}` +
      `${FULL ? '' : `BENCH_SITES=${SITES}, BENCH_RUN_S=${RUN_S}, BENCH_ROUNDS=${ROUNDS}, BENCH_SECONDS=${SECONDS}). `}` +
      `${INSTANCES} instances of \`serve\` on one MariaDB database and Redis ${REDIS_URL.replace(/^redis:\/\/[^/]*/, '')} (database), ` +
      `Node ${process.version}, HAProxy ${haproxyVersion()}, wrk ${wrkVersion()}, ${CORES} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}) shared with other work` +
      `${PIN ? '; pinned: instances on CPU 0, haproxy and wrk on CPU 1' : ', unpinned'}.`
  ]

  // -------------------------------------------------------------------------------------------
  // Part 1: the status endpoint through HAProxy.
  if (STATUS) {
    console.error(`bench/instances part 1: the status endpoint, ${ROUNDS} rounds x ${SECONDS} s, ${SITES} tracked sites`)
    for (let n = 1; n <= INSTANCES; n++)
      instances.push(await startInstance(n, { ...common, CONNECT_TO: connectTo(n - 1), CHECK_INTERVAL_S: '86400' }))
    const health = await get(`${instances[0].uri}/healthz`)
    for (let n = 1; n <= INSTANCES; n++) proxies.push(await startHaproxy(instances.slice(0, n), tmp))
    if (PIN) {
      for (const i of instances) setCpus(i.pid, '0')
      for (const p of proxies) setCpus(p.pid, CORES > 1 ? '1' : '0')
    }
    const paths = Array.from({ length: Math.min(1000, SITES) }, (_, i) => `/api/v1/status/s${(i * 7919) % SITES}.bench.test`)
    const systems = [
      { name: 'straight at i1, no HAProxy', uri: instances[0].uri, proxy: null, n: 1 },
      ...proxies.map((p, i) => ({ name: `HAProxy, ${i + 1} instance${i === 0 ? '' : 's'}`, uri: p.uri, proxy: p, n: i + 1 }))
    ]
    let sampleBody = ''
    for (const s of systems) {
      const sample = await get(`${s.uri}${paths[0]}`, headers)
      if (sample.status !== 200) throw new Error(`${s.name}: unexpected status answer ${sample.status} ${sample.body.slice(0, 200)}`)
      sampleBody = sample.body
    }
    const one = async (s) => {
      const inst0 = instances.map((i) => cpuOf(i.pid))
      const hap0 = proxies.map((p) => cpuOf(p.pid))
      const db0 = mysqld ? cpuOf(mysqld) : NaN
      const m0 = machineCpu()
      const w0 = reapedChildrenCpu()
      const t0 = performance.now()
      const r = await runWrk({ url: s.uri, paths, headers, connections: CONNECTIONS, seconds: SECONDS, cpu: PIN && CORES > 1 ? 1 : null })
      // Over the whole sampled span (wrk's start and exit included), so that the shares add up.
      const wall = (performance.now() - t0) / 1000
      const share = (a, b) => ((b - a) / wall) * 100
      const inst = instances.map((i, k) => share(inst0[k], cpuOf(i.pid)))
      const hap = proxies.reduce((sum, p, k) => sum + share(hap0[k], cpuOf(p.pid)), 0)
      const machine = share(m0, machineCpu())
      const dbShare = mysqld ? share(db0, cpuOf(mysqld)) : NaN
      const wrk = share(w0, reapedChildrenCpu())
      const instTotal = inst.reduce((a, b) => a + b, 0)
      const rest = machine - instTotal - hap - wrk - (Number.isFinite(dbShare) ? dbShare : 0)
      const us = (pctOfCore) => ((pctOfCore / 100) * wall * 1e6) / Math.max(1, r.requests)
      return { ...r, inst, instTotal, hap, wrk, machine, dbShare, rest, instUs: us(instTotal), hapUs: us(hap) }
    }
    for (const s of systems) await one(s)
    const results = systems.map(() => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (const [k, s] of systems.entries()) results[k].push(await one(s))
      console.error(
        `  round ${round + 1}: ${systems.map((s, k) => `${s.name} ${fmt(results[k][round].rps)}/s (p99 ${results[k][round].p99Ms.toFixed(1)} ms, machine ${results[k][round].machine.toFixed(0)}%)`).join('; ')}`
      )
    }
    const med = (k, f) => median(results[k].map(f))
    const rps = systems.map((_, k) => med(k, (r) => r.rps))
    const rows = systems.map((s, k) => {
      const errors = results[k].reduce((n, r) => n + r.non2xx + r.socketErrors, 0)
      const perInstance = instances.map((_, j) => fmt(med(k, (r) => r.inst[j]))).join(' / ')
      return (
        `| ${s.name} | ${fmt(rps[k])} (${results[k].map((r) => fmt(r.rps)).join(', ')}) | ${fmt(
          med(k, (r) => r.p50Ms),
          2
        )} / ${fmt(
          med(k, (r) => r.p99Ms),
          2
        )} | ` +
        `${perInstance} (${fmt(
          med(k, (r) => r.instUs),
          1
        )} µs/req) | ${
          s.proxy
            ? `${fmt(med(k, (r) => r.hap))} (${fmt(
                med(k, (r) => r.hapUs),
                1
              )} µs/req)`
            : '-'
        } | ` +
        `${fmt(med(k, (r) => r.wrk))} | ${fmt(med(k, (r) => r.dbShare))} | ${fmt(med(k, (r) => r.rest))} | ${fmt(med(k, (r) => r.machine))} of ${CORES * 100} | ${errors} |`
      )
    })
    const perRound = (a, b) => median(results[a].map((r, i) => results[b][i].rps / r.rps))
    out.push(
      '',
      `Part 1: \`GET /api/v1/status/{domain}\` (${paths.length} tracked domains in turn, a key; ${Buffer.byteLength(sampleBody)}-byte answers), ` +
        `wrk with 1 thread and ${CONNECTIONS} keep-alive connections, ${ROUNDS} rounds x ${SECONDS} s after one warm-up round each, ` +
        'every round running the four set-ups back to back; the instances with CHECK_INTERVAL_S=86400 (scheduler quiet), all three running in every set-up. ' +
        `CPU as % of one core over the round, medians (\`/proc\`); wrk's from its exit (this process's reaped children); "everything else" is the machine's busy time (\`/proc/stat\`) less all of those. ` +
        `i1's /healthz: \`${health.body}\`.`,
      '',
      '| set-up | req/s, median (rounds) | latency p50 / p99 ms | CPU % of instances i1 / i2 / i3 (per request) | CPU % of haproxy (per request) | CPU % of wrk | CPU % of MariaDB | CPU % of everything else on the machine | machine CPU % | non-2xx + socket errors |',
      '|---|---|---:|---|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      '| ratio | of the medians | median of per-round ratios |',
      '|---|---:|---:|',
      `| HAProxy with 1 instance / straight at it (HAProxy's own cost) | ${fmt(rps[1] / rps[0], 2)}x | ${fmt(perRound(0, 1), 2)}x |`,
      `| 2 instances / 1 (through HAProxy) | ${fmt(rps[2] / rps[1], 2)}x | ${fmt(perRound(1, 2), 2)}x |`,
      `| 3 instances / 1 (through HAProxy) | ${fmt(rps[3] / rps[1], 2)}x | ${fmt(perRound(1, 3), 2)}x |`
    )
    console.error(out.slice(-8).join('\n'))
    for (const p of proxies) p.child.kill('SIGTERM')
    await Promise.all(proxies.map((p) => exited(p.child)))
    proxies.length = 0
    await Promise.all(instances.map((i) => stopInstance(i)))
    instances.length = 0
  }

  // -------------------------------------------------------------------------------------------
  // Part 2: the scheduler across three instances.
  if (SCHEDULER) {
    console.error(`bench/instances part 2: ${SITES} sites every ${INTERVAL_S} s, ${INSTANCES} instances, ${RUN_S} s`)
    const spawnedAt = Date.now()
    instances.push(
      ...(await Promise.all(
        Array.from({ length: INSTANCES }, (_, k) =>
          startInstance(k + 1, { ...common, CONNECT_TO: connectTo(k), CHECK_INTERVAL_S: String(INTERVAL_S) })
        )
      ))
    )
    const readyAt = Date.now()
    const started = performance.now()
    const counts0 = await targetCounts()
    const cpu0 = instances.map((i) => cpuOf(i.pid))
    const db0 = mysqld ? cpuOf(mysqld) : NaN
    const m0 = machineCpu()
    const rss = instances.map(() => ({ low: Infinity, high: 0 }))
    const leftS = () => RUN_S - (performance.now() - started) / 1000
    while (leftS() > 0) {
      await sleep(Math.min(5000, Math.max(0, leftS() * 1000)))
      const counts = await targetCounts()
      instances.forEach((inst, k) => {
        const r = procStatus(inst.pid, 'VmRSS')
        if (leftS() < RUN_S / 2) {
          rss[k].low = Math.min(rss[k].low, r)
          rss[k].high = Math.max(rss[k].high, r)
        }
      })
      const rowsSoFar = Number((await db('checks').where('checked_at', '>=', new Date(readyAt)).count({ n: '*' }))[0].n)
      console.error(
        `  ${((performance.now() - started) / 1000).toFixed(0)} s: ${rowsSoFar} check rows since ready; requests at the target by instance ${counts.map((c, k) => c - counts0[k]).join(' / ')}; ` +
          `rss ${instances.map((i) => mb(procStatus(i.pid, 'VmRSS'))).join(' / ')} MB`
      )
    }
    const endedAt = Date.now()
    const elapsedS = (performance.now() - started) / 1000
    const counts1 = await targetCounts()
    const cpu = instances.map((inst, k) => ((cpuOf(inst.pid) - cpu0[k]) / elapsedS) * 100)
    const dbShare = mysqld ? ((cpuOf(mysqld) - db0) / elapsedS) * 100 : NaN
    const machine = ((machineCpu() - m0) / elapsedS) * 100
    const peak = instances.map((i) => procStatus(i.pid, 'VmHWM'))
    const healths = []
    for (const inst of instances) healths.push(await get(`${inst.uri}/healthz`).catch((err) => ({ status: 0, body: String(err) })))
    await Promise.all(instances.map((i) => stopInstance(i)))
    if (process.env.BENCH_DEBUG) for (const i of instances) console.error(i.id, i.text().slice(0, 3000))
    const logSummary = (inst) =>
      `${inst.log.lines}${inst.log.lines === 0 ? '' : `: ${[...inst.log.messages].map(([m, n]) => `${n} x "${m}"`).join(', ')}`}`

    // Every scheduled check since the first instance was spawned.
    const checkRows = await db('checks')
      .join('sites', 'sites.id', 'checks.site_id')
      .where('checks.source', 'schedule')
      .where('checks.checked_at', '>=', new Date(spawnedAt))
      .select('sites.domain', 'checks.checked_at', 'checks.status')
    if (process.env.BENCH_DEBUG)
      console.error(await db('checks').whereNot('status', 'up').where('source', 'schedule').limit(3).select('status', 'locations'))
    const columns = Object.keys(await db('checks').columnInfo())
    const instanceColumn = columns.find((c) => /instance/i.test(c))
    const byInstanceColumn = instanceColumn
      ? await db('checks')
          .where('source', 'schedule')
          .where('checked_at', '>=', new Date(readyAt))
          .where('checked_at', '<', new Date(endedAt))
          .groupBy(instanceColumn)
          .select({ instance: instanceColumn })
          .count({ n: '*' })
      : []
    const intervalMs = INTERVAL_S * 1000
    const times = new Map()
    let inWindow = 0
    const statuses = new Map()
    const perSecond = new Map()
    for (const row of checkRows) {
      const t = new Date(row.checked_at).getTime()
      if (t >= readyAt && t < endedAt) {
        inWindow++
        statuses.set(row.status, (statuses.get(row.status) ?? 0) + 1)
      }
      const s = Math.floor((t - readyAt) / 1000)
      perSecond.set(s, (perSecond.get(s) ?? 0) + 1)
      let list = times.get(row.domain)
      if (list === undefined) times.set(row.domain, (list = []))
      list.push(t)
    }
    let cyclesDuplicated = 0
    let extraChecks = 0
    let closePairs = 0
    let due = 0
    let onTime = 0
    let lateOverInterval = 0
    let gapSites = 0
    const delays = []
    for (let i = 0; i < SITES; i++) {
      const domain = `s${i}.bench.test`
      const phase = phaseOf(domain, intervalMs)
      const list = (times.get(domain) ?? []).sort((a, b) => a - b)
      // Duplicates: more than one check in one of the site's cycles (a cycle runs from a due time
      // to the next), and, whatever the phase, consecutive checks less than half an interval apart.
      const perCycle = new Map()
      for (const t of list) {
        const cycle = Math.floor((t - phase + 1000) / intervalMs)
        perCycle.set(cycle, (perCycle.get(cycle) ?? 0) + 1)
      }
      for (const n of perCycle.values()) {
        if (n > 1) {
          cyclesDuplicated++
          extraChecks += n - 1
        }
      }
      for (let k = 1; k < list.length; k++) if (list[k] - list[k - 1] < intervalMs / 2) closePairs++
      // Due times from the moment all three were ready that had a full interval before the end:
      // the first check from the due time (less a second of clock granularity) until the next one.
      for (let at = Math.ceil((readyAt - phase) / intervalMs) * intervalMs + phase; at + intervalMs <= endedAt; at += intervalMs) {
        due++
        const first = list.find((t) => t >= at - 1000 && t < at + intervalMs - 1000)
        if (first === undefined) {
          lateOverInterval++
          continue
        }
        delays.push(first - at)
        if (first - at <= ON_TIME_MS) onTime++
      }
      // Phase-independent: from ready to the end, never more than two intervals without a check.
      const marks = [readyAt, ...list.filter((t) => t >= readyAt && t < endedAt), endedAt]
      if (marks.some((t, k) => k > 0 && t - marks[k - 1] > 2 * intervalMs)) gapSites++
    }
    delays.sort((a, b) => a - b)
    if (process.env.BENCH_DEBUG)
      console.error(
        'checks by second from ready',
        [...perSecond]
          .sort((a, b) => a[0] - b[0])
          .map(([k, v]) => `${k}:${v}`)
          .join(' ')
      )
    const requests = counts1.map((c, k) => c - counts0[k])
    const totalRequests = requests.reduce((a, b) => a + b, 0)
    const expectedPerS = SITES / INTERVAL_S
    console.error(
      `  ${inWindow} scheduled checks in ${elapsedS.toFixed(0)} s; ${cyclesDuplicated} duplicated cycles (${extraChecks} extra checks), ${closePairs} close pairs; due ${due}: ${lateOverInterval} with no check within an interval`
    )
    const instRows = instances.map((inst, k) => {
      let h = {}
      try {
        h = JSON.parse(healths[k].body)
      } catch {
        // reported as is below
      }
      return (
        `| ${inst.id} | ${fmt(requests[k] / elapsedS, 1)} (${fmt(requests[k] / locations / elapsedS, 1)} checks/s) | ${fmt(cpu[k])} | ` +
        `${mb(peak[k])}; ${mb(rss[k].low)}-${mb(rss[k].high)} | ${healths[k].status} \`${h.schedule ?? healths[k].body.slice(0, 80)}\` | ${inst.log.unrecordedAtStop} | ${logSummary(inst)} |`
      )
    })
    out.push(
      '',
      `Part 2: ${fmt(SITES)} tracked sites x ${locations} locations every ${INTERVAL_S} s, ${INSTANCES} instances started at once (CHECK_INTERVAL_S=${INTERVAL_S}), ` +
        `measured for ${elapsedS.toFixed(0)} s from the moment all three answered /healthz; every name sent by CONNECT_TO to a loopback target ` +
        `(443 refused, then the GET on 80), each instance to a port of its own. Rows are the checks table's scheduled checks.`,
      '',
      '| scheduler | figure | goal |',
      '|---|---|---|',
      `| scheduled checks written a second (rows with \`checked_at\` in the window) / one check per site per interval | ${fmt(inWindow / elapsedS, 1)} / ${fmt(expectedPerS, 1)} | equal |`,
      `| requests at the target a second, all instances / divided by ${locations} locations | ${fmt(totalRequests / elapsedS, 1)} / ${fmt(totalRequests / locations / elapsedS, 1)} | |`,
      ...(instanceColumn
        ? [`| rows in the window by \`checks.${instanceColumn}\` | ${byInstanceColumn.map((r) => `${r.instance}: ${r.n}`).join(', ')} | |`]
        : ["| rows by instance | the checks table has no instance column: see the target's counts below | |"]),
      `| site cycles checked more than once (extra checks), since the first instance started | ${fmt(cyclesDuplicated)} (${fmt(extraChecks)}) | 0 |`,
      `| consecutive checks of one site less than half an interval apart (phase-independent) | ${fmt(closePairs)} | 0 |`,
      `| due times with a full interval before the end / with no check within one interval of them (late by more than one interval) | ${fmt(due)} / ${fmt(lateOverInterval)} | - / 0 |`,
      `| sites ever more than two intervals without a check in the window (phase-independent) | ${fmt(gapSites)} | 0 |`,
      `| scheduled checks in the window by status | ${[...statuses].map(([k, n]) => `${k} ${fmt(n)}`).join(', ') || '-'} | |`,
      `| first check within ${ON_TIME_MS / 1000} s of due; delay from due to the first check: p50 / p99 / max | ${due === 0 ? '-' : `${((onTime / due) * 100).toFixed(2)}%`}; ${fmt(pct(delays, 50))} / ${fmt(pct(delays, 99))} / ${fmt(delays.at(-1))} ms | |`,
      `| CPU % of MariaDB (serving other work too) / of the whole machine (${CORES * 100}% = ${CORES} cores) | ${fmt(dbShare)} / ${fmt(machine)} | |`,
      '',
      '| instance | requests at its target port a second (/ locations) | CPU % of a core | RSS MB: peak; second half of the run, lowest-highest | /healthz at the end: HTTP, "schedule" | checks left unrecorded at the stop (its log) | log lines at LOG_LEVEL=warn, by message |',
      '|---|---:|---:|---|---|---:|---|',
      ...instRows
    )
    console.error(out.slice(-20).join('\n'))
    instances.length = 0
  }

  const text = out.join('\n')
  console.log(text)
  if (DOCS) writeFigures('benchmarks.md', NAME, text)
} finally {
  await cleanup()
}
