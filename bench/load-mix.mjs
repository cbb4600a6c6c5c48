// bench/load-mix: 200 concurrent clients across 20 keys against the real service, mixing status,
// outages, checks and badges, ended by SIGTERM under that full load (issue 6, items 4 and 5).
// Loopback and an embedded SQLite file only.
//   flock /tmp/site-status-bench.lock npm run bench:load     (builds first; about 4 minutes)
// Knobs: BENCH_CLIENTS (200), BENCH_KEYS (20), BENCH_WARMUP_S (150), BENCH_RUN_S (60), BENCH_SITES (200),
// BENCH_CLIENT_RATE (5 requests/s per client), BENCH_DOCS (1: rewrite the figures in docs/reliability.md).
//
// The service is `site-status serve` from dist/, the process an operator runs, with
// bench/sut-stats.mjs preloaded to answer questions about its CPU, memory and event loop and to count
// the requests it reads and the answers it sends.
//
// Clients are paced loops on keep-alive connections: each waits a random gap (mean 1/RATE s)
// between requests, as API consumers polling do, so that 200 of them offer about 1,000 requests/s;
// ten clients share a key, so the tighter keys live at their limit. A 429 is honoured the way a client library
// shared by a key's clients would: all of them pause for Retry-After, then one retries the refused
// request alone, and that retry must get through. The target answers probes after 50 to 250 ms;
// ten of the tracked sites go down and up again every 15 s, so outages are being opened and closed
// all along. The checks made afterwards:
//   - no key admitted over its limit in any 60 s: each admitted request happened somewhere between
//     its send and its answer, so for every admitted request the requests certainly admitted in
//     the 60 s before it (answered before it was sent, sent after its answer minus 60 s) are summed
//     with their costs; that sum may never exceed the key's limit (no false alarms from latency);
//   - Retry-After honoured gets through: the share of those retries that were admitted;
//   - p50/p99 latency per route over the measured RUN_S seconds (status must stay under 50 ms at
//     p99 on these 2 cores);
//   - memory flat: the service's RSS sampled every 5 s. The measured window starts only after an
//     unmeasured warm-up under the full load that is long enough for every cache to reach its
//     steady state: the on-demand check cache keeps a result for CACHE_TTL_S (60 s) and purges
//     expired ones at most once a TTL, so it is full after two TTLs (120 s); the clients ramp up
//     over the first 10 s. Judged by the least-squares slope of RSS over the measured window and by
//     its highest sample against its first, each against a threshold stated below;
//   - SIGTERM with the full load still running, as the measured window ends: exit 0 within 10 s;
//     every request the server read was answered and the answer reached its client (the server's
//     own counts of requests read and answers sent equal the answers the clients received); every
//     request without an answer failed at the connection after SIGTERM; the stored rows are
//     whole and consistent (test/helpers/stored-rows.mjs, shared with the shutdown test).
import { fork, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Agent, request } from 'undici'
import { STOPPING_ERROR } from '../dist/lib/probing/locations/index.js'
import { outageStep } from '../dist/lib/rules/outages.js'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { openDb, toDate } from '../dist/lib/store/db.js'
import { createKey } from '../dist/lib/store/keys.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
import { readStoredRows, storedRowProblems } from '../test/helpers/stored-rows.mjs'
import { freePort, writeFigures } from './processes.mjs'

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 200)
const KEYS = Number(process.env.BENCH_KEYS ?? 20)
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 150)
const RUN_S = Number(process.env.BENCH_RUN_S ?? 60)
const SITES = Number(process.env.BENCH_SITES ?? 200)
/** Requests a client sends per second (paced, with random gaps): 1,000/s offered by 200 clients. */
const RATE = Number(process.env.BENCH_CLIENT_RATE ?? 5)
const DOCS = (process.env.BENCH_DOCS ?? '1') === '1'
const RAMP_S = 10
const SAMPLE_S = 5
/**
 * Memory is flat when RSS over the measured window rises by less than this per minute (least
 * squares over the 5 s samples; a leak of 5 MB/min is 300 MB an hour) ...
 */
const MAX_SLOPE_MB_PER_MIN = 5
/** ... and no sample of the window is more than this much above its first. */
const MAX_RISE = 0.1
/** The issue's bound on the stop. */
const EXIT_WITHIN_MS = 10_000
const FLAPPING = 10
const COST = { status: 1, outages: 1, check: 5, badge: 0 }
/** Per-key limits: a spread from tight to generous, so some keys live at their limit and some do not. */
const limitFor = (k) => [120, 600, 1200, 3000, 6000][k % 5]
/** Failures that mean the connection was refused or closed before the request was answered. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'EPIPE'])

const pct = (xs, p) => {
  if (xs.length === 0) return NaN
  const s = Float64Array.from(xs).sort()
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const MB = 1024 * 1024
const mb = (bytes) => (bytes / MB).toFixed(0)
const cpuNow = () => {
  const c = process.cpuUsage()
  return c.user + c.system
}
/** CPU share (100 = one core) of each sample, from consecutive readings of `field` in µs. */
const cpuShares = (samples, field) =>
  samples.slice(1).map((s, i) => (((s[field] - samples[i][field]) / 1e6 / (s.t - samples[i].t)) * 100).toFixed(0))
/** Least-squares slope of y over x. */
const slope = (pts) => {
  const n = pts.length
  const mx = pts.reduce((a, p) => a + p.x, 0) / n
  const my = pts.reduce((a, p) => a + p.y, 0) / n
  const sxy = pts.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0)
  const sxx = pts.reduce((a, p) => a + (p.x - mx) ** 2, 0)
  return sxy / sxx
}
const yes = (ok) => (ok ? 'met' : '**not met**')

// The target of every probe answers after 50 to 250 ms, as a site on the internet would (and so
// that checks are in flight when SIGTERM comes); s0 ... s9 answer 503 every other 15 s, the rest 200.
const target = spawn(
  process.execPath,
  [
    '-e',
    `
  const s = require('node:http').createServer((q, r) => {
    const host = String(q.headers.host || '').split(':')[0]
    const down = /^s[0-9]\\.bench\\.test$/.test(host) && Math.floor(Date.now() / 15000) % 2 === 1
    setTimeout(() => r.writeHead(down ? 503 : 200).end(down ? 'down' : 'ok'), 50 + Math.random() * 200)
  })
  s.listen(0, '127.0.0.1', () => console.log(s.address().port))
`
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] }
)
const targetPort = await new Promise((resolve) => target.stdout.once('data', (d) => resolve(Number(String(d).trim()))))
const dir = mkdtempSync(join(tmpdir(), 'bench-load-'))
const dbUrl = `sqlite:${join(dir, 'load.sqlite')}`
const countsFile = join(dir, 'sut-counts.json')
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
    keys.push({
      key,
      limit: limitFor(k),
      admitted: [],
      pausedUntil: 0,
      pauses: 0,
      retry: undefined,
      probing: false,
      firstAfterPause: { ok: 0, refused: 0, explained: 0 },
      refusals: 0
    })
  }
  await db.destroy()

  const port = await freePort()
  const env = {
    ...process.env,
    DATABASE_URL: dbUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${await freePort()},:80:127.0.0.1:${targetPort}`,
    CHECK_INTERVAL_S: '10',
    LOG_LEVEL: 'warn',
    BENCH_SUT_COUNTS: countsFile
  }
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : []
  sut = fork(new URL('../dist/lib/cli/index.js', import.meta.url), ['serve'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    execArgv: [`--import=${new URL('./sut-stats.mjs', import.meta.url).href}`, ...profile]
  })
  let logged = ''
  const keep = (d) => {
    if (logged.length < 100_000) logged += d
  }
  sut.stdout.setEncoding('utf8').on('data', keep)
  sut.stderr.setEncoding('utf8').on('data', keep)
  const exited = new Promise((resolve) => sut.once('exit', (code, signal) => resolve({ code, signal, at: performance.now() })))
  let gone = false
  exited.then(() => {
    gone = true
  })

  const origin = `http://127.0.0.1:${port}`
  // Every answer any request of this bench receives, to compare with the server's own count.
  let received = 0
  const startBy = performance.now() + 30_000
  for (;;) {
    if (gone || performance.now() > startBy) throw new Error(`the service did not start: ${logged.slice(0, 500)}`)
    try {
      const res = await request(`${origin}/healthz`)
      await res.body.dump()
      received++
      if (res.statusCode === 200) break
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  const ask = (msg) =>
    new Promise((resolve) => {
      sut.once('message', resolve)
      sut.send(msg)
    })
  const badgeAnswer = await request(`${origin}/api/badge/${domains[0]}`)
  await badgeAnswer.body.dump()
  received++
  const badges = badgeAnswer.statusCode === 200
  console.error(
    `bench/load-mix: ${CLIENTS} clients, ${KEYS} keys, ${WARMUP_S} s warm-up + ${RUN_S} s measured, then SIGTERM; ${SITES} tracked sites checked every 10 s; badges ${badges ? 'included' : 'not served by this build'}`
  )

  const agent = new Agent({ connections: CLIENTS, pipelining: 1 })
  const latency = { status: [], outages: [], check: [], badge: [] }
  const runStart = performance.now()
  const measureFrom = runStart + WARMUP_S * 1000
  const measureTo = measureFrom + RUN_S * 1000
  const counts = { status: 0, outages: 0, check: 0, badge: 0, refused: 0, other: 0 }
  /** Requests that got no answer: when they were sent and answered, and the failure's code. */
  const failures = []
  /** Every request's send and end, to find those in flight at SIGTERM. */
  const spans = []
  let sigtermAt = 0
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

  const samples = []
  const sampler = (async () => {
    while (!sigtermAt) {
      const s = await Promise.race([ask('stats'), exited.then(() => null)])
      if (!s) return
      samples.push({
        t: (performance.now() - runStart) / 1000,
        rss: s.rss,
        heap: s.heap,
        delay: s.delay,
        cpu: s.cpu.user + s.cpu.system,
        driver: cpuNow()
      })
      await sleep(SAMPLE_S * 1000)
    }
  })()

  /** Sends one request: true when admitted, false on a 429; throws when it got no answer. */
  const send = async (k, req) => {
    const keyed = req.route !== 'badge'
    const sent = performance.now()
    const span = { sent, done: 0, answered: false }
    spans.push(span)
    let res
    try {
      res = await request(origin + req.path, {
        dispatcher: agent,
        method: req.body ? 'POST' : 'GET',
        headers: { ...(keyed ? { authorization: `Bearer ${k.key}` } : {}), ...(req.body ? { 'content-type': 'application/json' } : {}) },
        body: req.body,
        headersTimeout: 30_000,
        bodyTimeout: 30_000
      })
      await res.body.dump()
    } catch (err) {
      span.done = performance.now()
      failures.push({ sent, done: span.done, code: err.code ?? err.cause?.code ?? String(err), answered: res !== undefined })
      throw err
    }
    const answered = performance.now()
    span.done = answered
    span.answered = true
    received++
    if (res.statusCode === 429) {
      counts.refused++
      k.refusals++
      k.pausedUntil = Math.max(k.pausedUntil, answered + Number(res.headers['retry-after']) * 1000)
      return false
    }
    if (res.statusCode >= 200 && res.statusCode < 300) {
      counts[req.route]++
      if (sent >= measureFrom && answered <= measureTo) latency[req.route].push(answered - sent)
    } else counts.other++
    if (keyed) k.admitted.push({ sent, answered, cost: COST[req.route] })
    return true
  }

  // SIGTERM with the full load running, as the measured window ends.
  const stopper = (async () => {
    await sleep(measureTo - performance.now())
    sigtermAt = performance.now()
    sut.kill('SIGTERM')
  })()

  // A key is open, paused (a 429 said how long) or probing: once the pause is over, one client
  // retries the very request that was refused, alone, and the others wait for its answer. After
  // SIGTERM a client keeps sending until a request of its gets no answer or the service is gone.
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      const k = keys[client % KEYS]
      await sleep((client * RAMP_S * 1000) / CLIENTS)
      while (!gone) {
        if (k.retry !== undefined) {
          const wait = k.pausedUntil - performance.now()
          if (k.probing || wait > 0) {
            await sleep(Math.max(5, Math.min(wait, 1000)))
            continue
          }
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
          } catch {
            if (sigtermAt) return
          } finally {
            k.probing = false
          }
          continue
        }
        const req = nextRequest(client)
        const started = performance.now()
        try {
          if (!(await send(k, req)) && k.retry === undefined) {
            k.retry = req
            k.pauses++
            k.pauseAt = performance.now()
          }
        } catch {
          if (sigtermAt) return
        }
        const gap = (-Math.log(1 - Math.random()) * 1000) / RATE
        await sleep(Math.max(0, gap - (performance.now() - started)))
      }
    })
  )
  await stopper
  const exit = await exited
  await sampler
  await agent.close()
  const exitMs = exit.at - sigtermAt
  const server = JSON.parse(readFileSync(countsFile, 'utf8'))

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
  const after = keys.reduce(
    (a, k) => ({
      ok: a.ok + k.firstAfterPause.ok,
      refused: a.refused + k.firstAfterPause.refused,
      explained: a.explained + k.firstAfterPause.explained
    }),
    { ok: 0, refused: 0, explained: 0 }
  )
  const pauses = keys.reduce((n, k) => n + k.pauses, 0)
  const fmt = (xs) => `${xs.length} ok, p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms`

  // Memory over the measured window.
  const warmS = (measureFrom - runStart) / 1000
  const measured = samples.filter((s) => s.t >= warmS - 0.5)
  const warming = samples.filter((s) => s.t < warmS - 0.5)
  const rssSlope = slope(measured.map((s) => ({ x: s.t / 60, y: s.rss / MB })))
  const heapSlope = slope(measured.map((s) => ({ x: s.t / 60, y: s.heap / MB })))
  const first = measured[0]?.rss ?? NaN
  const most = Math.max(...measured.map((s) => s.rss))
  const rise = (most - first) / first
  const memoryFlat = measured.length >= 10 && rssSlope < MAX_SLOPE_MB_PER_MIN && rise <= MAX_RISE

  // Shutdown.
  const beforeTerm = failures.filter((f) => f.sent < sigtermAt)
  const inFlight = spans.filter((s) => s.sent < sigtermAt && (s.done === 0 || s.done > sigtermAt))
  const afterTerm = spans.filter((s) => s.sent >= sigtermAt)
  const byCode = {}
  for (const f of failures) byCode[f.code] = (byCode[f.code] ?? 0) + 1
  const codes =
    Object.entries(byCode)
      .map(([c, n]) => `${n} ${c}`)
      .join(', ') || 'none'
  const failuresOk = failures.every((f) => f.done >= sigtermAt && !f.answered && CONNECTION_ERRORS.has(f.code))
  // A request sent on an idle keep-alive connection just as the stop closes it arrives at a
  // closed socket, and the kernel answers with a reset: the server never read it (its counts show
  // that), as with a refused connection. A reset of a request that was in flight at SIGTERM would be
  // an answer lost.
  const resets = failures.filter((f) => f.code === 'ECONNRESET')
  const inFlightResets = resets.filter((f) => f.sent < sigtermAt).length
  const allAnswered = server.requests === server.responses && server.responses === received
  const stopNoise = /stop did not finish|stop failed|checks not recorded at stop/.test(logged)
  const rdb = openDb(dbUrl)
  const rows = await readStoredRows(rdb, toDate)
  await rdb.destroy()
  const problems = storedRowProblems(rows, outageStep)
  const cut = rows.checks.filter((c) => c.locations.includes(STOPPING_ERROR)).length
  const shutdownOk =
    exit.code === 0 &&
    exitMs < EXIT_WITHIN_MS &&
    allAnswered &&
    failuresOk &&
    beforeTerm.length === 0 &&
    problems.length === 0 &&
    cut === 0 &&
    !stopNoise &&
    inFlightResets === 0

  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const setting =
    `${CLIENTS} clients at ${RATE} requests/s each across ${KEYS} keys (limits ${[...new Set(keys.map((k) => k.limit))].join(', ')} units/min), ` +
    `${SITES} tracked sites (${FLAPPING} of them down every other 15 s) checked every 10 s, every probe answered after 50–250 ms, SQLite, \`site-status serve\` from dist/ on Node ${process.version}; ` +
    "load generator and service share the machine's 2 cores"
  const load = [
    `Run ${when}: ${setting}. ${WARMUP_S} s of unmeasured warm-up under the full load (clients ramp up over the first ${RAMP_S} s; ` +
      `the check cache fills for two ${60} s TTLs), then ${RUN_S} s measured, then SIGTERM (section 5). ` +
      'Latencies and memory over the measured window; limits and retries over the whole run.',
    '',
    '| measurement | figure | goal |',
    '|---|---|---|',
    `| status | ${fmt(latency.status)} | p99 < 50 ms |`,
    `| outages | ${fmt(latency.outages)} | |`,
    `| check (cost 5) | ${fmt(latency.check)} | |`,
    `| badge (no key) | ${badges ? fmt(latency.badge) : 'not served by this build'} | |`,
    `| 429 answers | ${counts.refused} | |`,
    `| other non-2xx, transport errors before SIGTERM | ${counts.other}, ${beforeTerm.length} | 0, 0 |`,
    `| admissions over a key's limit in any 60 s | ${violations} (fullest window: ${(worstShare * 100).toFixed(1)}% of the limit) | 0 |`,
    `| retry after honouring Retry-After | ${after.ok} admitted, ${after.refused} refused (${after.explained} of them after a request already in flight took the units), over ${pauses} pauses | every refusal explained |`,
    `| service RSS during the warm-up, every ${SAMPLE_S} s | ${warming.map((s) => mb(s.rss)).join(' → ')} MB | |`,
    `| service RSS over the measured ${RUN_S} s, every ${SAMPLE_S} s | ${measured.map((s) => mb(s.rss)).join(' → ')} MB | |`,
    `| RSS slope over the measured ${RUN_S} s (least squares) | ${rssSlope >= 0 ? '+' : ''}${rssSlope.toFixed(1)} MB/min | < ${MAX_SLOPE_MB_PER_MIN} MB/min |`,
    `| RSS first → highest over the measured ${RUN_S} s | ${mb(first)} → ${mb(most)} MB (+${(rise * 100).toFixed(1)}%) | ≤ ${MAX_RISE * 100}% |`,
    `| main-thread V8 heap used over the measured ${RUN_S} s | ${measured.map((s) => mb(s.heap)).join(' → ')} MB (slope ${heapSlope >= 0 ? '+' : ''}${heapSlope.toFixed(1)} MB/min) | |`,
    `| memory flat | ${yes(memoryFlat)} | both thresholds |`,
    `| service CPU per ${SAMPLE_S} s, measured (100% = one core) | ${cpuShares(measured, 'cpu').join(', ')}% | |`,
    `| load generator CPU per ${SAMPLE_S} s, measured | ${cpuShares(measured, 'driver').join(', ')}% | |`,
    `| service event-loop delay p99 / max per ${SAMPLE_S} s, measured | ${measured
      .slice(1)
      .map((s) => `${s.delay.p99.toFixed(0)}/${s.delay.max.toFixed(0)}`)
      .join(', ')} ms | |`
  ].join('\n')
  const stop = [
    `Run ${when}, the end of the bench/load-mix run of section 4: ${setting}. SIGTERM ${((sigtermAt - runStart) / 1000).toFixed(0)} s into the run, with every client still sending.`,
    '',
    '| measurement | figure | goal |',
    '|---|---|---|',
    `| exit code | ${exit.code ?? `signal ${exit.signal}`} | 0 |`,
    `| time from SIGTERM to exit | ${(exitMs / 1000).toFixed(2)} s | < 10 s |`,
    `| requests in flight at SIGTERM | ${inFlight.length}, of which ${inFlight.filter((s) => s.answered).length} answered | the others unread by the server (next row) |`,
    `| requests sent after SIGTERM | ${afterTerm.length}, of which ${afterTerm.filter((s) => s.answered).length} answered | |`,
    `| requests the server read / answers it sent / answers the clients received (whole run) | ${server.requests} / ${server.responses} / ${received} | all equal |`,
    `| requests without an answer | ${codes}; ${failures.filter((f) => f.sent < sigtermAt).length} of them sent before SIGTERM | only refused or closed connections, after SIGTERM |`,
    `| resets (ECONNRESET) of requests in flight at SIGTERM / sent after it on a connection being closed | ${inFlightResets} / ${resets.length - inFlightResets} | 0 / unread by the server |`,
    `| stop logged as cut or failed | ${stopNoise ? 'yes' : 'no'} | no |`,
    `| stored rows | ${rows.checks.length} checks, ${rows.outages.length} outages, ${rows.sites.length} sites | |`,
    `| rows not whole or inconsistent (site row = newest check, outages = replay of the checks, open_site_id) | ${problems.length}${problems.length ? `: ${problems.slice(0, 3).join('; ')}` : ''} | 0 |`,
    `| checks cut short by the stop and recorded | ${cut} | 0 |`,
    `| shutdown under load | ${yes(shutdownOk)} | all of the above |`
  ].join('\n')
  console.log(`${load}\n\n${stop}`)
  if (DOCS) {
    writeFigures('reliability.md', 'bench/load-mix', load)
    writeFigures('reliability.md', 'bench/load-mix shutdown', stop)
  }
  if (!memoryFlat || !shutdownOk) process.exitCode = 1
} finally {
  if (sut && sut.exitCode === null && sut.signalCode === null) sut.kill('SIGKILL')
  target.kill()
  rmSync(dir, { recursive: true, force: true })
}
