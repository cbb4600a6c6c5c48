// bench/heartbeats: two figures of heartbeat monitors on MySQL.
// 1. Ping throughput: `GET /ping/<token>` on the real service (dist build), every answer `OK` only
//    once its transaction has committed, against bare hapi answering `OK` from memory, in the same
//    run, driven by wrk (bench/wrk.mjs), pinned: servers on CPU 0 (taking turns), wrk on CPU 1 (MySQL
//    is not pinned). Goal: at least 0.25x bare hapi. The service's ping limits (120 a minute per
//    token, 12,000 per client address) are kept: wrk spreads its pings over BENCH_TOKENS heartbeats
//    and 1,000 client addresses, given by `X-Forwarded-For` from a trusted proxy (TRUSTED_PROXIES).
// 2. Overdue detection: BENCH_HEARTBEATS heartbeats (every 30 s, grace 5 s) whose grace ends spread
//    over BENCH_SPREAD_S seconds (0: all at once), on a service sweeping as it does in production;
//    a reader polls every 100 ms for heartbeats turned `down` (committed). Latency: first seen down
//    minus the end of its grace. Goal: p99 within 5 s.
//   npm run bench:heartbeats   (builds first; about 3 minutes with the defaults; MySQL at BENCH_MYSQL_URL,
//                               else TEST_MYSQL_URL, else mysql://root@127.0.0.1:3306/test, scratch databases)
// Knobs: BENCH_TOKENS (10,000), BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_CONCURRENCY (64),
// BENCH_HEARTBEATS (10,000), BENCH_SPREAD_S (60), BENCH_ONLY (`pings` or `deadlines`),
// BENCH_DOCS (0: do not write the figures into docs/benchmarks.md).
import { createHash, randomBytes } from 'node:crypto'
import os from 'node:os'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { currentCommit, median, scratchMysql, start, stop, writeFigures } from './processes.mjs'
import { compareServers, wrkVersion } from './wrk.mjs'

const TOKENS = Number(process.env.BENCH_TOKENS ?? 10_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64)
const HEARTBEATS = Number(process.env.BENCH_HEARTBEATS ?? 10_000)
const SPREAD_S = Number(process.env.BENCH_SPREAD_S ?? 60)
const ONLY = process.env.BENCH_ONLY ?? null
const DOCS = process.env.BENCH_DOCS !== '0'
const ADDRESSES = 1000
const PING_GOAL = 0.25
const DETECT_GOAL_MS = 5000
const EVERY_S = 30
const GRACE_S = 5
const POLL_MS = 100

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]

/**
 * Heartbeats written straight into the store, as `POST /api/v1/heartbeats` and pings would leave
 * them (a `sites` row of kind `heartbeat` each), 500 to a transaction: the API would take a
 * transaction and a round trip per heartbeat. `lastSuccess(i)` is heartbeat i's last success; its
 * next deadline is the end of that period. Resolves to the ping tokens, in order.
 */
async function seedHeartbeats(db, n, { every, grace, lastSuccess }) {
  const tokens = []
  for (let from = 0; from < n; from += 500) {
    const part = Array.from({ length: Math.min(500, n - from) }, (_, k) => from + k)
    const now = new Date()
    await db.transaction(async (trx) => {
      await trx('sites').insert(
        part.map((i) => ({
          domain: `heartbeat:job-${i}`,
          name: `Job ${i}`,
          kind: 'heartbeat',
          added_at: now,
          changed_at: now,
          status: 'up',
          checked_at: lastSuccess(i),
          first_checked_at: lastSuccess(i)
        }))
      )
      const ids = new Map()
      for (const r of await trx('sites')
        .whereIn(
          'domain',
          part.map((i) => `heartbeat:job-${i}`)
        )
        .select('id', 'domain'))
        ids.set(String(r.domain), Number(r.id))
      await trx('heartbeats').insert(
        part.map((i) => {
          const token = randomBytes(24).toString('base64url')
          tokens[i] = token
          const success = lastSuccess(i)
          return {
            site_id: ids.get(`heartbeat:job-${i}`),
            slug: `job-${i}`,
            name: `Job ${i}`,
            token_hash: createHash('sha256').update(token).digest('hex'),
            every_s: every,
            grace_s: grace,
            max_runtime_s: null,
            paused: false,
            state: 'up',
            failed: false,
            last_ping_at: success,
            last_ping_kind: 'success',
            last_success_at: success,
            open_runs: '[]',
            last_message: null,
            last_run_ms: null,
            next_deadline: new Date(success.getTime() + every * 1000),
            created_at: now,
            changed_at: now
          }
        })
      )
    })
  }
  return tokens
}

const serviceEnv = (url) => ({ DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'warn', TRUSTED_PROXIES: '127.0.0.1/32' })

/** Part 1: the ping endpoint against bare hapi, pinned. */
async function pings(children) {
  const mysql = await scratchMysql('bench_heartbeat_pings')
  try {
    await migrateLatest(mysql.db)
    const now = Date.now()
    // Due in a day: every ping is a success to a heartbeat that stays up.
    const tokens = await seedHeartbeats(mysql.db, TOKENS, { every: 86_400, grace: 3600, lastSuccess: () => new Date(now) })
    const ours = await start('./monitor-sut.mjs', serviceEnv(mysql.url))
    children.push(ours.child)
    const bare = await start('./bare-hapi.mjs')
    children.push(bare.child)
    const lua = (s) => JSON.stringify(String(s))
    // Each request its own token and address, formatted once at init.
    const script = [
      `local tokens = { ${tokens.map(lua).join(', ')} }`,
      'local requests = {}',
      'local counter = 0',
      'function init(args)',
      '  for i, t in ipairs(tokens) do',
      // wrk's LuaJIT is Lua 5.1: no integer division operator.
      `    local a = i % ${ADDRESSES}`,
      '    local address = "10.9." .. math.floor(a / 250) .. "." .. (a % 250 + 1)',
      '    requests[i] = wrk.format("GET", "/ping/" .. t, { ["X-Forwarded-For"] = address })',
      '  end',
      '  counter = math.random(#requests)',
      'end',
      'function request()',
      '  counter = counter % #requests + 1',
      '  return requests[counter]',
      'end'
    ].join('\n')
    for (const s of [ours, bare]) {
      const probe = await fetch(`${s.uri}/ping/${tokens[0]}`, { headers: { 'x-forwarded-for': '10.9.0.1' } })
      const text = await probe.text()
      if (probe.status !== 200 || text !== 'OK') throw new Error(`${s.uri}: a ping answered ${probe.status} ${text.slice(0, 200)}`)
    }
    const before = Number((await mysql.db('heartbeat_pings').count({ n: '*' }))[0].n)
    console.error(
      `bench/heartbeats: pings to ${fmt(TOKENS)} heartbeats on MySQL; wrk, ${CONCURRENCY} connections, ${ROUNDS} rounds x ${SECONDS} s, pinned`
    )
    const run = await compareServers({
      systems: [
        { name: 'bare hapi', uri: bare.uri, pid: bare.child.pid },
        { name: 'ours', uri: ours.uri, pid: ours.child.pid }
      ],
      script,
      pinned: true,
      rounds: ROUNDS,
      seconds: SECONDS,
      connections: CONCURRENCY
    })
    await stop(ours.child)
    bare.child.kill()
    // Every `OK` wrk counted (each round's, the warm-up's and the probe's) must be a stored ping.
    const stored = Number((await mysql.db('heartbeat_pings').count({ n: '*' }))[0].n) - before
    return { run, stored }
  } finally {
    await mysql.drop()
  }
}

/** Part 2: overdue heartbeats turned down, as a reader sees them, against the end of their grace. */
async function deadlines(children) {
  const mysql = await scratchMysql('bench_heartbeat_deadlines')
  try {
    await migrateLatest(mysql.db)
    // Far enough ahead for the service to start before the first grace ends.
    const first = Date.now() + 20_000 + HEARTBEATS
    const downAt = (i) => first + Math.floor((i * SPREAD_S * 1000) / HEARTBEATS)
    await seedHeartbeats(mysql.db, HEARTBEATS, {
      every: EVERY_S,
      grace: GRACE_S,
      lastSuccess: (i) => new Date(downAt(i) - (EVERY_S + GRACE_S) * 1000)
    })
    const ours = await start('./monitor-sut.mjs', serviceEnv(mysql.url))
    children.push(ours.child)
    console.error(
      `bench/heartbeats: ${fmt(HEARTBEATS)} heartbeats on MySQL, graces ending over ${SPREAD_S} s from ${new Date(first).toISOString()}`
    )
    const ids = new Map()
    for (const r of await mysql.db('heartbeats').select('id', 'slug')) ids.set(Number(r.id), Number(String(r.slug).slice(4)))
    const seen = new Map()
    const deadline = downAt(HEARTBEATS - 1) + 120_000
    while (seen.size < HEARTBEATS && Date.now() < deadline) {
      const at = Date.now()
      for (const id of await mysql.db('heartbeats').where({ state: 'down' }).pluck('id')) if (!seen.has(id)) seen.set(id, at)
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, POLL_MS - (Date.now() - at))))
    }
    const opened = Number((await mysql.db('outages').count({ n: '*' }))[0].n)
    await stop(ours.child)
    const latencies = [...seen].map(([id, at]) => at - downAt(ids.get(id)))
    return { latencies, missed: HEARTBEATS - seen.size, opened }
  } finally {
    await mysql.drop()
  }
}

const loadBefore = os.loadavg()[0]
const commit = currentCommit()
const children = []
try {
  const lines = []
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const machine = `${os.availableParallelism?.() ?? os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}`
  if (ONLY === null || ONLY === 'pings') {
    const { run, stored } = await pings(children)
    const [b, o] = run.systems
    const ratio = o.median.rps / b.median.rps
    const pairs = median(run.perRound.map(([x, y]) => y / x))
    lines.push(
      `Pings, run ${when} at ${commit}: ${machine}, wrk ${wrkVersion()} (1 thread, ${CONCURRENCY} keep-alive connections), ` +
        `${ROUNDS} rounds x ${SECONDS} s after one warm-up round each, bare hapi then ours back to back; ` +
        `${run.pinned ? 'pinned: servers on CPU 0 (taking turns), wrk on CPU 1, MySQL unpinned' : '**not pinned** (taskset failed)'}; ` +
        `${fmt(TOKENS)} heartbeats, 1,000 client addresses; 1-minute load average before ${loadBefore.toFixed(2)}, at the end ${os.loadavg()[0].toFixed(2)}.`,
      '',
      '| | bare hapi req/s | ours req/s | ours / bare (medians) | median of per-round ratios | CPU µs / request, bare / ours | ours p99 (ms) | errors | >= 0.25x |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---|',
      `| \`GET /ping/<token>\` | ${fmt(b.median.rps)} | ${fmt(o.median.rps)} | ${fmt(ratio, 2)}x | ${fmt(pairs, 2)}x | ` +
        `${fmt(b.median.cpuUs, 1)} / ${fmt(o.median.cpuUs, 1)} | ${fmt(o.median.p99Ms, 2)} | ${o.non2xx + o.socketErrors + b.non2xx + b.socketErrors} | ${ratio >= PING_GOAL ? 'yes' : '**no**'} |`,
      '',
      `Pings stored while measuring (warm-up, rounds and probe): ${fmt(stored)}; a ping is answered \`OK\` only after its commit.`
    )
  }
  if (ONLY === null || ONLY === 'deadlines') {
    const { latencies, missed, opened } = await deadlines(children)
    const p = (q) => (latencies.length === 0 ? NaN : percentile(latencies, q) / 1000)
    if (lines.length > 0) lines.push('')
    lines.push(
      `Overdue detection, run ${when} at ${commit}: ${machine}; ${fmt(HEARTBEATS)} heartbeats (every ${EVERY_S} s, grace ${GRACE_S} s) ` +
        `on MySQL, graces ending over ${SPREAD_S} s; one instance sweeping every second; a reader polling every ${POLL_MS} ms.`,
      '',
      '| heartbeats | graces end over | p50 (s) | p99 (s) | max (s) | never seen down | outages opened | p99 <= 5 s |',
      '|---:|---:|---:|---:|---:|---:|---:|---|',
      `| ${fmt(HEARTBEATS)} | ${SPREAD_S} s | ${fmt(p(50), 2)} | ${fmt(p(99), 2)} | ${fmt(p(100), 2)} | ${missed} | ${fmt(opened)} | ${missed === 0 && p(99) * 1000 <= DETECT_GOAL_MS ? 'yes' : '**no**'} |`
    )
  }
  const table = lines.join('\n')
  console.log(`\n${table}\n`)
  if (DOCS) writeFigures('benchmarks.md', 'bench/heartbeats', table)
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
}
