#!/usr/bin/env node
/**
 * bench/check, batch scenario: 1,000 distinct domains checked by one key through the typed client
 * (dist/lib/client), as 10 batches of 100 (`checkMany`, NDJSON, the 10 at once) and as 1,000 single
 * checks (`checkDomain`) at the client's best concurrency, in alternating rounds of one run against
 * one service. Reports domains per second (first request sent to last answer read) and the service's
 * CPU per domain (its process: main thread and actor threads). Loopback only.
 *
 *   npm run bench:batch      (= npm run build, then this script unpinned and again with BENCH_PIN=1)
 *
 * Knobs: BENCH_ROUNDS (5 of each), BENCH_DOMAINS (1000), BENCH_BATCH (100), BENCH_SINGLE_CONCURRENCY
 * (candidates, default "16,64,256,512": each is tried once on 1,000 domains and the best one is measured),
 * BENCH_PIN (1: the service on CPU 0; the target and this driver on CPU 1), BENCH_DOCS (1: rewrite
 * this mode's table in docs/benchmarks.md).
 *
 * Processes: this driver (the client); the target (200 at once, a child); the real `site-status
 * serve` with bench/sut-stats.mjs preloaded (CPU and memory over IPC), on SQLite with no tracked site.
 */
import { spawn, fork } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort, median, pin, writeFigures } from './processes.mjs'
import { SiteStatusClient } from '../dist/lib/client/index.js'
import { openDb } from '../dist/lib/store/db.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { createKey } from '../dist/lib/store/keys.js'
import { generateKey, hashKey } from '../dist/lib/keys.js'

const num = (name, dflt) => (process.env[name] ? Number(process.env[name]) : dflt)
const ROUNDS = num('BENCH_ROUNDS', 5)
const DOMAINS = num('BENCH_DOMAINS', 1000)
const BATCH = num('BENCH_BATCH', 100)
const CANDIDATES = (process.env.BENCH_SINGLE_CONCURRENCY ?? '16,64,256,512').split(',').map(Number)
const BATCH_CANDIDATES = (process.env.BENCH_BATCH_CONCURRENCY ?? '1,2,5,10').split(',').map(Number)
const PIN = num('BENCH_PIN', 0) === 1
const DOCS = num('BENCH_DOCS', 1) === 1

if (PIN) pin(process.pid, 1)
const target = spawn(
  process.execPath,
  [
    '-e',
    `const s = require('node:http').createServer((q, r) => r.end('ok'));
     s.keepAliveTimeout = 1000; s.listen(0, '127.0.0.1', 4096, () => console.log(s.address().port))`
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] }
)
if (PIN) pin(target.pid, 1)
const targetPort = await new Promise((resolve) => target.stdout.once('data', (d) => resolve(Number(String(d).trim()))))

const dir = mkdtempSync(join(os.tmpdir(), 'bench-batch-'))
const dbUrl = `sqlite:${join(dir, 'batch.sqlite')}`
const db = openDb(dbUrl)
await migrateLatest(db)
const key = generateKey()
await createKey({ db, name: 'bench', keyHash: hashKey(key), rateLimit: 1_000_000_000, now: new Date() })
await db.destroy()

const port = await freePort()
const sut = fork(new URL('../dist/lib/cli/index.js', import.meta.url), ['serve'], {
  env: {
    ...process.env,
    DATABASE_URL: dbUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${await freePort()},:80:127.0.0.1:${targetPort}`,
    LOG_LEVEL: 'warn'
  },
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  execArgv: [
    `--import=${new URL('./sut-stats.mjs', import.meta.url).href}`,
    ...(process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [])
  ]
})
if (PIN) pin(sut.pid, 0)
const stats = () =>
  new Promise((resolve) => {
    sut.once('message', resolve)
    sut.send('stats')
  })
const client = new SiteStatusClient({ baseUrl: `http://127.0.0.1:${port}`, key })
for (let tries = 0; ; tries++) {
  try {
    await client.health()
    break
  } catch (err) {
    if (tries > 300) throw err
    await sleep(100)
  }
}
// Actors answer once their threads have started: one check makes sure they have.
await client.checkDomain('warm.bench.test')

let run = 0
const names = (mode) => {
  run++
  return Array.from({ length: DOMAINS }, (_, i) => `r${run}-${mode}-${i}.bench.test`)
}

const TICK_US = 1e6 / 100

/** The service's CPU by thread, in µs: its main thread, and the rest (actors, libuv's pool). Linux only. */
function threadCpu() {
  const dir = `/proc/${sut.pid}/task`
  const cpu = { main: 0, other: 0 }
  if (!existsSync(dir)) return cpu
  for (const tid of readdirSync(dir)) {
    let stat
    try {
      stat = readFileSync(`${dir}/${tid}/stat`, 'utf8')
    } catch {
      continue // a thread that ended meanwhile
    }
    // utime and stime, the 14th and 15th fields, after the command name in parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const us = (Number(fields[11]) + Number(fields[12])) * TICK_US
    if (Number(tid) === sut.pid) cpu.main += us
    else cpu.other += us
  }
  return cpu
}

/** A process's whole CPU in µs (0 where /proc is missing). */
function processCpu(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * TICK_US
  } catch {
    return 0
  }
}

/** Runs `work`: domains per second, and the CPU µs per domain of the service (all, main thread, others) and of this client. */
async function measure(work) {
  const threads = threadCpu()
  const targetBefore = processCpu(target.pid)
  const before = await stats()
  const mine = process.cpuUsage()
  const start = performance.now()
  const checked = await work()
  const seconds = (performance.now() - start) / 1000
  const spent = process.cpuUsage(mine)
  const after = await stats()
  const threadsAfter = threadCpu()
  const targetSpent = processCpu(target.pid) - targetBefore
  const cpu = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system
  if (checked !== DOMAINS) throw new Error(`${checked} of ${DOMAINS} domains answered up`)
  return {
    rate: DOMAINS / seconds,
    cpuPerDomain: cpu / DOMAINS,
    mainPerDomain: (threadsAfter.main - threads.main) / DOMAINS,
    otherPerDomain: (threadsAfter.other - threads.other) / DOMAINS,
    clientPerDomain: (spent.user + spent.system) / DOMAINS,
    targetPerDomain: targetSpent / DOMAINS,
    rss: after.rss
  }
}

/** The domains as batches of BATCH, `concurrency` batches in flight at a time. */
async function batches(concurrency) {
  const domains = names('b')
  const parts = []
  for (let i = 0; i < domains.length; i += BATCH) parts.push(domains.slice(i, i + BATCH))
  let up = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let part = parts.shift(); part !== undefined; part = parts.shift()) {
        for await (const line of client.checkMany(part)) if (line.status === 'up') up++
      }
    })
  )
  return up
}

async function singles(concurrency) {
  const domains = names('s')
  let next = 0
  let up = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < domains.length) {
        const domain = domains[next++]
        if ((await client.checkDomain(domain)).status === 'up') up++
      }
    })
  )
  return up
}

// Warm both paths once, then find each one's best concurrency.
await measure(() => batches(BATCH_CANDIDATES.at(-1)))
await measure(() => singles(CANDIDATES.at(-1)))
const calibrate = async (candidates, work) => {
  const tried = []
  for (const c of candidates) tried.push({ c, ...(await measure(() => work(c))) })
  return { tried, best: tried.reduce((a, b) => (b.rate > a.rate ? b : a)).c }
}
const single = await calibrate(CANDIDATES, singles)
const batch = await calibrate(BATCH_CANDIDATES, batches)
const said = ({ tried }) => tried.map((x) => `${x.c} (${x.rate.toFixed(0)}/s)`).join(', ')
console.error(`concurrency: singles ${said(single)}; batches ${said(batch)}`)

const rows = { batch: [], single: [] }
for (let r = 0; r < ROUNDS; r++) {
  rows.batch.push(await measure(() => batches(batch.best)))
  rows.single.push(await measure(() => singles(single.best)))
  console.error(`round ${r + 1}: batch ${rows.batch.at(-1).rate.toFixed(0)}/s, singles ${rows.single.at(-1).rate.toFixed(0)}/s`)
}
sut.kill('SIGTERM')
target.kill()
await new Promise((resolve) => sut.once('exit', resolve))
rmSync(dir, { recursive: true, force: true })

const m = (mode, field) => median(rows[mode].map((x) => x[field]))
const ratio = m('batch', 'rate') / m('single', 'rate')
const cpuOf = (mode) => m(mode, 'cpuPerDomain') + m(mode, 'clientPerDomain') + m(mode, 'targetPerDomain')
const lines = [
  `${DOMAINS.toLocaleString('en')} distinct domains, one key, typed client; median of ${ROUNDS} alternating rounds; ${PIN ? 'service pinned to CPU 0, target and client to CPU 1' : 'unpinned'}; ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()})`,
  '',
  '| how | domains/s | service CPU / domain (main thread, others) | client CPU / domain | rounds (domains/s) |',
  '|---|---|---|---|---|',
  `| ${DOMAINS / BATCH} batches of ${BATCH} (\`checkMany\`, ${batch.best} at once) | ${m('batch', 'rate').toFixed(0)} | ${m('batch', 'cpuPerDomain').toFixed(0)} µs (${m('batch', 'mainPerDomain').toFixed(0)}, ${m('batch', 'otherPerDomain').toFixed(0)}) | ${m('batch', 'clientPerDomain').toFixed(0)} µs | ${rows.batch.map((x) => x.rate.toFixed(0)).join(', ')} |`,
  `| ${DOMAINS} single checks (\`checkDomain\`, ${single.best} at once) | ${m('single', 'rate').toFixed(0)} | ${m('single', 'cpuPerDomain').toFixed(0)} µs (${m('single', 'mainPerDomain').toFixed(0)}, ${m('single', 'otherPerDomain').toFixed(0)}) | ${m('single', 'clientPerDomain').toFixed(0)} µs | ${rows.single.map((x) => x.rate.toFixed(0)).join(', ')} |`,
  '',
  `Batch / singles: **${ratio.toFixed(2)}x** domains per second. All CPU a domain costs (service, client, target: ${cpuOf('batch').toFixed(0)} µs batched, ${cpuOf('single').toFixed(0)} µs single) puts the ratio at ${(cpuOf('single') / cpuOf('batch')).toFixed(2)}x where both ways keep every core busy. Concurrency tried, once each: singles ${said(single)}; batches ${said(batch)}.`
]
console.log(lines.join('\n'))
if (DOCS) writeFigures('benchmarks.md', PIN ? 'bench/check batch, pinned' : 'bench/check batch', lines.join('\n'))
