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
 * 1: pin the system under test to CPU 0 and the target and driver to CPU 1 with taskset, the
 * per-core view), BENCH_DOCS (1: rewrite this mode's figures in docs/benchmarks.md), BENCH_PROFILE (1: --cpu-prof the process under test,
 * profiles go to bench/profiles/), BENCH_ACTOR (path of another location actor module for the
 * LocationPools runs, e.g. a patched copy of dist/workers/location-actor.js), BENCH_ONLY (ids of
 * the systems to run: raw,rawFallback,blackbox,pools,api,rawTls,blackboxTls,poolsTls),
 * BENCH_SUT_NODE_ARGS (extra node flags for the process under test, e.g. "--single-threaded-gc" or
 * "--trace-gc", to try a V8 setting; NODE_OPTIONS refuses some of them).
 *
 * Processes (all on 127.0.0.1, each started and stopped by this script):
 *   main     this file: starts the others, tells them what to run, collects figures. Mostly idle.
 *   target   child: the HTTP target and an HTTPS target (ECDSA certificate made here).   CPU 1
 *   sut      child: raw undici loops and LocationPools (3 actor threads per pool), driven
 *            in-process.                                                                CPU 0
 *   service  child: the real service alone, as in production (startService: hapi, key auth,
 *            rate limit, CheckSupervisor, its own LocationPools) on an ephemeral port.   CPU 0
 *   blackbox prometheus-blackbox-exporter, when installed.                                CPU 0
 *   driver   child: the HTTP client that drives blackbox /probe and our /api/v1/check.     CPU 1
 * Pinned (BENCH_PIN=1), whatever is measured gets CPU 0 to itself and the target and the load
 * generator share CPU 1; unpinned, all of them share the machine's cores, as in production.
 */
import { execFileSync, fork, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import { join, dirname } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { writeFigures } from './processes.mjs'

const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..')
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
  /** Another location actor module for the LocationPools runs (to try a change without rebuilding). */
  actor: process.env.BENCH_ACTOR || undefined
}
/** Hard cap on operations per loop, so every loop is bounded in count as well as in time. */
const MAX_OPS_PER_LOOP = 2_000_000
/** Per-operation deadline: one slow probe can hold a lane for at most this long. */
const OP_TIMEOUT_MS = 5000
/** The whole run's limit: twice the measuring time of eight systems, plus start-up and waits for a quiet machine. */
const WATCHDOG_MS = 120_000 + 2 * 8 * (OPTS.warmup + OPTS.rounds * OPTS.seconds) * 1000

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
    if (msg?.cmd === 'exit') { process.exit(0) }
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

const cpuNow = () => { const c = process.cpuUsage(); return c.user + c.system }

// ---------------------------------------------------------------------------------------------
// Role: target (HTTP and HTTPS, 200 with a small body)

async function roleTarget() {
  const http = await import('node:http')
  const https = await import('node:https')
  const stats = { requests: 0, connections: 0 }
  const handler = (req, res) => {
    stats.requests++
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' }).end('ok\n')
  }
  const cert = JSON.parse(process.env.BENCH_CERT)
  const plain = http.createServer(handler)
  const secure = https.createServer({ key: cert.key, cert: cert.cert }, handler)
  for (const s of [plain, secure]) s.on('connection', () => { stats.connections++ })
  const listen = (s) => new Promise((resolve) => s.listen({ port: 0, host: LOOPBACK, backlog: 4096 }, () => resolve(s.address().port)))
  const httpPort = await listen(plain)
  const httpsPort = await listen(secure)
  serve({
    ports: async () => ({ httpPort, httpsPort }),
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
    init: async ({ httpPort, closedPort, dbFile }) => {
      const config = loadConfig({
        PORT: '0',
        HOST: LOOPBACK,
        DATABASE_URL: `sqlite:${dbFile}`,
        CONNECT_TO: `:80:${LOOPBACK}:${httpPort},:443:${LOOPBACK}:${closedPort}`,
        ALLOW_PRIVATE_TARGETS: '1',
        CACHE_TTL_S: '60',
        PROBE_TIMEOUT_MS: String(OP_TIMEOUT_MS),
        // Per-request access lines would be written to a pipe nobody reads; see docs/benchmarks.md.
        LOG_LEVEL: 'warn'
      })
      service = await startService({ config, logger: createLogger({ level: 'warn' }) })
      const key = generateKey()
      await createKey({ db: service.db, name: 'bench', keyHash: hashKey(key), rateLimit: 1_000_000_000, now: new Date() })
      return { servicePort: service.server.info.port, key }
    },
    cpu: async () => ({ cpuUs: cpuNow() }),
    close: async () => {
      await service?.stop()
      return true
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Role: sut (raw undici and LocationPools, driven in-process)

async function roleSut() {
  const { Agent, request } = await import('undici')
  const { LocationPools } = await import('../dist/lib/checks/location-pool.js')
  const { loadConfig, parseConnectTo } = await import('../dist/config/index.js')
  const { createLogger } = await import('../dist/lib/logger.js')

  const pools = {}
  let names = 0
  const silent = createLogger({ level: 'silent' })

  // Raw baseline: undici, a fresh connection per request (`reset: true` sends connection: close),
  // TLS session resumption off so every https request pays a full handshake, as our probes do.
  const agent = new Agent({ connect: { maxCachedSessions: 0 } })
  const readAll = async (body) => { for await (const _ of body) { /* drain */ } }

  const rawGet = async (url) => {
    const res = await request(url, { dispatcher: agent, reset: true, headersTimeout: OP_TIMEOUT_MS, bodyTimeout: OP_TIMEOUT_MS })
    await readAll(res.body)
    return res.statusCode === 200 ? { ok: 1, failed: 0 } : { ok: 0, failed: 1, error: `http ${res.statusCode}` }
  }

  serve({
    init: async ({ httpPort, httpsPort, closedPort }) => {
      const actorFile = OPTS.actor === undefined ? undefined : new URL(OPTS.actor, `file://${process.cwd()}/`).href
      const common = { allowPrivate: true, timeoutMs: OP_TIMEOUT_MS, userAgent: 'SiteStatusAPI/bench', logger: silent, actorFile }
      const locations = loadConfig({}).locations // the default: three direct locations
      pools.http = new LocationPools({ ...common, locations, connectTo: parseConnectTo(`:80:${LOOPBACK}:${httpPort},:443:${LOOPBACK}:${closedPort}`) })
      pools.https = new LocationPools({ ...common, locations, connectTo: parseConnectTo(`:80:${LOOPBACK}:${httpPort},:443:${LOOPBACK}:${httpsPort}`) })
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
    rawFallback: async ({ refusedUrl, url, seconds, concurrency }) => closedLoop(concurrency, seconds, async () => {
      try {
        await request(refusedUrl, { dispatcher: agent, reset: true })
        return { ok: 0, failed: 1, error: 'closed port answered' }
      } catch (err) {
        if (err?.code !== 'ECONNREFUSED') return { ok: 0, failed: 1, error: String(err?.code) }
      }
      return rawGet(url)
    }),
    pools: async ({ variant, seconds, concurrency, expectScheme }) => closedLoop(concurrency, seconds, async () => {
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
// Role: driver (HTTP load on blackbox /probe and on our /api/v1/check, keep-alive)

async function roleDriver() {
  const { Pool } = await import('undici')
  const pools = new Map()
  const poolFor = (origin, connections) => {
    if (!pools.has(origin)) pools.set(origin, new Pool(origin, { connections, pipelining: 1 }))
    return pools.get(origin)
  }
  let names = 0
  const text = async (body) => {
    const chunks = []
    for await (const c of body) chunks.push(c)
    return Buffer.concat(chunks).toString('utf8')
  }
  serve({
    blackbox: async ({ origin, path, seconds, concurrency }) => {
      const pool = poolFor(origin, concurrency)
      return closedLoop(concurrency, seconds, async () => {
        const res = await pool.request({ path, method: 'GET', headersTimeout: OP_TIMEOUT_MS + 1000, bodyTimeout: OP_TIMEOUT_MS + 1000 })
        const body = await text(res.body)
        if (res.statusCode === 200 && /^probe_success 1$/m.test(body) && /^probe_http_status_code 200$/m.test(body)) return { ok: 1, failed: 0 }
        const code = /^probe_http_status_code (\d+)$/m.exec(body)?.[1]
        return { ok: 0, failed: 1, error: `exporter ${res.statusCode}, probe_success ${/^probe_success (\S+)$/m.exec(body)?.[1]}, target ${code}` }
      })
    },
    check: async ({ origin, key, seconds, concurrency }) => {
      const pool = poolFor(origin, concurrency)
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
      return closedLoop(concurrency, seconds, async () => {
        const domain = `n${names++}.bench.test`
        const res = await pool.request({ path: '/api/v1/check', method: 'POST', headers, body: JSON.stringify({ domain }), headersTimeout: OP_TIMEOUT_MS + 3000, bodyTimeout: OP_TIMEOUT_MS + 3000 })
        const body = JSON.parse(await text(res.body))
        if (res.statusCode !== 200) return { ok: 0, failed: 3, error: `api ${res.statusCode} ${body.error}` }
        if (body.cached !== false) return { ok: 0, failed: 3, error: 'cached answer' }
        let ok = 0
        let error
        for (const r of body.locations) {
          if (r.status === 'up' && r.http_code === 200) ok++
          else error ??= `${r.status} ${r.http_code} ${r.error}`
        }
        return { ok, failed: body.locations.length - ok, error }
      })
    },
    cpu: async () => ({ cpuUs: cpuNow() }),
    close: async () => { await Promise.all([...pools.values()].map((p) => p.close())); return true }
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
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=bench.test', '-days', '1',
    '-addext', 'subjectAltName=DNS:*.bench.test,DNS:localhost,IP:127.0.0.1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')
  ], { stdio: 'ignore' })
  return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), certFile: join(dir, 'cert.pem') }
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
    s.once('connect', () => { s.destroy(); resolve(false) })
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
    for (const w of waiting.values()) { clearTimeout(w.timer); w.reject(new Error(`${role} exited (${code ?? signal})`)) }
    waiting.clear()
  })
  const call = (cmd, args = {}, timeoutMs = 60_000) => new Promise((resolve, reject) => {
    const id = nextId++
    const timer = setTimeout(() => { waiting.delete(id); reject(new Error(`${role}: ${cmd} timed out`)) }, timeoutMs)
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
    try { total += procCpuUs(pid) } catch { /* exited */ }
  }
  return total
}

/** Processes that are not ours keep the machine busy: how many cores' worth over `ms`. */
async function foreignLoad(ms) {
  const b0 = machineBusyUs(); const o0 = benchCpuUs(); const t0 = performance.now()
  await new Promise((r) => setTimeout(r, ms))
  return Math.max(0, (machineBusyUs() - b0) - (benchCpuUs() - o0)) / 1000 / (performance.now() - t0)
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
  writeFileSync(config, [
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
  ].join('\n'))
  const args = [`--config.file=${config}`, `--web.listen-address=${LOOPBACK}:${port}`]
  const proc = cpu !== null ? spawn('taskset', ['-c', String(cpu), BLACKBOX, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(BLACKBOX, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  const tail = []
  proc.stderr.on('data', (d) => { tail.push(d.toString()); if (tail.length > 20) tail.shift() })
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
    } catch { /* not up yet */ }
  }
  throw new Error(`blackbox_exporter did not start: ${tail.join('')}`)
}

function fmt(n, digits = 0) {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a'
}

async function roleMain() {
  const watchdog = setTimeout(() => { console.error('bench/check: watchdog expired'); shutdown(1) }, WATCHDOG_MS)
  watchdog.unref()
  const started = performance.now()
  const cores = os.availableParallelism?.() ?? os.cpus().length
  const canPin = OPTS.pin && cores >= 2 && (() => { try { execFileSync('taskset', ['-V'], { stdio: 'ignore' }); return true } catch { return false } })()
  const SUT_CPU = canPin ? 0 : null
  const AUX_CPU = canPin ? 1 : null
  if (canPin) execFileSync('taskset', ['-a', '-p', '-c', String(AUX_CPU), String(process.pid)], { stdio: 'ignore' })
  try { CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100 } catch { /* keep 100 */ }

  const dir = mkdtempSync(join(os.tmpdir(), 'bench-check-'))
  const cert = makeCert(dir)
  const closedPort = await freePort()
  if (!(await refused(closedPort))) throw new Error(`port ${closedPort} is not closed`)

  const profDir = join(HERE, 'profiles')
  if (OPTS.profile) mkdirSync(profDir, { recursive: true })
  const target = startChild('target', AUX_CPU, { BENCH_CERT: JSON.stringify({ key: cert.key, cert: cert.cert }) })
  const sutArgs = [...(process.env.BENCH_SUT_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(OPTS.profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])]
  const sut = startChild('sut', SUT_CPU, { NODE_EXTRA_CA_CERTS: cert.certFile }, sutArgs)
  const svc = startChild('service', SUT_CPU, {}, sutArgs)
  const driver = startChild('driver', AUX_CPU)
  const { httpPort, httpsPort } = await target.call('ports')
  await sut.call('init', { httpPort, httpsPort, closedPort })
  const { servicePort, key } = await svc.call('init', { httpPort, closedPort, dbFile: join(dir, 'bench.sqlite') })
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

  // Each system: how to run one timed loop, and what one operation is worth in location probes.
  const systems = [
    { id: 'raw', group: 'http', label: 'raw undici GET, new connection', unit: 'requests', probesPerOp: 1,
      run: (s) => sut.call('raw', { url, seconds: s, concurrency: C }) },
    { id: 'rawFallback', group: 'http', label: 'raw undici, refused dial + GET', unit: 'requests', probesPerOp: 1,
      run: (s) => sut.call('rawFallback', { refusedUrl: `http://${LOOPBACK}:${closedPort}/`, url, seconds: s, concurrency: C }) },
    ...(blackbox ? [{ id: 'blackbox', group: 'http', label: 'blackbox_exporter /probe (http_2xx)', unit: 'probes', probesPerOp: 1, viaDriver: true,
      run: (s) => driver.call('blackbox', { origin: bbOrigin, path: probePath('http_2xx', url), seconds: s, concurrency: C }) }] : []),
    { id: 'pools', group: 'http', label: 'ours: LocationPools.probeAll (3 locations)', unit: 'probeAll', probesPerOp: 3,
      run: (s) => sut.call('pools', { variant: 'http', expectScheme: 'http', seconds: s, concurrency: C }) },
    { id: 'api', group: 'http', label: 'ours: POST /api/v1/check, cache miss', unit: 'checks', probesPerOp: 3, viaDriver: true,
      run: (s) => driver.call('check', { origin: `http://${LOOPBACK}:${servicePort}`, key, seconds: s, concurrency: C }) },
    ...(OPTS.https ? [
      { id: 'rawTls', group: 'https', label: 'raw undici GET, new TLS connection', unit: 'requests', probesPerOp: 1,
        run: (s) => sut.call('raw', { url: httpsUrl, seconds: s, concurrency: C }) },
      ...(blackbox ? [{ id: 'blackboxTls', group: 'https', label: 'blackbox_exporter /probe (https target)', unit: 'probes', probesPerOp: 1, viaDriver: true,
        run: (s) => driver.call('blackbox', { origin: bbOrigin, path: probePath('http_2xx_tls', httpsUrl), seconds: s, concurrency: C }) }] : []),
      { id: 'poolsTls', group: 'https', label: 'ours: LocationPools.probeAll, 443 = TLS target', unit: 'probeAll', probesPerOp: 3,
        run: (s) => sut.call('pools', { variant: 'https', expectScheme: 'https', seconds: s, concurrency: C }) }
    ] : [])
  ]

  // BENCH_ONLY=id,id runs a subset (e.g. with BENCH_PROFILE=1 to profile one system alone).
  const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean)
  if (only.length) systems.splice(0, systems.length, ...systems.filter((sys) => only.includes(sys.id)))

  // Sanity: what one probe of each variant looks like.
  const sampleHttp = await sut.call('sample', { variant: 'http' })
  const sampleHttps = OPTS.https ? await sut.call('sample', { variant: 'https' }) : null
  const show = (s) => s.locations.map((l) => `${l.status}/${l.http_code} ${l.final_url} ${JSON.stringify(l.timings)}`)[0]
  console.log(`bench/check: ${cores} cores, ${canPin ? 'pinned: target+driver on CPU 1, system under test on CPU 0' : 'not pinned'}; ` +
    `${OPTS.rounds} rounds x ${S} s per system, ${C} operations in flight`)
  console.log(`target http ${httpPort}, https ${httpsPort}; closed port for https dials ${closedPort}; service ${servicePort}; ` +
    `blackbox ${blackbox ? `${blackbox.port} (${blackbox.version})` : 'not installed: skipped'}`)
  console.log(`sample probe (443 closed):   ${show(sampleHttp)}`)
  if (sampleHttps) console.log(`sample probe (443 = TLS):    ${show(sampleHttps)}`)

  const snapshot = async () => ({
    t: performance.now(),
    // Our two processes (the in-process systems, and the service): the idle one adds next to nothing.
    sut: (await sut.call('cpu')).cpuUs + (await svc.call('cpu')).cpuUs,
    driver: (await driver.call('cpu')).cpuUs,
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
    const sutCpu = (after.sut - before.sut) + (sys.id.startsWith('blackbox') ? after.blackbox - before.blackbox : 0)
    const row = {
      opsPerS: r.ops / (r.elapsedMs / 1000),
      probesPerS: r.okUnits / (r.elapsedMs / 1000),
      failed: r.failedUnits,
      errors: r.errors,
      // CPU of the system under test per successful location probe, and how busy the target was.
      sutCpuUsPerProbe: r.okUnits > 0 ? sutCpu / r.okUnits : NaN,
      sutCores: sutCpu / 1e6 / wall,
      targetCores: (after.target.cpuUs - before.target.cpuUs) / 1e6 / wall,
      driverCores: (after.driver - before.driver) / 1e6 / wall,
      targetRequests: after.target.requests - before.target.requests,
      // Other people's processes on this machine during the round (cores' worth): noise, reported.
      foreignCores: Math.max(0, (after.busy - before.busy) - (after.ours - before.ours)) / 1e6 / wall
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
      console.log(`  round ${round + 1} ${sys.label.padEnd(48)} ${fmt(row.probesPerS).padStart(7)} probes/s` +
        `  failed ${row.failed}  cpu0 ${fmt(row.sutCores * 100)}%  target ${fmt(row.targetCores * 100)}%  other ${fmt(row.foreignCores * 100)}%` +
        (row.errors.length ? `  errors ${JSON.stringify(row.errors)}` : ''))
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
    { what: 'ours (LocationPools) >= 1.5x blackbox_exporter', value: ratio('pools', 'blackbox'), paired: paired('pools', 'blackbox'), need: 1.5 },
    { what: 'ours (LocationPools) >= 0.6x raw undici', value: ratio('pools', 'raw'), paired: paired('pools', 'raw'), need: 0.6 },
    { what: 'ours (HTTP API) >= 1.5x blackbox_exporter', value: ratio('api', 'blackbox'), paired: paired('api', 'blackbox'), need: 1.5 },
    { what: 'ours (HTTP API) >= 0.6x raw undici', value: ratio('api', 'raw'), paired: paired('api', 'raw'), need: 0.6 }
  ]
  // The same comparisons per CPU-second of the system under test: less sensitive to other load.
  const perCpu = (a, b) => (by[a] && by[b] ? by[b].cpuUsPerProbe / by[a].cpuUsPerProbe : NaN)
  const extra = [
    { what: 'per CPU-second: ours (LocationPools) / blackbox_exporter', value: perCpu('pools', 'blackbox') },
    { what: 'per CPU-second: ours (LocationPools) / raw undici', value: perCpu('pools', 'raw') },
    { what: 'raw undici refused dial + GET / raw undici GET', value: ratio('rawFallback', 'raw') },
    { what: 'ours (LocationPools) / raw undici refused dial + GET', value: ratio('pools', 'rawFallback') },
    ...(OPTS.https ? [
      { what: 'HTTPS: ours (LocationPools) / blackbox_exporter', value: ratio('poolsTls', 'blackboxTls') },
      { what: 'HTTPS: ours (LocationPools) / raw undici', value: ratio('poolsTls', 'rawTls') }
    ] : [])
  ]

  const otherLoad = median([...results.values()].flat().map((r) => r.foreignCores))
  const noisy = otherLoad > 0.15
    ? `\n\n**Warning:** processes outside this bench kept ${fmt(otherLoad * 100)}% of a core busy (median over the rounds): ` +
      'the probes/s figures are disturbed; the CPU µs / probe column is the steadier comparison.'
    : ''
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const table = [
    `Run ${when}: ${cores} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, ` +
      `${canPin ? 'system under test pinned to CPU 0, target and load driver to CPU 1' : 'no CPU pinning'}, ` +
      `${OPTS.rounds} rounds x ${S} s, ${C} operations in flight` +
      `${blackbox ? `, ${blackbox.version.replace(/ \(.*$/, '')}` : ', blackbox_exporter not installed (skipped)'}.${noisy}`,
    '',
    '| system | group | median location probes/s | (median ops/s) | rounds | failed | system CPU (100% = a core) | CPU µs / probe | target CPU | other load |',
    '|---|---|---:|---:|---|---:|---:|---:|---:|---:|',
    ...summary.map((s) => `| ${s.label} | ${s.group} | ${fmt(s.probesPerS)} | ${s.probesPerOp === 1 ? '' : `${fmt(s.opsPerS)} ${s.unit}/s`} | ` +
      `${s.rounds.map((x) => fmt(x)).join(', ')} | ${s.failed} | ${fmt(s.sutCores * 100)}% | ${fmt(s.cpuUsPerProbe)} | ${fmt(s.targetCores * 100)}% | ${fmt(s.foreignCores * 100)}% |`),
    '',
    '| goal | ratio of the medians | median of the per-round ratios | met (ratio of the medians) |',
    '|---|---:|---:|---|',
    ...goals.map((g) => `| ${g.what} | ${fmt(g.value, 2)} | ${fmt(g.paired, 2)} | ${Number.isFinite(g.value) ? (g.value >= g.need ? 'yes' : '**no**') : 'skipped'} |`),
    ...extra.map((g) => `| ${g.what} | ${fmt(g.value, 2)} | | (for reference) |`)
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
  for (const c of children) {
    if (c.call) await c.call('close', {}, 15_000).catch(() => {})
  }
  // A normal exit (not a signal) lets --cpu-prof write its profiles.
  const exited = children.filter((c) => c.call).map((c) => new Promise((r) => {
    if (c.child.exitCode !== null || c.child.signalCode !== null) { r(); return }
    c.child.once('exit', r)
    try { c.child.send({ cmd: 'exit' }) } catch { r() }
  }))
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
const roles = { main: roleMain, target: roleTarget, sut: roleSut, service: roleService, driver: roleDriver }
if (!roles[role]) throw new Error(`unknown role ${role}`)
roles[role]().catch((err) => {
  console.error(`bench/check (${role}):`, err)
  if (role === 'main') shutdown(1)
  else process.exit(1)
})
