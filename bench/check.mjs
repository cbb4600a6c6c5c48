#!/usr/bin/env node
/**
 * bench/check: location probes per second, cache-miss checks per second, and the same-run
 * baselines they are judged against (raw undici, prometheus-blackbox-exporter). Loopback only.
 *
 *   npm run bench:check      (= npm run build, then this script unpinned and again with BENCH_PIN=1)
 *
 * Knobs (environment): BENCH_ROUNDS (7, at most 9), BENCH_SECONDS (3, per round and system), BENCH_WARMUP_S
 * (15, an unrecorded loop per system first),
 * BENCH_CONCURRENCY (64 operations in flight), BENCH_HTTPS (1: also the HTTPS variant),
 * BENCH_PIN (0: every process may use both cores, as the issue's own baseline figures were taken;
 * 1: pin the system under test to CPU 0 and the target and wrk to CPU 1 with taskset, the
 * per-core view), BENCH_DOCS (1: rewrite this mode's figures in docs/benchmarks.md), BENCH_PROFILE (1: --cpu-prof the process under test,
 * profiles go to bench/profiles/), BENCH_ACTOR (path of another location actor module for the
 * Locations runs, e.g. a patched copy of dist/workers/location-actor.js), BENCH_ONLY (ids of
 * the systems and scenarios to run: raw,rawFallback,blackbox,pools,api,rawTls,blackboxTls,poolsTls,slow,hang),
 * BENCH_SUT_NODE_ARGS (extra node flags for the process under test, e.g. "--single-threaded-gc" or
 * "--trace-gc", to try a V8 setting; NODE_OPTIONS refuses some of them).
 *
 * Scenario "slow" (BENCH_SLOW=1, the default; 0 skips it): a target that answers 200 after 1 s,
 * BENCH_SLOW_CONNECTIONS (2000) wrk connections, our POST /api/v1/check (a new name per request) against
 * blackbox_exporter's /probe of the same target, BENCH_SLOW_ROUNDS (3) x BENCH_SLOW_SECONDS (12)
 * each after one unrecorded round of BENCH_SLOW_WARMUP_S (5). The service gets a process of its own with
 * MAX_CHECKS_IN_FLIGHT=4000 (ignored by a build that does not know it), and its peak RSS (VmHWM) is reported.
 *
 * Scenario "hang" (BENCH_HANG=1, the default; 0 skips it): BENCH_HANG_CHECKS (5000) on-demand checks
 * of targets that accept and never answer (PROBE_TIMEOUT_MS=BENCH_HANG_TIMEOUT_MS, 10000;
 * MAX_CHECKS_IN_FLIGHT=6000; spread over 12 keys), sent by wrk BENCH_HANG_PIPELINE (2) requests deep per
 * connection, while one wrk connection checks a fast target for BENCH_HANG_SECONDS (12): the fast
 * check's latency, and how many hanging checks were in flight meanwhile (the hanging target's open
 * connections / 3 locations).
 *
 * Every HTTP system (blackbox_exporter's /probe and our POST /api/v1/check) is driven by wrk (the
 * Debian package, installed with apt-get when missing; bench/wrk.mjs) with a Lua script: a new name
 * per request (n<run>t<thread>-<counter>.bench.test), the Authorization header rotated over several
 * keys, every answer's status counted, and a 2xx counted only when its body is what was asked for.
 * A Node load driver saturates before the server does and pulls every ratio toward 1.
 *
 * Processes (all on 127.0.0.1, each started and stopped by this script):
 *   main     this file: starts the others, tells them what to run, collects figures. Mostly idle.
 *   target   child: the HTTP target, an HTTPS target (ECDSA certificate made here), a slow
 *            target (200 after 1 s) and a hanging one (accepts, never answers).          CPU 1
 *   sut      child: raw undici loops and Locations (3 actor threads per pool), driven
 *            in-process.                                                                CPU 0
 *   service  child: the real service alone, as in production (startService: hapi, key auth,
 *            rate limit, CheckSupervisor, its own Locations) on an ephemeral port.   CPU 0
 *   blackbox prometheus-blackbox-exporter (installed with apt-get when missing).         CPU 0
 *   wrk      the load generator for blackbox /probe and our /api/v1/check.               CPU 1
 * The scenarios start a service (and a blackbox_exporter) of their own, so that each one's peak
 * RSS is its own. Pinned (BENCH_PIN=1), whatever is measured gets CPU 0 to itself and the target
 * and the load generator share CPU 1; unpinned, all of them share the machine's cores, as in production.
 */
import { execFileSync, fork, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import { join, dirname } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { writeFigures } from './processes.mjs'
import { ensureWrk } from './wrk.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const SELF = fileURLToPath(import.meta.url)
const BLACKBOX = '/usr/bin/prometheus-blackbox-exporter'
const LOOPBACK = '127.0.0.1'

const num = (name, dflt) => {
  const v = process.env[name]
  return v === undefined || v === '' ? dflt : Number(v)
}
const OPTS = {
  rounds: Math.max(1, Math.min(9, num('BENCH_ROUNDS', 7))),
  seconds: Math.max(1, Math.min(30, num('BENCH_SECONDS', 3))),
  warmup: Math.max(1, Math.min(60, num('BENCH_WARMUP_S', 15))),
  concurrency: Math.max(1, Math.min(512, num('BENCH_CONCURRENCY', 64))),
  https: num('BENCH_HTTPS', 1) === 1,
  pin: num('BENCH_PIN', 0) === 1,
  docs: num('BENCH_DOCS', 1) === 1,
  profile: num('BENCH_PROFILE', 0) === 1,
  /** Another location actor module for the Locations runs (to try a change without rebuilding). */
  actor: process.env.BENCH_ACTOR || undefined,
  slow: num('BENCH_SLOW', 1) === 1,
  slowConnections: Math.max(1, Math.min(5000, num('BENCH_SLOW_CONNECTIONS', 2000))),
  slowRounds: Math.max(1, Math.min(9, num('BENCH_SLOW_ROUNDS', 3))),
  slowSeconds: Math.max(3, Math.min(60, num('BENCH_SLOW_SECONDS', 12))),
  slowWarmup: Math.max(2, Math.min(60, num('BENCH_SLOW_WARMUP_S', 5))),
  hang: num('BENCH_HANG', 1) === 1,
  hangChecks: Math.max(1, Math.min(6000, num('BENCH_HANG_CHECKS', 5000))),
  hangPipeline: Math.max(1, Math.min(8, num('BENCH_HANG_PIPELINE', 2))),
  hangSeconds: Math.max(3, Math.min(60, num('BENCH_HANG_SECONDS', 12))),
  hangTimeoutMs: Math.max(1000, Math.min(60_000, num('BENCH_HANG_TIMEOUT_MS', 10_000)))
}
/** Slow scenario: the target's delay, and the service's admission limit (MAX_CHECKS_IN_FLIGHT). */
const SLOW_DELAY_MS = 1000
const SLOW_MAX_IN_FLIGHT = 4000
/** Hang scenario: the admission limit, and how many keys share the load (one may hold half of it). */
const HANG_MAX_IN_FLIGHT = 6000
const HANG_KEYS = 12
/** The fast target's name in the hang scenario (CONNECT_TO sends it to the plain target). */
const FAST_NAME = 'fast.bench.test'
/** Keys our POST /api/v1/check is spread over in the 64-connection runs and the slow scenario. */
const KEYS = 4
/** Hard cap on operations per loop, so every loop is bounded in count as well as in time. */
const MAX_OPS_PER_LOOP = 2_000_000
/** Per-operation deadline: one slow probe can hold a lane for at most this long. */
const OP_TIMEOUT_MS = 5000
/** The whole run's limit: twice the measuring time of eight systems, plus start-up and waits for a quiet machine. */
const WATCHDOG_MS =
  120_000 +
  2 * 8 * (OPTS.warmup + OPTS.rounds * OPTS.seconds) * 1000 +
  (OPTS.slow ? 2 * 2 * (OPTS.slowWarmup + OPTS.slowRounds * OPTS.slowSeconds) * 1000 + 60_000 : 0) +
  (OPTS.hang ? 2 * (30 + OPTS.hangSeconds) * 1000 + 3 * OPTS.hangTimeoutMs + 60_000 : 0)

// ---------------------------------------------------------------------------------------------
// Shared helpers

/**
 * Runs `op` in `concurrency` lanes until `seconds` have passed; each lane starts a new operation
 * as soon as its last one ended (closed loop). `op` resolves to the number of units that
 * succeeded (e.g. 3 location probes) and the number that failed.
 */
async function closedLoop(concurrency, seconds, op) {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const deadline = t0 + seconds * 1000
  let started = 0
  let ops = 0
  let okUnits = 0
  let failedUnits = 0
  const errors = new Map()
  const lane = async () => {
    while (performance.now() < deadline && started < MAX_OPS_PER_LOOP) {
      const i = started++
      try {
        const r = await op(i)
        ops++
        okUnits += r.ok
        failedUnits += r.failed
        if (r.error) errors.set(r.error, (errors.get(r.error) ?? 0) + 1)
      } catch (err) {
        failedUnits++
        const key = String(err?.code ?? err?.message ?? err).slice(0, 120)
        errors.set(key, (errors.get(key) ?? 0) + 1)
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
  const elapsedMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { ops, okUnits, failedUnits, elapsedMs, cpuUs: cpu.user + cpu.system, errors: [...errors].slice(0, 5) }
}

/** Answers the parent's {id, cmd} messages with {id, ...result} (or {id, error}). */
function serve(handlers) {
  process.on('message', async (msg) => {
    if (msg?.cmd === 'exit') {
      process.exit(0)
    }
    const handler = handlers[msg?.cmd]
    try {
      if (!handler) throw new Error(`unknown command ${msg?.cmd}`)
      process.send({ id: msg.id, ok: true, value: await handler(msg) })
    } catch (err) {
      process.send({ id: msg.id, ok: false, error: String(err?.stack ?? err) })
    }
  })
  // A child never outlives its parent: the IPC channel closing means the bench is over.
  process.on('disconnect', () => process.exit(0))
}

const cpuNow = () => {
  const c = process.cpuUsage()
  return c.user + c.system
}

// ---------------------------------------------------------------------------------------------
// Role: target (HTTP and HTTPS, 200 with a small body; a slow one and a hanging one)

async function roleTarget() {
  const http = await import('node:http')
  const https = await import('node:https')
  const stats = { requests: 0, connections: 0, slowRequests: 0, hangConnections: 0, hangOpen: 0 }
  const handler = (req, res) => {
    stats.requests++
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' }).end('ok\n')
  }
  const cert = JSON.parse(process.env.BENCH_CERT)
  const plain = http.createServer(handler)
  const secure = https.createServer({ key: cert.key, cert: cert.cert }, handler)
  for (const s of [plain, secure])
    s.on('connection', () => {
      stats.connections++
    })
  // Slow: a site that takes a second to answer (each request its own timer; a client that goes
  // away before it cancels it).
  const slow = http.createServer((req, res) => {
    stats.slowRequests++
    const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' }).end('ok\n'), SLOW_DELAY_MS)
    res.once('close', () => clearTimeout(timer))
  })
  slow.keepAliveTimeout = 5000
  // Hanging: accepts the connection, reads whatever comes and never answers; counts what is open.
  const hang = net.createServer((socket) => {
    stats.hangConnections++
    stats.hangOpen++
    socket.on('data', () => {})
    socket.on('error', () => {})
    socket.once('close', () => {
      stats.hangOpen--
    })
  })
  const listen = (s) => new Promise((resolve) => s.listen({ port: 0, host: LOOPBACK, backlog: 65535 }, () => resolve(s.address().port)))
  const httpPort = await listen(plain)
  const httpsPort = await listen(secure)
  const slowPort = await listen(slow)
  const hangPort = await listen(hang)
  serve({
    ports: async () => ({ httpPort, httpsPort, slowPort, hangPort }),
    stats: async () => ({ cpuUs: cpuNow(), ...stats })
  })
}

// ---------------------------------------------------------------------------------------------
// Role: service (the real service, alone in its process as in production)

async function roleService() {
  const { loadConfig } = await import('../dist/config/index.js')
  const { startService } = await import('../dist/lib/main.js')
  const { createLogger } = await import('../dist/lib/logger.js')
  const { generateKey, hashKey } = await import('../dist/lib/keys.js')
  const { createKey } = await import('../dist/lib/store/keys.js')
  let service
  serve({
    // `env` adds to or overrides the settings below (a scenario's CONNECT_TO, MAX_CHECKS_IN_FLIGHT,
    // PROBE_TIMEOUT_MS...); a build that does not know a variable ignores it. `keys` keys are made.
    init: async ({ httpPort, closedPort, dbFile, env = {}, keys = 1 }) => {
      const config = loadConfig({
        PORT: '0',
        HOST: LOOPBACK,
        DATABASE_URL: `sqlite:${dbFile}`,
        CONNECT_TO: `:80:${LOOPBACK}:${httpPort},:443:${LOOPBACK}:${closedPort}`,
        ALLOW_PRIVATE_TARGETS: '1',
        CACHE_TTL_S: '60',
        PROBE_TIMEOUT_MS: String(OP_TIMEOUT_MS),
        // Per-request access lines would be written to a pipe nobody reads; see docs/benchmarks.md.
        LOG_LEVEL: 'warn',
        ...env
      })
      service = await startService({ config, logger: createLogger({ level: 'warn' }) })
      const made = []
      for (let i = 0; i < keys; i++) {
        const key = generateKey()
        await createKey({ db: service.db, name: `bench${i}`, keyHash: hashKey(key), rateLimit: 1_000_000_000, now: new Date() })
        made.push(key)
      }
      return { servicePort: service.server.info.port, key: made[0], keys: made, pid: process.pid }
    },
    cpu: async () => ({ cpuUs: cpuNow() }),
    close: async () => {
      await service?.stop()
      return true
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Role: sut (raw undici and Locations, driven in-process)

async function roleSut() {
  const { Agent, request } = await import('undici')
  const { Locations } = await import('../dist/lib/probing/locations/index.js')
  const { loadConfig, parseConnectTo } = await import('../dist/config/index.js')
  const { createLogger } = await import('../dist/lib/logger.js')

  const pools = {}
  let names = 0
  const silent = createLogger({ level: 'silent' })

  // Raw baseline: undici, a fresh connection per request (`reset: true` sends connection: close),
  // TLS session resumption off so every https request pays a full handshake, as our probes do.
  const agent = new Agent({ connect: { maxCachedSessions: 0 } })
  const readAll = async (body) => {
    for await (const _ of body) {
      /* drain */
    }
  }

  const rawGet = async (url) => {
    const res = await request(url, { dispatcher: agent, reset: true, headersTimeout: OP_TIMEOUT_MS, bodyTimeout: OP_TIMEOUT_MS })
    await readAll(res.body)
    return res.statusCode === 200 ? { ok: 1, failed: 0 } : { ok: 0, failed: 1, error: `http ${res.statusCode}` }
  }

  serve({
    init: async ({ httpPort, httpsPort, closedPort }) => {
      const actorFile = OPTS.actor === undefined ? undefined : new URL(OPTS.actor, `file://${process.cwd()}/`).href
      const common = {
        policy: { allowPrivate: true },
        timeoutMs: OP_TIMEOUT_MS,
        userAgent: 'SiteStatusAPI/bench',
        logger: silent,
        actorFile
      }
      const locations = loadConfig({}).locations // the default: three direct locations
      pools.http = new Locations({
        ...common,
        locations,
        connectTo: parseConnectTo(`:80:${LOOPBACK}:${httpPort},:443:${LOOPBACK}:${closedPort}`)
      })
      pools.https = new Locations({
        ...common,
        locations,
        connectTo: parseConnectTo(`:80:${LOOPBACK}:${httpPort},:443:${LOOPBACK}:${httpsPort}`)
      })
      await Promise.all([pools.http.ready(), pools.https.ready()])
      return { threads: os.availableParallelism?.() }
    },
    sample: async ({ variant }) => {
      const name = `n${names++}.bench.test`
      return { domain: name, locations: await pools[variant].probeAll(name) }
    },
    raw: async ({ url, seconds, concurrency }) => closedLoop(concurrency, seconds, () => rawGet(url)),
    // What a probe does on the closed-443 target, in plain undici: a refused dial, then the GET.
    // The refused URL is http://: undici's own https connector would build a TLS context before
    // dialling, which our connector does not (it dials first, and only then starts TLS).
    rawFallback: async ({ refusedUrl, url, seconds, concurrency }) =>
      closedLoop(concurrency, seconds, async () => {
        try {
          await request(refusedUrl, { dispatcher: agent, reset: true })
          return { ok: 0, failed: 1, error: 'closed port answered' }
        } catch (err) {
          if (err?.code !== 'ECONNREFUSED') return { ok: 0, failed: 1, error: String(err?.code) }
        }
        return rawGet(url)
      }),
    pools: async ({ variant, seconds, concurrency, expectScheme }) =>
      closedLoop(concurrency, seconds, async () => {
        const domain = `n${names++}.bench.test`
        const results = await pools[variant].probeAll(domain)
        let ok = 0
        let error
        for (const r of results) {
          if (r.status === 'up' && r.http_code === 200 && r.final_url === `${expectScheme}://${domain}/`) ok++
          else error ??= `${r.status} ${r.http_code} ${r.error} ${r.final_url}`
        }
        return { ok, failed: results.length - ok, error }
      }),
    cpu: async () => ({ cpuUs: cpuNow() }),
    close: async () => {
      await Promise.all(Object.values(pools).map((p) => p.close()))
      await agent.close()
      return true
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Role: main

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

function makeCert(dir) {
  // ECDSA P-256: an RSA-2048 signature per handshake would make the one-core target the bottleneck.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=bench.test',
      '-days',
      '1',
      '-addext',
      'subjectAltName=DNS:*.bench.test,DNS:localhost,IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem')
    ],
    { stdio: 'ignore' }
  )
  return {
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    certFile: join(dir, 'cert.pem')
  }
}

/** A loopback port nobody listens on: bound, then released (connections to it are refused at once). */
async function freePort() {
  const srv = net.createServer()
  await new Promise((resolve) => srv.listen(0, LOOPBACK, resolve))
  const { port } = srv.address()
  await new Promise((resolve) => srv.close(resolve))
  return port
}

async function refused(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, LOOPBACK)
    s.once('connect', () => {
      s.destroy()
      resolve(false)
    })
    s.once('error', (err) => resolve(err.code === 'ECONNREFUSED'))
  })
}

const children = []
let nextId = 1

function startChild(role, cpu, env = {}, nodeArgs = []) {
  const pinned = cpu !== null
  const child = fork(SELF, [role], {
    execPath: pinned ? 'taskset' : process.execPath,
    execArgv: pinned ? ['-c', String(cpu), process.execPath, ...nodeArgs] : nodeArgs,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  const waiting = new Map()
  child.on('message', (m) => {
    const w = waiting.get(m.id)
    if (!w) return
    waiting.delete(m.id)
    clearTimeout(w.timer)
    if (m.ok) w.resolve(m.value)
    else w.reject(new Error(`${role}: ${m.error}`))
  })
  child.on('exit', (code, signal) => {
    for (const w of waiting.values()) {
      clearTimeout(w.timer)
      w.reject(new Error(`${role} exited (${code ?? signal})`))
    }
    waiting.clear()
  })
  const call = (cmd, args = {}, timeoutMs = 60_000) =>
    new Promise((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(() => {
        waiting.delete(id)
        reject(new Error(`${role}: ${cmd} timed out`))
      }, timeoutMs)
      waiting.set(id, { resolve, reject, timer })
      child.send({ id, cmd, ...args })
    })
  const handle = { role, child, call, pid: child.pid }
  children.push(handle)
  return handle
}

function procCpuUs(pid) {
  // utime + stime of every thread, in clock ticks (fields 14 and 15 of /proc/<pid>/stat).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1e6) / CLK_TCK
}
let CLK_TCK = 100
/** The open-files limit this machine lets the bench have (ulimit -Hn): no process here may raise it. */
const NOFILE_HARD = (() => {
  try {
    return Number(execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim())
  } catch {
    return NaN
  }
})()

/** Busy time of all CPUs together, in µs, from /proc/stat (user nice system irq softirq steal). */
function machineBusyUs() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  const [user, nice, system, , , irq, softirq, steal] = f
  return ((user + nice + system + irq + softirq + (steal ?? 0)) * 1e6) / CLK_TCK
}

/** CPU used by this bench's own processes (threads included), in µs. */
function benchCpuUs() {
  let total = 0
  for (const pid of [process.pid, ...children.map((c) => c.pid)]) {
    try {
      total += procCpuUs(pid)
    } catch {
      /* exited */
    }
  }
  return total
}

/** Processes that are not ours keep the machine busy: how many cores' worth over `ms`. */
async function foreignLoad(ms) {
  const b0 = machineBusyUs()
  const o0 = benchCpuUs()
  const t0 = performance.now()
  await new Promise((r) => setTimeout(r, ms))
  return Math.max(0, machineBusyUs() - b0 - (benchCpuUs() - o0)) / 1000 / (performance.now() - t0)
}

/** Quiet-wait budget for the whole run: the bench is bounded in time even on a busy machine. */
let quietBudgetMs = 15_000
async function waitForQuiet() {
  for (let i = 0; i < 6 && quietBudgetMs > 0; i++) {
    const t0 = performance.now()
    const load = await foreignLoad(400)
    quietBudgetMs -= performance.now() - t0
    if (load < 0.1) return
  }
}

async function startBlackbox(dir, cpu, certFile) {
  if (!existsSync(BLACKBOX)) return null
  const port = await freePort()
  const config = join(dir, 'blackbox.yml')
  writeFileSync(
    config,
    [
      'modules:',
      '  http_2xx:',
      '    prober: http',
      '    timeout: 5s',
      '  http_2xx_tls:',
      '    prober: http',
      '    timeout: 5s',
      '    http:',
      '      tls_config:',
      `        ca_file: ${certFile}`,
      ''
    ].join('\n')
  )
  const args = [`--config.file=${config}`, `--web.listen-address=${LOOPBACK}:${port}`]
  const proc =
    cpu !== null
      ? spawn('taskset', ['-c', String(cpu), BLACKBOX, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
      : spawn(BLACKBOX, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  const tail = []
  proc.stderr.on('data', (d) => {
    tail.push(d.toString())
    if (tail.length > 20) tail.shift()
  })
  const handle = { role: 'blackbox', child: proc, pid: proc.pid, port, tail }
  children.push(handle)
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100))
    try {
      const res = await fetch(`http://${LOOPBACK}:${port}/-/healthy`)
      await res.arrayBuffer()
      if (res.ok) {
        const version = execFileSync(BLACKBOX, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).split('\n')[0]
        return { ...handle, version }
      }
    } catch {
      /* not up yet */
    }
  }
  throw new Error(`blackbox_exporter did not start: ${tail.join('')}`)
}

// ---------------------------------------------------------------------------------------------
// wrk: the load generator for every HTTP system

/**
 * The Lua script given to wrk. Settings come from the environment (WRK_*): each request gets a new
 * name in WRK_BODY's `{name}` (n<run>t<thread>-<counter>.bench.test: new per run, thread and
 * request, so nothing is ever served from a cache), the Authorization header rotates over WRK_KEYS,
 * WRK_PIPELINE requests go out at once per connection. response() counts answers by status; a 2xx
 * counts as good only when its body holds WRK_REQUIRE, and each good one adds the number of
 * times WRK_OK occurs in it (location probes that answered 200). done() adds up every thread's
 * counters and prints them with wrk's own figures as one JSON line.
 */
const WRK_LUA = String.raw`
local prefix = os.getenv("WRK_PREFIX") or "r"
local tpl = os.getenv("WRK_BODY")
local method = os.getenv("WRK_METHOD") or "GET"
local ctype = os.getenv("WRK_CTYPE")
local require_text = os.getenv("WRK_REQUIRE")
local ok_text = os.getenv("WRK_OK")
local pipeline = tonumber(os.getenv("WRK_PIPELINE") or "1")
local keys = {}
for k in string.gmatch(os.getenv("WRK_KEYS") or "", "[^,]+") do keys[#keys + 1] = k end

local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

n = 0
good = 0
units = 0
bad = 0
retry = 0
codes = {}

local function one()
  n = n + 1
  local headers = {}
  if ctype then headers["Content-Type"] = ctype end
  if #keys > 0 then headers["Authorization"] = "Bearer " .. keys[(n % #keys) + 1] end
  local body = nil
  if tpl then body = (string.gsub(tpl, "{name}", "n" .. prefix .. "t" .. tostring(tid or 0) .. "-" .. n)) end
  return wrk.format(method, nil, headers, body)
end

function request()
  if pipeline <= 1 then return one() end
  local parts = {}
  for i = 1, pipeline do parts[i] = one() end
  return table.concat(parts)
end

function response(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
  if status >= 200 and status < 300 then
    if require_text and not (body and string.find(body, require_text, 1, true)) then
      bad = bad + 1
    else
      good = good + 1
      if ok_text and body then
        local i = 1
        while true do
          local a, b = string.find(body, ok_text, i, true)
          if not a then break end
          units = units + 1
          i = b + 1
        end
      end
    end
  elseif status == 503 and (headers["retry-after"] or headers["Retry-After"]) then
    retry = retry + 1
  end
end

function done(summary, latency, requests)
  local g, u, b, r, all = 0, 0, 0, 0, {}
  for _, t in ipairs(threads) do
    g = g + (t:get("good") or 0)
    u = u + (t:get("units") or 0)
    b = b + (t:get("bad") or 0)
    r = r + (t:get("retry") or 0)
    for code, count in pairs(t:get("codes") or {}) do all[code] = (all[code] or 0) + count end
  end
  local cs = {}
  for code, count in pairs(all) do cs[#cs + 1] = string.format('"%d":%d', code, count) end
  local e = summary.errors
  local p = function(q) return math.floor(latency:percentile(q)) end
  io.write(string.format('WRK_JSON {"requests":%d,"duration_us":%d,"good":%d,"units":%d,"bad2xx":%d,"retryAfter503":%d,"codes":{%s},' ..
    '"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"p999_us":%d,"max_us":%d,"mean_us":%d}\n',
    summary.requests, summary.duration, g, u, b, r, table.concat(cs, ","),
    e.connect, e.read, e.write, e.timeout, p(50), p(90), p(99), p(99.9), math.floor(latency.max), math.floor(latency.mean)))
end
`
let wrkRuns = 0
const wrkProcs = new Set()

/**
 * Runs wrk once and resolves to its figures: { requests, seconds, good, units, bad2xx, codes,
 * non2xx, socketErrors, timeouts, p50Ms, p90Ms, p99Ms, p999Ms, maxMs, cpuUs }. wrk runs under sh,
 * which reports wrk's CPU time (its cutime/cstime once wrk is reaped) on stderr. `stop` (a
 * promise) ends it early with SIGINT: wrk then prints its figures as at the end of its time.
 */
async function wrk({
  url,
  connections,
  seconds,
  timeoutS,
  cpu,
  threads = 1,
  method = 'GET',
  body,
  keys = [],
  require,
  ok,
  pipeline = 1,
  stop
}) {
  ensureWrk()
  if (!new URL(url).hostname.startsWith('127.')) throw new Error(`wrk: loopback targets only, not ${url}`)
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-check-wrk-'))
  const script = join(dir, 'check.lua')
  writeFileSync(script, WRK_LUA)
  const run = ++wrkRuns
  const args = ['-c', String(connections), '-t', String(threads), '-d', `${seconds}s`, '--timeout', `${timeoutS}s`, '-s', script, url]
  const cmd = cpu !== null ? ['taskset', '-c', String(cpu), '/usr/bin/wrk', ...args] : ['/usr/bin/wrk', ...args]
  // sh ignores SIGINT (wrk sets its own handler), so a stop reaches wrk alone and sh still reports.
  const sh = `trap '' INT; "$@"; s=$?; echo "WRK_CPU $(cut -d' ' -f16,17 /proc/$$/stat)" >&2; exit $s`
  const env = {
    ...process.env,
    WRK_PREFIX: `${process.pid % 10000}r${run}`,
    WRK_METHOD: method,
    WRK_PIPELINE: String(pipeline),
    WRK_KEYS: keys.join(','),
    ...(body !== undefined ? { WRK_BODY: body, WRK_CTYPE: 'application/json' } : {}),
    ...(require !== undefined ? { WRK_REQUIRE: require } : {}),
    ...(ok !== undefined ? { WRK_OK: ok } : {})
  }
  try {
    const { stdout, stderr } = await new Promise((resolve, reject) => {
      const child = spawn('sh', ['-c', sh, 'sh', ...cmd], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
      wrkProcs.add(child)
      let out = ''
      let err = ''
      child.stdout.on('data', (d) => {
        out += d
      })
      child.stderr.on('data', (d) => {
        err += d
      })
      const signal = (sig) => {
        try {
          process.kill(-child.pid, sig)
        } catch {
          /* gone */
        }
      }
      stop?.then(() => signal('SIGINT'))
      // wrk ends by itself after `seconds`; this only guards against a wedged process.
      const guard = setTimeout(() => signal('SIGKILL'), (seconds + timeoutS + 30) * 1000)
      child.once('error', (e) => {
        clearTimeout(guard)
        wrkProcs.delete(child)
        reject(e)
      })
      child.once('close', (code) => {
        clearTimeout(guard)
        wrkProcs.delete(child)
        if (code === 0) resolve({ stdout: out, stderr: err })
        else reject(new Error(`wrk exited with ${code}: ${err.trim() || out.trim()}`))
      })
    })
    const line = /^WRK_JSON (.*)$/m.exec(stdout)
    if (!line) throw new Error(`wrk printed no figures:\n${stdout}\n${stderr}`)
    const r = JSON.parse(line[1])
    const cpuTicks = /^WRK_CPU (\d+) (\d+)$/m.exec(stderr)
    const codes = r.codes
    const non2xx = Object.entries(codes)
      .filter(([c]) => !(c >= 200 && c < 300))
      .reduce((a, [, n]) => a + n, 0)
    return {
      requests: r.requests,
      seconds: r.duration_us / 1e6,
      good: r.good,
      units: r.units,
      bad2xx: r.bad2xx,
      retryAfter503: r.retryAfter503,
      codes,
      non2xx,
      socketErrors: r.connect + r.read + r.write,
      timeouts: r.timeout,
      p50Ms: r.p50_us / 1000,
      p90Ms: r.p90_us / 1000,
      p99Ms: r.p99_us / 1000,
      p999Ms: r.p999_us / 1000,
      maxMs: r.max_us / 1000,
      meanMs: r.mean_us / 1000,
      cpuUs: cpuTicks ? ((Number(cpuTicks[1]) + Number(cpuTicks[2])) * 1e6) / CLK_TCK : 0,
      errorCounts: wrkErrors(r, codes),
      get errorText() {
        return Object.entries(this.errorCounts).map(([k, n]) => `${k} x${n}`)
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** What went wrong in a wrk run, as { kind: count }. */
function wrkErrors(r, codes) {
  const out = {}
  for (const [c, n] of Object.entries(codes)) if (!(c >= 200 && c < 300)) out[`status ${c}`] = n
  if (r.bad2xx) out['2xx without the expected body'] = r.bad2xx
  for (const k of ['connect', 'read', 'write', 'timeout']) if (r[k]) out[`${k} errors`] = r[k]
  return out
}

/** The kernel's count of connections dropped because a listener's accept queue was full (all listeners). */
function listenOverflows() {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('TcpExt:'))
    const names = lines[0].split(/\s+/)
    const values = lines[1].split(/\s+/)
    return Number(values[names.indexOf('ListenOverflows')])
  } catch {
    return NaN
  }
}

/** A closedLoop-shaped result from a wrk run (what one operation is worth: `probesPerOp`). */
function wrkAsLoop(w, probesPerOp) {
  return {
    ops: w.good,
    okUnits: w.units,
    failedUnits: (w.requests + w.socketErrors + w.timeouts) * probesPerOp - w.units,
    elapsedMs: w.seconds * 1000,
    wrkCpuUs: w.cpuUs,
    p99Ms: w.p99Ms,
    errors: w.errorText.map((e) => [e, 1])
  }
}

/** Peak resident set size of a process (VmHWM), in bytes. */
function peakRss(pid) {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) * 1024 : NaN
}

/** Installs a Debian package when its binary is missing (apt-get install; apt-get update first if that fails). */
function ensurePackage(bin, pkg) {
  if (existsSync(bin)) return true
  console.error(`bench/check: ${bin} is missing; installing the Debian package ${pkg}`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const install = () =>
    execFileSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', 'install', '-y', pkg], { stdio: ['ignore', 'ignore', 'inherit'], env })
  try {
    install()
  } catch {
    try {
      execFileSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', 'update'], { stdio: ['ignore', 'ignore', 'inherit'], env })
      install()
    } catch (err) {
      console.error(`bench/check: could not install ${pkg}: ${err.message}`)
    }
  }
  return existsSync(bin)
}

function fmt(n, digits = 0) {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a'
}

async function roleMain() {
  const watchdog = setTimeout(() => {
    console.error('bench/check: watchdog expired')
    shutdown(1)
  }, WATCHDOG_MS)
  watchdog.unref()
  const started = performance.now()
  const cores = os.availableParallelism?.() ?? os.cpus().length
  const canPin =
    OPTS.pin &&
    cores >= 2 &&
    (() => {
      try {
        execFileSync('taskset', ['-V'], { stdio: 'ignore' })
        return true
      } catch {
        return false
      }
    })()
  const SUT_CPU = canPin ? 0 : null
  const AUX_CPU = canPin ? 1 : null
  if (canPin) execFileSync('taskset', ['-a', '-p', '-c', String(AUX_CPU), String(process.pid)], { stdio: 'ignore' })
  try {
    CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    /* keep 100 */
  }

  const dir = mkdtempSync(join(os.tmpdir(), 'bench-check-'))
  const cert = makeCert(dir)
  const closedPort = await freePort()
  if (!(await refused(closedPort))) throw new Error(`port ${closedPort} is not closed`)

  const profDir = join(HERE, 'profiles')
  if (OPTS.profile) mkdirSync(profDir, { recursive: true })
  const target = startChild('target', AUX_CPU, { BENCH_CERT: JSON.stringify({ key: cert.key, cert: cert.cert }) })
  const sutArgs = [
    ...(process.env.BENCH_SUT_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ...(OPTS.profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])
  ]
  const sut = startChild('sut', SUT_CPU, { NODE_EXTRA_CA_CERTS: cert.certFile }, sutArgs)
  const svc = startChild('service', SUT_CPU, {}, sutArgs)
  const ports = await target.call('ports')
  const { httpPort, httpsPort } = ports
  await sut.call('init', { httpPort, httpsPort, closedPort })
  const { servicePort, keys } = await svc.call('init', { httpPort, closedPort, dbFile: join(dir, 'bench.sqlite'), keys: KEYS })
  ensureWrk()
  ensurePackage(BLACKBOX, 'prometheus-blackbox-exporter')
  let blackbox = null
  try {
    blackbox = await startBlackbox(dir, SUT_CPU, cert.certFile)
  } catch (err) {
    console.error(String(err))
  }

  const C = OPTS.concurrency
  const S = OPTS.seconds
  const url = `http://${LOOPBACK}:${httpPort}/`
  const httpsUrl = `https://${LOOPBACK}:${httpsPort}/`
  const bbOrigin = blackbox ? `http://${LOOPBACK}:${blackbox.port}` : null
  const probePath = (module, t) => `/probe?module=${module}&target=${encodeURIComponent(t)}`
  // wrk threads: one keeps up with 64 connections; the scenarios' thousands get two unpinned.
  const wrkThreads = (connections) => (canPin || connections < 500 ? 1 : 2)
  // blackbox_exporter's answer counts when the target answered 200; ours when it is a fresh check
  // (`"cached":false`), each location that answered 200 being one location probe.
  const wrkBlackbox = (origin, path, seconds, connections, timeoutS = OP_TIMEOUT_MS / 1000 + 2, stop) =>
    wrk({
      url: `${origin}${path}`,
      connections,
      seconds,
      timeoutS,
      cpu: AUX_CPU,
      threads: wrkThreads(connections),
      require: 'probe_http_status_code 200',
      ok: 'probe_success 1',
      stop
    })
  const wrkCheck = (port, keyList, seconds, connections, opts = {}) =>
    wrk({
      url: `http://${LOOPBACK}:${port}/api/v1/check`,
      connections,
      seconds,
      timeoutS: OP_TIMEOUT_MS / 1000 + 3,
      cpu: AUX_CPU,
      threads: wrkThreads(connections),
      method: 'POST',
      body: '{"domain":"{name}.bench.test"}',
      keys: keyList,
      require: '"cached":false',
      ok: '"http_code":200',
      ...opts
    })

  // Each system: how to run one timed loop, and what one operation is worth in location probes.
  const systems = [
    {
      id: 'raw',
      group: 'http',
      label: 'raw undici GET, new connection',
      unit: 'requests',
      probesPerOp: 1,
      run: (s) => sut.call('raw', { url, seconds: s, concurrency: C })
    },
    {
      id: 'rawFallback',
      group: 'http',
      label: 'raw undici, refused dial + GET',
      unit: 'requests',
      probesPerOp: 1,
      run: (s) => sut.call('rawFallback', { refusedUrl: `http://${LOOPBACK}:${closedPort}/`, url, seconds: s, concurrency: C })
    },
    ...(blackbox
      ? [
          {
            id: 'blackbox',
            group: 'http',
            label: 'blackbox_exporter /probe (http_2xx)',
            unit: 'probes',
            probesPerOp: 1,
            viaWrk: true,
            run: async (s) => wrkAsLoop(await wrkBlackbox(bbOrigin, probePath('http_2xx', url), s, C), 1)
          }
        ]
      : []),
    {
      id: 'pools',
      group: 'http',
      label: 'ours: Locations.probeAll (3 locations)',
      unit: 'probeAll',
      probesPerOp: 3,
      run: (s) => sut.call('pools', { variant: 'http', expectScheme: 'http', seconds: s, concurrency: C })
    },
    {
      id: 'api',
      group: 'http',
      label: 'ours: POST /api/v1/check, cache miss',
      unit: 'checks',
      probesPerOp: 3,
      viaWrk: true,
      run: async (s) => wrkAsLoop(await wrkCheck(servicePort, keys, s, C), 3)
    },
    ...(OPTS.https
      ? [
          {
            id: 'rawTls',
            group: 'https',
            label: 'raw undici GET, new TLS connection',
            unit: 'requests',
            probesPerOp: 1,
            run: (s) => sut.call('raw', { url: httpsUrl, seconds: s, concurrency: C })
          },
          ...(blackbox
            ? [
                {
                  id: 'blackboxTls',
                  group: 'https',
                  label: 'blackbox_exporter /probe (https target)',
                  unit: 'probes',
                  probesPerOp: 1,
                  viaWrk: true,
                  run: async (s) => wrkAsLoop(await wrkBlackbox(bbOrigin, probePath('http_2xx_tls', httpsUrl), s, C), 1)
                }
              ]
            : []),
          {
            id: 'poolsTls',
            group: 'https',
            label: 'ours: Locations.probeAll, 443 = TLS target',
            unit: 'probeAll',
            probesPerOp: 3,
            run: (s) => sut.call('pools', { variant: 'https', expectScheme: 'https', seconds: s, concurrency: C })
          }
        ]
      : [])
  ]

  // BENCH_ONLY=id,id runs a subset (e.g. with BENCH_PROFILE=1 to profile one system alone).
  const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean)
  if (only.length) systems.splice(0, systems.length, ...systems.filter((sys) => only.includes(sys.id)))
  const runSlow = OPTS.slow && (only.length === 0 || only.includes('slow'))
  const runHang = OPTS.hang && (only.length === 0 || only.includes('hang'))

  // Sanity: what one probe of each variant looks like.
  const sampleHttp = await sut.call('sample', { variant: 'http' })
  const sampleHttps = OPTS.https ? await sut.call('sample', { variant: 'https' }) : null
  const show = (s) => s.locations.map((l) => `${l.status}/${l.http_code} ${l.final_url} ${JSON.stringify(l.timings)}`)[0]
  console.log(
    `bench/check: ${cores} cores, ${canPin ? 'pinned: target+wrk on CPU 1, system under test on CPU 0' : 'not pinned'}; ` +
      `${OPTS.rounds} rounds x ${S} s per system, ${C} operations in flight`
  )
  console.log(
    `target http ${httpPort}, https ${httpsPort}; closed port for https dials ${closedPort}; service ${servicePort}; ` +
      `blackbox ${blackbox ? `${blackbox.port} (${blackbox.version})` : 'not installed: skipped'}`
  )
  console.log(`sample probe (443 closed):   ${show(sampleHttp)}`)
  if (sampleHttps) console.log(`sample probe (443 = TLS):    ${show(sampleHttps)}`)

  const snapshot = async () => ({
    t: performance.now(),
    // Our two processes (the in-process systems, and the service): the idle one adds next to nothing.
    sut: (await sut.call('cpu')).cpuUs + (await svc.call('cpu')).cpuUs,
    target: await target.call('stats'),
    blackbox: blackbox ? procCpuUs(blackbox.pid) : 0,
    busy: machineBusyUs(),
    ours: benchCpuUs()
  })

  const results = new Map(systems.map((s) => [s.id, []]))
  const measure = async (sys, seconds, record) => {
    if (record) await waitForQuiet()
    const before = await snapshot()
    const r = await sys.run(seconds)
    const after = await snapshot()
    const wall = (after.t - before.t) / 1000
    const sutCpu = after.sut - before.sut + (sys.id.startsWith('blackbox') ? after.blackbox - before.blackbox : 0)
    const row = {
      opsPerS: r.ops / (r.elapsedMs / 1000),
      probesPerS: r.okUnits / (r.elapsedMs / 1000),
      failed: r.failedUnits,
      errors: r.errors,
      // CPU of the system under test per successful location probe, and how busy the target was.
      sutCpuUsPerProbe: r.okUnits > 0 ? sutCpu / r.okUnits : NaN,
      sutCores: sutCpu / 1e6 / wall,
      targetCores: (after.target.cpuUs - before.target.cpuUs) / 1e6 / wall,
      wrkCores: (r.wrkCpuUs ?? 0) / 1e6 / wall,
      targetRequests: after.target.requests - before.target.requests,
      // Other people's processes on this machine during the round (cores' worth): noise, reported.
      // (wrk has exited by now: its CPU comes from the shell that ran it.)
      foreignCores: Math.max(0, after.busy - before.busy - (after.ours - before.ours) - (r.wrkCpuUs ?? 0)) / 1e6 / wall
    }
    if (record) results.get(sys.id).push(row)
    return row
  }

  // Warm-up, not recorded: thread start, first connections, and the JIT. Node code reaches its
  // steady speed only after seconds of load; three actor threads each compile their own, and
  // pinned to one core each gets a quarter of it, so theirs takes longest: with a short warm-up
  // our rates were still doubling between the first and the last recorded rounds.
  for (const sys of systems) await measure(sys, OPTS.warmup, false)
  for (let round = 0; round < OPTS.rounds; round++) {
    // Rotate the order each round so no system always runs first or last.
    const order = systems.map((_, i) => systems[(i + round) % systems.length])
    for (const sys of order) {
      const row = await measure(sys, S, true)
      console.log(
        `  round ${round + 1} ${sys.label.padEnd(48)} ${fmt(row.probesPerS).padStart(7)} probes/s` +
          `  failed ${row.failed}  cpu0 ${fmt(row.sutCores * 100)}%  target ${fmt(row.targetCores * 100)}%  other ${fmt(row.foreignCores * 100)}%` +
          (row.errors.length ? `  errors ${JSON.stringify(row.errors)}` : '')
      )
    }
  }

  const summary = systems.map((sys) => {
    const rows = results.get(sys.id)
    return {
      ...sys,
      rounds: rows.map((r) => r.probesPerS),
      opsPerS: median(rows.map((r) => r.opsPerS)),
      probesPerS: median(rows.map((r) => r.probesPerS)),
      failed: rows.reduce((a, r) => a + r.failed, 0),
      errors: rows.flatMap((r) => r.errors),
      cpuUsPerProbe: median(rows.map((r) => r.sutCpuUsPerProbe)),
      sutCores: median(rows.map((r) => r.sutCores)),
      targetCores: median(rows.map((r) => r.targetCores)),
      foreignCores: median(rows.map((r) => r.foreignCores))
    }
  })
  const by = Object.fromEntries(summary.map((s) => [s.id, s]))
  const ratio = (a, b) => (by[a] && by[b] ? by[a].probesPerS / by[b].probesPerS : NaN)
  // Each round runs every system back to back, so the ratio within a round is the steadier view
  // when the machine's speed drifts between rounds (shared hosts): reported beside each goal.
  const paired = (a, b) => {
    const xs = results.get(a) ?? []
    const ys = results.get(b) ?? []
    return xs.length && ys.length ? median(xs.map((x, i) => x.probesPerS / (ys[i]?.probesPerS ?? NaN)).filter(Number.isFinite)) : NaN
  }
  const goals = [
    {
      what: 'ours (Locations) >= 1.5x blackbox_exporter',
      value: ratio('pools', 'blackbox'),
      paired: paired('pools', 'blackbox'),
      need: 1.5
    },
    { what: 'ours (Locations) >= 0.6x raw undici', value: ratio('pools', 'raw'), paired: paired('pools', 'raw'), need: 0.6 },
    { what: 'ours (HTTP API) >= 1.5x blackbox_exporter', value: ratio('api', 'blackbox'), paired: paired('api', 'blackbox'), need: 1.5 },
    { what: 'ours (HTTP API) >= 0.6x raw undici', value: ratio('api', 'raw'), paired: paired('api', 'raw'), need: 0.6 }
  ]
  // The same comparisons per CPU-second of the system under test: less sensitive to other load.
  const perCpu = (a, b) => (by[a] && by[b] ? by[b].cpuUsPerProbe / by[a].cpuUsPerProbe : NaN)
  const extra = [
    { what: 'per CPU-second: ours (Locations) / blackbox_exporter', value: perCpu('pools', 'blackbox') },
    { what: 'per CPU-second: ours (Locations) / raw undici', value: perCpu('pools', 'raw') },
    { what: 'raw undici refused dial + GET / raw undici GET', value: ratio('rawFallback', 'raw') },
    { what: 'ours (Locations) / raw undici refused dial + GET', value: ratio('pools', 'rawFallback') },
    ...(OPTS.https
      ? [
          { what: 'HTTPS: ours (Locations) / blackbox_exporter', value: ratio('poolsTls', 'blackboxTls') },
          { what: 'HTTPS: ours (Locations) / raw undici', value: ratio('poolsTls', 'rawTls') }
        ]
      : [])
  ]

  // -------------------------------------------------------------------------------------------
  // Scenarios: each gets a service process (and a blackbox_exporter) of its own, stopped after it.
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
  const stopHandle = async (h) => {
    if (h.call) {
      await h.call('close', {}, 30_000).catch(() => {})
      const gone = h.child.exitCode !== null || h.child.signalCode !== null ? null : new Promise((r) => h.child.once('exit', r))
      try {
        h.child.send({ cmd: 'exit' })
      } catch {
        /* gone */
      }
      await Promise.race([gone, sleep(5000)])
    }
    if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill('SIGKILL')
    children.splice(children.indexOf(h), 1)
  }
  const pct = (x) => `${fmt(x * 100)}%`
  const ms = (x) => (Number.isFinite(x) ? `${fmt(x, x < 100 ? 1 : 0)} ms` : 'n/a')
  const mb = (x) => `${fmt(x / 2 ** 20)} MB`
  const errorsOf = (rows) => {
    const all = new Map()
    for (const r of rows) for (const [k, n] of Object.entries(r.errorCounts)) all.set(k, (all.get(k) ?? 0) + n)
    return all.size ? [...all].map(([k, n]) => `${k} x${fmt(n)}`).join('; ') : 'none'
  }

  async function scenarioSlow() {
    const conns = OPTS.slowConnections
    const slowEnv = { MAX_CHECKS_IN_FLIGHT: String(SLOW_MAX_IN_FLIGHT) }
    const slowSvc = startChild('service', SUT_CPU, slowEnv, sutArgs)
    const svcInit = await slowSvc.call(
      'init',
      {
        httpPort,
        closedPort,
        dbFile: join(dir, 'slow.sqlite'),
        keys: KEYS,
        env: { ...slowEnv, CONNECT_TO: `:80:${LOOPBACK}:${ports.slowPort},:443:${LOOPBACK}:${closedPort}` }
      },
      120_000
    )
    let bb = null
    if (blackbox) {
      try {
        bb = await startBlackbox(dir, SUT_CPU, cert.certFile)
      } catch (err) {
        console.error(String(err))
      }
    }
    const slowUrl = `http://${LOOPBACK}:${ports.slowPort}/`
    // wrk's --timeout: an answer later than this is counted as a timeout, not in the percentiles.
    const timeoutS = 10
    const sys = [
      ...(bb
        ? [
            {
              id: 'blackbox',
              label: 'blackbox_exporter /probe (http_2xx)',
              probesPerOp: 1,
              pid: bb.pid,
              run: (sec) => wrkBlackbox(`http://${LOOPBACK}:${bb.port}`, probePath('http_2xx', slowUrl), sec, conns, timeoutS)
            }
          ]
        : []),
      {
        id: 'api',
        label: 'ours: POST /api/v1/check, cache miss',
        probesPerOp: 3,
        pid: svcInit.pid,
        run: (sec) => wrkCheck(svcInit.servicePort, svcInit.keys, sec, conns, { timeoutS })
      }
    ]
    const rows = new Map(sys.map((x) => [x.id, []]))
    const one = async (x, sec, record) => {
      if (record) await waitForQuiet()
      const t0 = await target.call('stats')
      const c0 = procCpuUs(x.pid)
      const b0 = machineBusyUs()
      const o0 = benchCpuUs()
      const l0 = listenOverflows()
      const w = await x.run(sec)
      const t1 = await target.call('stats')
      const wall = w.seconds
      const row = {
        probesPerS: w.units / w.seconds,
        checksPerS: w.good / w.seconds,
        p50Ms: w.p50Ms,
        p99Ms: w.p99Ms,
        maxMs: w.maxMs,
        // An answer later than wrk's timeout is not in its percentiles: say so rather than hide it.
        p99Censored: w.timeouts > 0.01 * Math.max(1, w.requests),
        non2xx: w.non2xx,
        errors: w.errorText,
        errorCounts: w.errorCounts,
        // Handshakes dropped by full accept queues (machine-wide): each costs its client a SYN retransmit, 1 s or more.
        overflows: listenOverflows() - l0,
        sutCores: (procCpuUs(x.pid) - c0) / 1e6 / wall,
        // CPU of the system per location probe: steadier than probes/s when other load shares the machine.
        cpuUsPerProbe: w.units > 0 ? (procCpuUs(x.pid) - c0) / w.units : NaN,
        targetCores: (t1.cpuUs - t0.cpuUs) / 1e6 / wall,
        wrkCores: w.cpuUs / 1e6 / wall,
        foreignCores: Math.max(0, machineBusyUs() - b0 - (benchCpuUs() - o0) - w.cpuUs) / 1e6 / wall
      }
      if (record) rows.get(x.id).push(row)
      console.log(
        `  slow ${record ? 'round' : 'warm-up'} ${x.label.padEnd(40)} ${fmt(row.probesPerS).padStart(6)} probes/s  p50 ${ms(row.p50Ms)}  p99 ${ms(row.p99Ms)}` +
          `  cpu ${pct(row.sutCores)}  target ${pct(row.targetCores)}  wrk ${pct(row.wrkCores)}  other ${pct(row.foreignCores)}  accept overflows ${row.overflows}` +
          (row.errors.length ? `  ${row.errors.join('; ')}` : '')
      )
      return row
    }
    for (const x of sys) await one(x, OPTS.slowWarmup, false)
    for (let round = 0; round < OPTS.slowRounds; round++) {
      for (const x of round % 2 ? [...sys].reverse() : sys) await one(x, OPTS.slowSeconds, true)
    }
    const rss = { api: peakRss(svcInit.pid), blackbox: bb ? peakRss(bb.pid) : NaN }
    await stopHandle(slowSvc)
    if (bb) await stopHandle(bb)

    const med = (id, k) => median((rows.get(id) ?? []).map((r) => r[k]))
    const ratio = med('api', 'probesPerS') / med('blackbox', 'probesPerS')
    const pairedRatio = rows.get('blackbox')
      ? median(rows.get('api').map((r, i) => r.probesPerS / rows.get('blackbox')[i].probesPerS))
      : NaN
    const p99 = med('api', 'p99Ms')
    const p99Worst = Math.max(...rows.get('api').map((r) => r.p99Ms))
    const censored = rows.get('api').some((r) => r.p99Censored)
    const yes = (ok) => (ok ? 'yes' : '**no**')
    return [
      `**Slow target** (200 after ${SLOW_DELAY_MS / 1000} s): ${fmt(conns)} wrk connections per system (${wrkThreads(conns)} wrk thread${wrkThreads(conns) > 1 ? 's' : ''}), ` +
        `${OPTS.slowRounds} rounds x ${OPTS.slowSeconds} s after a ${OPTS.slowWarmup} s warm-up each, order alternating per round; ` +
        `our service in a process of its own with MAX_CHECKS_IN_FLIGHT=${SLOW_MAX_IN_FLIGHT}, a new name per check, keys rotated over ${KEYS}; ` +
        `blackbox_exporter a fresh process probing the same target.`,
      '',
      '| system | median location probes/s | (median checks/s) | rounds (probes/s) | p50 | p99 (median of rounds) | p99, worst round | max | non-2xx and errors | accept-queue overflows | system CPU | CPU µs / probe | target CPU | wrk CPU | other load | peak RSS |',
      '|---|---:|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|',
      ...sys.map((x) => {
        const rs = rows.get(x.id)
        return (
          `| ${x.label} | ${fmt(med(x.id, 'probesPerS'))} | ${x.probesPerOp === 1 ? '' : `${fmt(med(x.id, 'checksPerS'))} checks/s`} | ${rs.map((r) => fmt(r.probesPerS)).join(', ')} | ` +
          `${ms(med(x.id, 'p50Ms'))} | ${ms(med(x.id, 'p99Ms'))} | ${ms(Math.max(...rs.map((r) => r.p99Ms)))} | ${ms(Math.max(...rs.map((r) => r.maxMs)))} | ` +
          `${errorsOf(rs)} | ${rs.map((r) => fmt(r.overflows)).join(', ')} | ${pct(med(x.id, 'sutCores'))} | ${fmt(med(x.id, 'cpuUsPerProbe'))} | ${pct(med(x.id, 'targetCores'))} | ${pct(med(x.id, 'wrkCores'))} | ${pct(med(x.id, 'foreignCores'))} | ${mb(rss[x.id])} |`
        )
      }),
      '',
      '| goal (slow target) | figure | met |',
      '|---|---:|---|',
      `| ours >= 1.5x blackbox_exporter's location probes/s (ratio of the medians; median of the per-round ratios) | ${fmt(ratio, 2)}x (${fmt(pairedRatio, 2)}x) | ${Number.isFinite(ratio) ? yes(ratio >= 1.5) : 'skipped'} |`,
      `| ours: p99 latency < 1.5 s (median of the rounds; worst round) | ${ms(p99)} (${ms(p99Worst)})${censored ? `; over 1% of answers later than wrk's ${timeoutS} s timeout` : ''} | ${yes(p99 < 1500 && !censored)} |`,
      `| ours: peak RSS (VmHWM) < 600 MB | ${mb(rss.api)} | ${yes(rss.api < 600 * 2 ** 20)} |`,
      `| per CPU-second: ours / blackbox_exporter (CPU µs per location probe, medians) | ${fmt(med('blackbox', 'cpuUsPerProbe') / med('api', 'cpuUsPerProbe'), 2)}x | (for reference) |`
    ].join('\n')
  }

  async function scenarioHang() {
    const N = OPTS.hangChecks
    const depth = OPTS.hangPipeline
    const conns = Math.ceil(N / depth)
    const hangEnv = {
      PROBE_TIMEOUT_MS: String(OPTS.hangTimeoutMs),
      MAX_CHECKS_IN_FLIGHT: String(HANG_MAX_IN_FLIGHT),
      // The fast client asks for one name again and again: every one of its checks must probe.
      CACHE_TTL_S: '0'
    }
    const hangSvc = startChild('service', SUT_CPU, hangEnv, sutArgs)
    const svcInit = await hangSvc.call(
      'init',
      {
        httpPort,
        closedPort,
        dbFile: join(dir, 'hang.sqlite'),
        keys: HANG_KEYS + 1,
        env: {
          ...hangEnv,
          CONNECT_TO: `${FAST_NAME}:80:${LOOPBACK}:${httpPort},:80:${LOOPBACK}:${ports.hangPort},:443:${LOOPBACK}:${closedPort}`
        }
      },
      120_000
    )
    const loadKeys = svcInit.keys.slice(0, HANG_KEYS)
    const fastKey = svcInit.keys[HANG_KEYS]
    const fdCount = () => {
      try {
        return readdirSync(`/proc/${svcInit.pid}/fd`).length
      } catch {
        return NaN
      }
    }
    const fastRun = (sec) =>
      wrk({
        url: `http://${LOOPBACK}:${svcInit.servicePort}/api/v1/check`,
        connections: 1,
        seconds: sec,
        timeoutS: OPTS.hangTimeoutMs / 1000 + 5,
        cpu: AUX_CPU,
        method: 'POST',
        body: `{"domain":"${FAST_NAME}"}`,
        keys: [fastKey],
        require: '"cached":false',
        ok: '"http_code":200'
      })
    // The fast check alone first (also the warm-up of that path): the same run's baseline.
    const alone = await fastRun(Math.min(5, OPTS.hangSeconds))
    console.log(
      `  hang: fast check alone  p50 ${ms(alone.p50Ms)}  p99 ${ms(alone.p99Ms)}  ${alone.good}/${alone.requests} fresh 2xx` +
        (alone.errorText.length ? `  ${alone.errorText.join('; ')}` : '')
    )
    await waitForQuiet()

    let stopLoad
    const stopped = new Promise((r) => {
      stopLoad = r
    })
    const rampLimitS = 30
    const overflows0 = listenOverflows()
    const t0 = performance.now()
    const load = wrkCheck(svcInit.servicePort, loadKeys, rampLimitS + OPTS.hangSeconds + 10, conns, {
      timeoutS: OPTS.hangTimeoutMs / 1000 + 30,
      pipeline: depth,
      stop: stopped
    })
    load.catch(() => {})
    // Probing = the hanging target's open connections / 3 (one per location of each check).
    const inFlight = async () => Math.floor((await target.call('stats')).hangOpen / 3)
    // Wait until 95% of them probe the target, or until the count has not grown for 2 s (a build
    // that queues probes behind a fixed number per actor never gets there).
    let rampS = NaN
    let now = 0
    let best = 0
    let bestAt = performance.now()
    while (performance.now() - t0 < rampLimitS * 1000) {
      now = await inFlight()
      if (now >= 0.95 * N) {
        rampS = (performance.now() - t0) / 1000
        break
      }
      if (now > best) {
        best = now
        bestAt = performance.now()
      }
      if (performance.now() - t0 > 3000 && performance.now() - bestAt > 2000) break
      await sleep(100)
    }
    console.log(
      `  hang: ${fmt(now)} hanging checks probing the target after ${fmt((performance.now() - t0) / 1000, 1)} s (${conns} connections x ${depth} requests)`
    )
    const samples = []
    let fds = 0
    let sampling = true
    const sampler = (async () => {
      while (sampling) {
        samples.push(await inFlight())
        fds = Math.max(fds, fdCount())
        await sleep(250)
      }
    })()
    const during = await fastRun(OPTS.hangSeconds).finally(() => {
      sampling = false
    })
    await sampler
    stopLoad()
    const loaded = await load.catch((err) => ({ error: String(err) }))
    const overflows = listenOverflows() - overflows0
    const rss = peakRss(svcInit.pid)
    await stopHandle(hangSvc)
    console.log(
      `  hang: fast check during p50 ${ms(during.p50Ms)}  p99 ${ms(during.p99Ms)}  max ${ms(during.maxMs)}  ${during.good}/${during.requests} fresh 2xx` +
        `  probing min ${Math.min(...samples)} median ${median(samples)}  load ${loaded.error ?? JSON.stringify(loaded.codes)}`
    )

    // wrk leaves out a request still unanswered when its time is up; with one connection, the time
    // its answers do not account for is that request's age at the end (at least).
    const tailMs = Math.max(0, during.seconds * 1000 - during.requests * during.meanMs)
    const fastUp = during.units === 3 * during.requests && during.requests > 0
    const fastOk = during.requests > 0 && during.p99Ms < 100 && tailMs < 100
    const sorted = [...samples].sort((a, b) => a - b)
    const full = samples.filter((x) => x >= 0.95 * N).length / Math.max(1, samples.length)
    const codes = loaded.codes
      ? Object.entries(loaded.codes)
          .map(([c, n]) => `${c}: ${fmt(n)}`)
          .join(', ') || 'none'
      : loaded.error
    const yes = (ok) => (ok ? 'yes' : '**no**')
    return [
      `**Hanging targets**: ${fmt(N)} on-demand checks of names whose port 80 accepts and never answers (443 refused), PROBE_TIMEOUT_MS=${OPTS.hangTimeoutMs}, ` +
        `MAX_CHECKS_IN_FLIGHT=${HANG_MAX_IN_FLIGHT}, CACHE_TTL_S=0, spread over ${HANG_KEYS} keys, sent by wrk over ${fmt(conns)} connections ${depth} requests deep` +
        `${depth > 1 && 4 * N + 100 > NOFILE_HARD ? ` (one connection per check would need ${fmt(N)} + ${fmt(3 * N)} descriptors in the service besides its own, more than this machine's hard limit of ${fmt(NOFILE_HARD)} open files allows, and no process here may raise it)` : ''}; ` +
        `meanwhile one wrk connection checks \`${FAST_NAME}\` (its own key; answers at once) for ${OPTS.hangSeconds} s. ` +
        `Probing = the hanging target's open connections / 3 (one per location), sampled every 250 ms.`,
      '',
      '| measurement (hanging targets) | figure | goal | met |',
      '|---|---:|---:|---|',
      `| fast check alone, before the load: p50 / p99 | ${ms(alone.p50Ms)} / ${ms(alone.p99Ms)} | | |`,
      `| fast check during the load: p50 / p99 / max | ${during.requests ? `${ms(during.p50Ms)} / ${ms(during.p99Ms)} / ${ms(during.maxMs)}` : `no answer in ${OPTS.hangSeconds} s`}` +
        `${tailMs >= 100 ? `; one more was still unanswered after ${ms(tailMs)} when the ${OPTS.hangSeconds} s ended` : ''} | p99 < 100 ms | ${yes(fastOk)} |`,
      `| fast checks during the load: answers; fresh 2xx; location probes up with 200 (of 3 per answer); errors | ${fmt(during.requests)}; ${fmt(during.good)}; ` +
        `${fmt(during.units)} of ${fmt(3 * during.requests)}; ${during.errorText.join('; ') || 'none'} | all up | ${yes(fastUp && during.good === during.requests && during.errorText.length === 0)} |`,
      `| hanging checks requested and unanswered (wrk keeps ${depth} requests outstanding on each of its ${fmt(conns)} connections) | ${fmt(conns * depth)} | ${fmt(N)} | |`,
      `| of these, probing the hanging target meanwhile: min / median / max of the samples | ${fmt(sorted[0])} / ${fmt(median(samples))} / ${fmt(sorted.at(-1))} | ${fmt(N)} | |`,
      `| share of the samples with at least 95% of ${fmt(N)} probing | ${pct(full)} | | |`,
      `| time for the load to reach 95% of ${fmt(N)} probing | ${Number.isFinite(rampS) ? `${fmt(rampS, 1)} s` : `never: at most ${fmt(best)} probing (no growth for 2 s)`} | | |`,
      `| hanging checks answered by the service during the run, by status | ${codes} | | |`,
      `| service: most open file descriptors seen (limit ${fmt(NOFILE_HARD)}) | ${fmt(fds)} | | |`,
      `| handshakes dropped by full accept queues during the load (machine-wide) | ${fmt(overflows)} | | |`,
      `| service: peak RSS (VmHWM) | ${mb(rss)} | | |`
    ].join('\n')
  }

  const scenarioTables = []
  if (runSlow) scenarioTables.push(await scenarioSlow())
  if (runHang) scenarioTables.push(await scenarioHang())

  const otherLoad = median([...results.values()].flat().map((r) => r.foreignCores))
  const noisy =
    otherLoad > 0.15
      ? `\n\n**Warning:** processes outside this bench kept ${fmt(otherLoad * 100)}% of a core busy (median over the rounds): ` +
        'the probes/s figures are disturbed; the CPU µs / probe column is the steadier comparison.'
      : ''
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const table = [
    `Run ${when}: ${cores} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, ` +
      `${canPin ? 'system under test pinned to CPU 0, target and wrk to CPU 1' : 'no CPU pinning'}, ` +
      `${OPTS.rounds} rounds x ${S} s, ${C} operations in flight` +
      `${blackbox ? `, ${blackbox.version.replace(/ \(.*$/, '')}` : ', blackbox_exporter not installed (skipped)'}.${noisy}`,
    '',
    '| system | group | median location probes/s | (median ops/s) | rounds | failed | system CPU (100% = a core) | CPU µs / probe | target CPU | other load |',
    '|---|---|---:|---:|---|---:|---:|---:|---:|---:|',
    ...summary.map(
      (s) =>
        `| ${s.label} | ${s.group} | ${fmt(s.probesPerS)} | ${s.probesPerOp === 1 ? '' : `${fmt(s.opsPerS)} ${s.unit}/s`} | ` +
        `${s.rounds.map((x) => fmt(x)).join(', ')} | ${s.failed} | ${fmt(s.sutCores * 100)}% | ${fmt(s.cpuUsPerProbe)} | ${fmt(s.targetCores * 100)}% | ${fmt(s.foreignCores * 100)}% |`
    ),
    '',
    '| goal | ratio of the medians | median of the per-round ratios | met (ratio of the medians) |',
    '|---|---:|---:|---|',
    ...goals.map(
      (g) =>
        `| ${g.what} | ${fmt(g.value, 2)} | ${fmt(g.paired, 2)} | ${Number.isFinite(g.value) ? (g.value >= g.need ? 'yes' : '**no**') : 'skipped'} |`
    ),
    ...extra.map((g) => `| ${g.what} | ${fmt(g.value, 2)} | | (for reference) |`),
    ...scenarioTables.flatMap((t) => ['', t])
  ].join('\n')
  console.log(`\n${table}\n`)
  const failures = summary.filter((s) => s.failed > 0)
  if (failures.length) console.log(`failures: ${JSON.stringify(failures.map((s) => ({ id: s.id, failed: s.failed, errors: s.errors })))}`)

  if (OPTS.docs) writeFigures('benchmarks.md', canPin ? 'bench/check, pinned' : 'bench/check', table)
  console.log(`bench/check: done in ${fmt((performance.now() - started) / 1000, 1)} s`)
  await shutdown(0, dir)
}

let shuttingDown = false
async function shutdown(code, dir) {
  if (shuttingDown) return
  shuttingDown = true
  for (const w of wrkProcs) {
    try {
      process.kill(-w.pid, 'SIGKILL')
    } catch {
      /* gone */
    }
  }
  for (const c of children) {
    if (c.call) await c.call('close', {}, 15_000).catch(() => {})
  }
  // A normal exit (not a signal) lets --cpu-prof write its profiles.
  const exited = children
    .filter((c) => c.call)
    .map(
      (c) =>
        new Promise((r) => {
          if (c.child.exitCode !== null || c.child.signalCode !== null) {
            r()
            return
          }
          c.child.once('exit', r)
          try {
            c.child.send({ cmd: 'exit' })
          } catch {
            r()
          }
        })
    )
  await Promise.race([Promise.all(exited), new Promise((r) => setTimeout(r, 3000))])
  for (const c of children) {
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGTERM')
  }
  await new Promise((r) => setTimeout(r, 300))
  for (const c of children) {
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL')
  }
  if (dir) rmSync(dir, { recursive: true, force: true })
  process.exit(code)
}

const role = process.argv[2] ?? 'main'
const roles = { main: roleMain, target: roleTarget, sut: roleSut, service: roleService }
if (!roles[role]) throw new Error(`unknown role ${role}`)
roles[role]().catch((err) => {
  console.error(`bench/check (${role}):`, err)
  if (role === 'main') shutdown(1)
  else process.exit(1)
})
