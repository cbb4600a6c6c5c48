// bench/agents: what serving the three locations from `site-status agent` processes over NATS costs
// and saves the central, beside the same central with its local actors, in the same run.
//   npm run bench:agents   (builds; unpinned, then BENCH_PIN=1; loopback, SQLite and the local MySQL)
// Both systems reach one loopback target through the same CONNECT_TO (443 refused, 80 the target),
// so each location probe is a refused dial and a GET, as in bench/check. The agents (fra1, ams1,
// sfo1, one process each) and a private nats-server (never the system's on 4222) run on this box.
// Part "check": POST /api/v1/check, a new name per request (never cached), driven by wrk at
// BENCH_CONNECTIONS (1,8,64) connections; both centrals stay up and take turns, BENCH_ROUNDS (3) x
// BENCH_SECONDS (5) each after a BENCH_WARMUP_S (10) round. Figures: checks/s, wrk's p50/p99, and
// CPU per check (utime+stime of every thread, /proc/<pid>/stat) of the central, and of the agents
// and nats-server together. Part "monitor": BENCH_SITES (10000,20000,30000) tracked sites every
// BENCH_INTERVAL_S (60) on MySQL, each size run local then with agents for BENCH_RUN_S (120) s from
// the moment the central is ready (and counts an agent in every location): bench/monitor's rule, a
// due time is on time when its first request reaches the target within 5 s, and CPU per check
// started. Pinned (BENCH_PIN=1): the central on CPU 0; wrk, the target, the agents and nats-server
// on CPU 1 (MariaDB is the machine's and not pinned). BENCH_PARTS (check,monitor), BENCH_MYSQL_URL,
// BENCH_DOCS (1: rewrite this mode's figures in docs/benchmarks.md).
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
import { phaseOf } from '../dist/lib/monitoring/schedule/phase-wheel.js'
import { openDb } from '../dist/lib/store/db.js'
import { createKey } from '../dist/lib/store/keys.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { ask, freePort, median, scratchMysql, start, stop, writeFigures } from './processes.mjs'
import { cpuSeconds, runWrk, setCpus, wrkVersion } from './wrk.mjs'

const list = (name, dflt) => (process.env[name] ?? dflt).split(',').filter(Boolean)
const PIN = process.env.BENCH_PIN === '1'
const PARTS = list('BENCH_PARTS', 'check,monitor')
const CONNECTIONS = list('BENCH_CONNECTIONS', '1,8,64').map(Number)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 10)
const SITES = list('BENCH_SITES', '10000,20000,30000').map(Number)
const INTERVAL_S = Number(process.env.BENCH_INTERVAL_S ?? 60)
const RUN_S = Number(process.env.BENCH_RUN_S ?? 120)
const DOCS = (process.env.BENCH_DOCS ?? '1') === '1'
const ON_TIME_MS = 5000
const CLI = fileURLToPath(new URL('../dist/lib/cli/index.js', import.meta.url))
const LABELS = { fra1: 'Frankfurt 1, Germany', ams1: 'Amsterdam 1, Netherlands', sfo1: 'San Francisco 1, United States' }
const CENTRAL_CPU = PIN ? 0 : null
const AUX_CPU = PIN ? 1 : null
const MODES = ['local', 'agents']
// Pinned, this script's own process (mostly idle) keeps off the central's core too.
if (PIN) setCpus(process.pid, String(AUX_CPU))

// Every process this bench starts; ended at the end, and when it exits whatever stopped it (a failed start included).
const children = []
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
})

/** Spawns a command, on AUX_CPU when pinned; its output is read (a full pipe would stall it) and its tail kept. */
function spawnAux(cmd, args, env = {}) {
  const [file, argv] = AUX_CPU === null ? [cmd, args] : ['taskset', ['-c', String(AUX_CPU), cmd, ...args]]
  const child = spawn(file, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  children.push(child)
  let out = ''
  for (const s of [child.stdout, child.stderr])
    s.setEncoding('utf8').on('data', (d) => {
      out = (out + d).slice(-4000)
    })
  return { child, output: () => out }
}

const cpu = (pids) => pids.reduce((s, pid) => s + cpuSeconds(pid), 0)
const peakRssMb = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
const fmt = (n, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-'

// The target: answers 200 to every request, counts them, and notes when each tracked site's (sN.bench.test) arrive.
const target = spawnAux(process.execPath, [
  '-e',
  `
  let arrivals = new Map()
  let requests = 0
  const s = require('node:http').createServer((q, r) => {
    requests++
    const host = String(q.headers.host ?? '').replace(/:\\d+$/, '')
    if (/^s\\d+\\.bench\\.test$/.test(host)) {
      let l = arrivals.get(host)
      if (l === undefined) arrivals.set(host, (l = []))
      l.push(Date.now())
    }
    r.end('ok')
  })
  s.keepAliveTimeout = 0
  process.on('message', (m) => {
    if (m === 'arrivals') process.send({ arrivals: Object.fromEntries(arrivals), requests })
    else if (m === 'reset') { arrivals = new Map(); process.send({ requests }) }
  })
  s.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => process.send({ port: s.address().port }))
`
])
const targetPort = await new Promise((resolve) => target.child.once('message', (m) => resolve(m.port)))
const targetAsk = (m) => ask(target.child, m)
const closed = await freePort()
const CONNECT_TO = `:443:127.0.0.1:${closed},:80:127.0.0.1:${targetPort}`

// A private nats-server, ready once it greets a client.
const natsPort = await freePort()
const nats = spawnAux('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(natsPort)])
const NATS_URL = `nats://127.0.0.1:${natsPort}`
for (let i = 0; ; i++) {
  const greets = await new Promise((resolve) => {
    const s = net.connect(natsPort, '127.0.0.1')
    s.once('data', (d) => (s.destroy(), resolve(String(d).startsWith('INFO'))))
    s.once('error', () => resolve(false))
  })
  if (greets) break
  if (i > 50) throw new Error(`nats-server did not start: ${nats.output()}`)
  await sleep(100)
}

// One agent process per location, started as operators start them; ready when it logs "agent serving".
const agents = []
for (const location of Object.keys(LABELS)) {
  const env = { NATS_URL, ALLOW_PRIVATE_TARGETS: '1', CONNECT_TO, LOG_LEVEL: 'info', LOG_FORMAT: 'json', INSTANCE_ID: `bench-${location}` }
  const a = spawnAux(process.execPath, [CLI, 'agent', '--location', location], env)
  for (let i = 0; !a.output().includes('"agent serving"'); i++) {
    if (a.child.exitCode !== null || i > 300) throw new Error(`agent ${location} did not start: ${a.output()}`)
    await sleep(100)
  }
  agents.push(a)
}
const agentPids = [...agents.map((a) => a.child.pid), nats.child.pid]

/** The central (bench/monitor-sut.mjs: the built service answering 'stats'), local or with the agents; ready once every agent location counts one. */
async function startCentral(mode, env) {
  const locations =
    mode === 'agents' ? { LOCATIONS: JSON.stringify(Object.entries(LABELS).map(([agent, label]) => ({ label, agent }))), NATS_URL } : {}
  const sut = await start(
    './monitor-sut.mjs',
    { ALLOW_PRIVATE_TARGETS: '1', CONNECT_TO, PORT: '0', LOG_LEVEL: 'warn', ...locations, ...env },
    CENTRAL_CPU
  )
  children.push(sut.child)
  for (let i = 0; ; i++) {
    const health = await (await fetch(`${sut.uri}/healthz`)).json()
    if ((health.locations ?? []).every((l) => l.kind !== 'agent' || l.agents >= 1)) break
    if (i > 100) throw new Error(`agents not counted: ${JSON.stringify(health.locations)}`)
    await sleep(200)
  }
  return sut
}

const cleanups = []
const when = new Date().toISOString().replace(/:\d+\.\d+Z$/, 'Z')
const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)} at the start`
const out = [
  `Run ${when}, ${PIN ? 'pinned: the central on CPU 0; wrk, the target, the 3 agents and nats-server on CPU 1' : 'unpinned'}; ${machine}.`
]
console.error(`bench/agents: ${out[0]}`)

try {
  if (PARTS.includes('check')) out.push('', ...(await partCheck()))
  if (PARTS.includes('monitor')) out.push('', ...(await partMonitor()))
  out.push('', `Load average at the end: ${os.loadavg()[0].toFixed(1)}.`)
  const text = out.join('\n')
  console.log(text)
  if (DOCS) writeFigures('benchmarks.md', PIN ? 'bench/agents, pinned' : 'bench/agents', text)
} finally {
  for (const c of cleanups.reverse()) await c().catch(() => {})
  // Their pipes would keep this process waiting.
  for (const c of children) c.kill()
}

/** On-demand checks of new names through each central in turn: latency and CPU per check. */
async function partCheck() {
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-agents-'))
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }))
  const centrals = {}
  for (const mode of MODES) {
    const file = join(dir, `${mode}.sqlite`)
    const db = openDb(`sqlite:${file}`)
    await migrateLatest(db)
    const key = generateKey()
    await createKey({ db, name: 'bench', keyHash: hashKey(key), rateLimit: 1_000_000_000, now: new Date() })
    await db.destroy()
    const sut = await startCentral(mode, { DATABASE_URL: `sqlite:${file}` })
    cleanups.push(() => stop(sut.child))
    centrals[mode] = { ...sut, key }
  }
  let run = 0
  const once = async (mode, connections, seconds) => {
    const { uri, child, key } = centrals[mode]
    const prefix = `r${process.pid % 10000}x${++run}`
    const t0 = await targetAsk('reset')
    const c0 = [cpuSeconds(child.pid), cpu(agentPids)]
    const r = await runWrk({
      url: `${uri}/api/v1/check`,
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      script: `local n = 0\nfunction request() n = n + 1; return wrk.format(nil, nil, nil, '{"domain":"${prefix}-' .. n .. '.bench.test"}') end`,
      connections,
      seconds,
      cpu: AUX_CPU,
      timeoutS: 15
    })
    const t1 = await targetAsk('reset')
    const checks = r.requests - r.non2xx - r.socketErrors
    return {
      ...r,
      checks,
      centralUs: ((cpuSeconds(child.pid) - c0[0]) * 1e6) / checks,
      agentsUs: mode === 'agents' ? ((cpu(agentPids) - c0[1]) * 1e6) / checks : 0,
      targetPerCheck: (t1.requests - t0.requests) / checks,
      errors: r.non2xx + r.socketErrors
    }
  }
  const rows = []
  let least = Infinity
  for (const c of CONNECTIONS) {
    for (const mode of MODES) await once(mode, c, WARMUP_S)
    const got = { local: [], agents: [] }
    for (let i = 0; i < ROUNDS; i++) {
      for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) {
        const m = await once(mode, c, SECONDS)
        got[mode].push(m)
        least = Math.min(least, m.targetPerCheck)
        console.error(
          `  ${c} connections, ${mode}: ${fmt(m.rps)}/s, p50 ${fmt(m.p50Ms, 2)} ms, p99 ${fmt(m.p99Ms, 2)} ms, central ${fmt(m.centralUs)} µs a check, agents+NATS ${fmt(m.agentsUs)}, target requests a check ${fmt(m.targetPerCheck, 2)}, errors ${m.errors}`
        )
      }
    }
    const med = (mode, k) => median(got[mode].map((m) => m[k]))
    const both = (k, digits = 0) => MODES.map((mode) => fmt(med(mode, k), digits)).join(' / ')
    const errors = MODES.map((mode) => got[mode].reduce((n, m) => n + m.errors, 0)).join(' / ')
    rows.push(
      `| ${c} | ${both('rps')} | ${both('p50Ms', 2)} | ${both('p99Ms', 1)} | ${both('centralUs')} | ${fmt(med('agents', 'agentsUs'))} | ` +
        `${fmt(med('local', 'centralUs'))} / ${fmt(med('agents', 'centralUs') + med('agents', 'agentsUs'))} | ${errors} |`
    )
  }
  for (const mode of MODES) await stop(centrals[mode].child)
  return [
    `On-demand checks, a new name each (\`POST /api/v1/check\`), wrk ${wrkVersion()} 1 thread; medians of ${ROUNDS} rounds of ${SECONDS} s, local and agents taking turns; each figure local / agents. CPU µs a check: utime+stime of every thread.`,
    '',
    '| connections | checks/s | p50 ms | p99 ms | central CPU µs a check | agents + nats-server µs a check | total µs a check | errors |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `Requests at the target a check, the least of any round: ${fmt(least, 2)} (3: every location probed it).`
  ]
}

/** Tracked sites on MySQL, local then with agents at each size: on time at the target, and CPU per scheduled check. */
async function partMonitor() {
  const rows = []
  for (const sites of SITES) {
    const scratch = await scratchMysql(`bench_agents_${sites}`)
    const { db } = scratch
    try {
      await migrateLatest(db)
      for (let i = 0; i < sites; i += 1000) {
        const entries = Array.from({ length: Math.min(1000, sites - i) }, (_, j) => ({ domain: `s${i + j}.bench.test`, name: null }))
        await addSites({ db, now: new Date(), entries })
      }
      const got = {}
      for (const mode of MODES) {
        await db('sites').update({ due_at: null, lease_owner: null, lease_until: null })
        const sut = await startCentral(mode, { DATABASE_URL: scratch.url, CHECK_INTERVAL_S: String(INTERVAL_S) })
        await targetAsk('reset')
        const readyAt = Date.now()
        const s0 = await ask(sut.child, 'stats')
        const c0 = [cpuSeconds(sut.child.pid), cpu(agentPids)]
        const statuses0 = await db('checks').select('status').count({ n: '*' }).groupBy('status')
        await sleep(RUN_S * 1000)
        const s1 = await ask(sut.child, 'stats')
        const c1 = [cpuSeconds(sut.child.pid), cpu(agentPids)]
        const health = await (await fetch(`${sut.uri}/healthz`)).json()
        const endedAt = Date.now()
        const rss = peakRssMb(sut.child.pid)
        const { arrivals } = await targetAsk('arrivals')
        await stop(sut.child)
        const statuses1 = await db('checks').select('status').count({ n: '*' }).groupBy('status')
        const count = (rs, st) => Number(rs.find((r) => r.status === st)?.n ?? 0)
        const notUp = [...new Set(statuses1.map((r) => r.status))]
          .filter((st) => st !== 'up')
          .map((st) => `${count(statuses1, st) - count(statuses0, st)} ${st}`)
        const started = s1.scheduler.started - s0.scheduler.started
        const t = onTime({ arrivals, sites, readyAt, endedAt })
        const centralUs = ((c1[0] - c0[0]) * 1e6) / started
        const agentsUs = mode === 'agents' ? ((c1[1] - c0[1]) * 1e6) / started : 0
        const cores = (c1[0] - c0[0]) / ((endedAt - readyAt) / 1000)
        console.error(
          `  ${sites} sites, ${mode}: on time ${fmt(t.share * 100, 2)}% of ${t.due} (p99 ${t.p99} ms), started ${started}, central ${fmt(centralUs)} µs a check (${fmt(cores * 100)}% of a core), agents+NATS ${fmt(agentsUs)}, not up: ${notUp.join(', ') || 'none'}, schedule ${health.schedule}, peak RSS ${fmt(rss)} MB`
        )
        got[mode] = { ...t, schedule: health.schedule, centralUs, agentsUs, cores, rss, notUp: notUp.join(', ') || 'none' }
      }
      const both = (f) => MODES.map((mode) => f(got[mode])).join(' / ')
      rows.push(
        `| ${fmt(sites)} | ${both((g) => `${fmt(g.share * 100, 2)}%`)} of ${both((g) => fmt(g.due))} | ${both((g) => fmt(g.p99))} | ${both((g) => g.schedule)} | ` +
          `${both((g) => fmt(g.centralUs))} (${both((g) => `${fmt(g.cores * 100)}%`)}) | ${fmt(got.agents.agentsUs)} | ${both((g) => fmt(g.rss))} MB | ${both((g) => g.notUp)} |`
      )
    } finally {
      await scratch.drop()
    }
  }
  return [
    `Tracked sites x 3 locations every ${INTERVAL_S} s on MySQL, ${RUN_S} s each from the central's ready, local first; each figure local / agents. On time: the due time's first request reached the target within ${ON_TIME_MS / 1000} s (bench/monitor's rule); CPU µs a check started.`,
    '',
    '| sites | on time at the target | delay p99 ms | /healthz schedule | central CPU µs a check (share of a core) | agents + nats-server µs a check | central peak RSS | checks not up |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows
  ]
}

/** bench/monitor's rule: each due time with its full 5 s before the end, and the first request for it at the target. */
function onTime({ arrivals, sites, readyAt, endedAt }) {
  const intervalMs = INTERVAL_S * 1000
  const delays = []
  let due = 0
  for (let i = 0; i < sites; i++) {
    const domain = `s${i}.bench.test`
    const phase = phaseOf(domain, intervalMs)
    const times = arrivals[domain] ?? []
    for (let at = Math.ceil((readyAt - phase) / intervalMs) * intervalMs + phase; at + ON_TIME_MS <= endedAt; at += intervalMs) {
      due++
      const first = times.find((x) => x >= at - 1000 && x < at + intervalMs - 1000)
      if (first !== undefined) delays.push(first - at)
    }
  }
  delays.sort((a, b) => a - b)
  const share = due === 0 ? 0 : delays.filter((d) => d <= ON_TIME_MS).length / due
  return { due, share, p99: delays[Math.floor(0.99 * delays.length)] ?? NaN }
}
