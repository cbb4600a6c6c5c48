// bench/load-mix: 200 concurrent clients across 20 keys for 60 s against the real service, mixing
// status, outages, checks and badges (issue 6, item 4). Loopback and an embedded SQLite file only.
//   npm run bench:load          (builds first; about 90 s)
// Knobs: BENCH_CLIENTS (200), BENCH_KEYS (20), BENCH_RUN_S (60), BENCH_SITES (200),
// BENCH_CLIENT_RATE (5 requests/s per client), BENCH_DOCS (1: rewrite the figures in docs/reliability.md).
//
// Clients are paced loops on keep-alive connections: each waits a random gap (mean 1/RATE s)
// between requests, as API consumers polling do, so that 200 of them offer about 1,000 requests/s;
// ten clients share a key, so the tighter keys live at their limit. A 429 is honoured the way a client library
// shared by a key's clients would: all of them pause for Retry-After, then one retries the refused
// request alone, and that retry must get through. The checks made afterwards:
//   - no key admitted over its limit in any 60 s: each admitted request happened somewhere between
//     its send and its answer, so for every admitted request the requests certainly admitted in
//     the 60 s before it (answered before it was sent, sent after its answer minus 60 s) are summed
//     with their costs; that sum may never exceed the key's limit (no false alarms from latency);
//   - Retry-After honoured gets through: the share of those retries that were admitted;
//   - p50/p99 latency per route over the measured RUN_S seconds (status must stay under 50 ms at
//     p99 on these 2 cores); the clients start one by one over the first 10 s of a 15 s warm-up
//     that is not measured (cold JIT on both sides), as load tools ramp up;
//   - memory flat: the service's RSS sampled every 5 s; growth over the measured part.
import { fork, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Agent, request } from 'undici'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { openDb } from '../dist/lib/store/db.js'
import { createKey } from '../dist/lib/store/keys.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { addSites } from '../dist/lib/store/sites.js'
import { freePort, writeFigures } from './processes.mjs'

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 200)
const KEYS = Number(process.env.BENCH_KEYS ?? 20)
const RUN_S = Number(process.env.BENCH_RUN_S ?? 60)
const SITES = Number(process.env.BENCH_SITES ?? 200)
/** Requests a client sends per second (paced, with random gaps): 1,000/s offered by 200 clients. */
const RATE = Number(process.env.BENCH_CLIENT_RATE ?? 5)
const DOCS = (process.env.BENCH_DOCS ?? '1') === '1'
const WARMUP_S = 15
const RAMP_S = 10
const COST = { status: 1, outages: 1, check: 5, badge: 0 }
/** Per-key limits: a spread from tight to generous, so some keys live at their limit and some do not. */
const limitFor = (k) => [120, 600, 1200, 3000, 6000][k % 5]

const pct = (xs, p) => {
  if (xs.length === 0) return NaN
  const s = Float64Array.from(xs).sort()
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(0)
const cpuNow = () => { const c = process.cpuUsage(); return c.user + c.system }
/** CPU share (100 = one core) of each 5 s sample, from consecutive readings of `field` in µs. */
const cpuShares = (samples, field) => samples.slice(1).map((s, i) => (((s[field] - samples[i][field]) / 1e6) / (s.t - samples[i].t) * 100).toFixed(0))

const target = spawn(process.execPath, ['-e', `
  const s = require('node:http').createServer((q, r) => r.end('ok'))
  s.listen(0, '127.0.0.1', () => console.log(s.address().port))
`], { stdio: ['ignore', 'pipe', 'inherit'] })
const targetPort = await new Promise((resolve) => target.stdout.once('data', (d) => resolve(Number(String(d).trim()))))
const dir = mkdtempSync(join(tmpdir(), 'bench-load-'))
const dbUrl = `sqlite:${join(dir, 'load.sqlite')}`
let sut
try {
  const db = openDb(dbUrl)
  await migrateLatest(db)
  const now = new Date()
  const domains = Array.from({ length: SITES }, (_, i) => `s${i}.bench.test`)
  await addSites({ db, now, entries: domains.map((domain) => ({ domain, name: null })) })
  const keys = []
  for (let k = 0; k < KEYS; k++) {
    const key = generateKey()
    await createKey({ db, name: `load-${k}`, keyHash: hashKey(key), rateLimit: limitFor(k), now })
    keys.push({ key, limit: limitFor(k), admitted: [], pausedUntil: 0, pauses: 0, retry: undefined, probing: false, firstAfterPause: { ok: 0, refused: 0, explained: 0 }, refusals: 0 })
  }
  await db.destroy()

  const env = {
    ...process.env,
    DATABASE_URL: dbUrl,
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${await freePort()},:80:127.0.0.1:${targetPort}`,
    CHECK_INTERVAL_S: '10',
    LOG_LEVEL: 'warn'
  }
  sut = fork(new URL('./monitor-sut.mjs', import.meta.url), [], { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'], execArgv: process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [] })
  const origin = await new Promise((resolve, reject) => {
    sut.once('message', (m) => resolve(m.ready))
    sut.once('exit', (code) => reject(new Error(`service exited with ${code}`)))
  })
  const ask = (msg) => new Promise((resolve) => { sut.once('message', resolve); sut.send(msg) })
  const badgeAnswer = await request(`${origin}/api/badge/${domains[0]}`)
  await badgeAnswer.body.dump()
  const badges = badgeAnswer.statusCode === 200
  console.error(`bench/load-mix: ${CLIENTS} clients, ${KEYS} keys, ${RUN_S} s, ${SITES} tracked sites checked every 10 s; badges ${badges ? 'included' : 'not served by this build'}`)

  const agent = new Agent({ connections: CLIENTS, pipelining: 1 })
  const latency = { status: [], outages: [], check: [], badge: [] }
  const runStart = performance.now()
  const counts = { status: 0, outages: 0, check: 0, badge: 0, refused: 0, other: 0, errors: 0 }
  let seq = 0
  const pick = (xs) => xs[Math.floor(Math.random() * xs.length)]
  const nextRequest = (client) => {
    const r = Math.random()
    if (badges && r < 0.2) return { route: 'badge', path: `/api/badge/${pick(domains)}` }
    if (r < 0.65) return { route: 'status', path: `/api/v1/status/${pick(domains)}` }
    if (r < 0.85) return { route: 'outages', path: `/api/v1/outages?limit=${1 + (seq % 50)}` }
    // A third of the checks ask for a name checked moments ago (a cache hit), the rest are new.
    const name = Math.random() < 0.33 ? `c${client % 20}.bench.test` : `c${seq++}.bench.test`
    return { route: 'check', path: '/api/v1/check', body: JSON.stringify({ domain: name }) }
  }

  const rss = []
  const sampler = (async () => {
    const t0 = performance.now()
    while (performance.now() - t0 < (WARMUP_S + RUN_S) * 1000) {
      const s = await ask('stats')
      rss.push({ t: (performance.now() - t0) / 1000, rss: s.rss, delay: s.delay, cpu: s.cpu.user + s.cpu.system, driver: cpuNow() })
      await sleep(5000)
    }
  })()

  const send = async (k, req) => {
    const keyed = req.route !== 'badge'
    const sent = performance.now()
    const res = await request(origin + req.path, {
      dispatcher: agent,
      method: req.body ? 'POST' : 'GET',
      headers: { ...(keyed ? { authorization: `Bearer ${k.key}` } : {}), ...(req.body ? { 'content-type': 'application/json' } : {}) },
      body: req.body,
      headersTimeout: 30_000,
      bodyTimeout: 30_000
    })
    await res.body.dump()
    const answered = performance.now()
    if (res.statusCode === 429) {
      counts.refused++
      k.refusals++
      k.pausedUntil = Math.max(k.pausedUntil, answered + Number(res.headers['retry-after']) * 1000)
      return false
    }
    if (res.statusCode >= 200 && res.statusCode < 300) {
      counts[req.route]++
      if (sent - runStart > WARMUP_S * 1000) latency[req.route].push(answered - sent)
    } else counts.other++
    if (keyed) k.admitted.push({ sent, answered, cost: COST[req.route] })
    return true
  }

  // A key is open, paused (a 429 said how long) or probing: once the pause is over, one client
  // retries the very request that was refused, alone, and the others wait for its answer.
  const end = runStart + (WARMUP_S + RUN_S) * 1000
  await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
    const k = keys[client % KEYS]
    await sleep((client * RAMP_S * 1000) / CLIENTS)
    while (performance.now() < end) {
      if (k.retry !== undefined) {
        const wait = k.pausedUntil - performance.now()
        if (k.probing || wait > 0) { await sleep(Math.max(5, wait)); continue }
        k.probing = true
        try {
          const ok = await send(k, k.retry)
          if (ok) {
            k.firstAfterPause.ok++
            k.retry = undefined
          } else {
            k.firstAfterPause.refused++
            // Requests already in flight when the pause began may be admitted after it (a cheap
            // status where a check was refused) and take the units the retry was waiting for.
            if (k.admitted.some((a) => a.answered > k.pauseAt)) k.firstAfterPause.explained++
            k.pauseAt = performance.now()
          }
        } catch { counts.errors++ } finally { k.probing = false }
        continue
      }
      const req = nextRequest(client)
      const started = performance.now()
      try {
        if (!(await send(k, req)) && k.retry === undefined) { k.retry = req; k.pauses++; k.pauseAt = performance.now() }
      } catch { counts.errors++ }
      const gap = (-Math.log(1 - Math.random()) * 1000) / RATE
      await sleep(Math.max(0, gap - (performance.now() - started)))
    }
  }))
  await sampler
  await agent.close()

  // Over-limit check, sound under latency: see the header comment.
  let worstShare = 0
  let violations = 0
  for (const k of keys) {
    const xs = k.admitted.sort((a, b) => a.sent - b.sent)
    for (let i = 0; i < xs.length; i++) {
      const me = xs[i]
      let sum = me.cost
      for (let j = i - 1; j >= 0 && xs[j].sent > me.answered - 60_000; j--) {
        if (xs[j].answered <= me.sent) sum += xs[j].cost
      }
      worstShare = Math.max(worstShare, sum / k.limit)
      if (sum > k.limit) violations++
    }
  }
  const after = keys.reduce((a, k) => ({ ok: a.ok + k.firstAfterPause.ok, refused: a.refused + k.firstAfterPause.refused, explained: a.explained + k.firstAfterPause.explained }), { ok: 0, refused: 0, explained: 0 })
  const pauses = keys.reduce((n, k) => n + k.pauses, 0)
  const warm = rss.filter((s) => s.t >= WARMUP_S)
  const growth = warm.length >= 2 ? (warm[warm.length - 1].rss - warm[0].rss) / warm[0].rss : NaN
  const fmt = (xs) => `${xs.length} ok, p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms`

  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const out = [
    `Run ${when}: ${CLIENTS} clients at ${RATE} requests/s each across ${KEYS} keys (limits ${[...new Set(keys.map((k) => k.limit))].join(', ')} units/min), ${RUN_S} s, ` +
      `${SITES} tracked sites checked every 10 s, SQLite, Node ${process.version}; load generator and service share the machine's 2 cores. ` +
      `Latencies over the ${RUN_S} s after a ${WARMUP_S} s warm-up; limits and retries over the whole run.`,
    '',
    '| measurement | figure | goal |',
    '|---|---|---|',
    `| status | ${fmt(latency.status)} | p99 < 50 ms |`,
    `| outages | ${fmt(latency.outages)} | |`,
    `| check (cost 5) | ${fmt(latency.check)} | |`,
    `| badge (no key) | ${badges ? fmt(latency.badge) : 'not served by this build'} | |`,
    `| 429 answers | ${counts.refused} | |`,
    `| other non-2xx, transport errors | ${counts.other}, ${counts.errors} | 0, 0 |`,
    `| admissions over a key's limit in any 60 s | ${violations} (fullest window: ${(worstShare * 100).toFixed(1)}% of the limit) | 0 |`,
    `| retry after honouring Retry-After | ${after.ok} admitted, ${after.refused} refused (${after.explained} of them after a request already in flight took the units), over ${pauses} pauses | every refusal explained |`,
    `| service RSS | ${rss.map((s) => mb(s.rss)).join(' → ')} MB | flat |`,
    `| service CPU per 5 s (100% = one core) | ${cpuShares(rss, 'cpu').join(', ')}% | |`,
    `| load generator CPU per 5 s | ${cpuShares(rss, 'driver').join(', ')}% | |`,
    `| service event-loop delay p99 / max per 5 s | ${rss.slice(1).map((s) => `${s.delay.p99.toFixed(0)}/${s.delay.max.toFixed(0)}`).join(', ')} ms | |`,
    `| RSS growth over the measured ${RUN_S} s | ${(growth * 100).toFixed(1)}% | ~0 |`
  ].join('\n')
  console.log(out)
  if (DOCS) writeFigures('reliability.md', 'bench/load-mix', out)
} finally {
  if (sut && sut.exitCode === null) {
    const gone = new Promise((resolve) => sut.once('exit', resolve))
    sut.send('stop')
    await Promise.race([gone, sleep(15_000)])
  }
  target.kill()
  rmSync(dir, { recursive: true, force: true })
}
