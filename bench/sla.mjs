// bench/sla: the SLA endpoint for one site with 10,000 outages over a year, asked for the whole
// year, driven by wrk (bench/wrk.mjs) against the real service (dist build). Goal: p99 under 20 ms.
// Then the first answer after a change, one request at a time (BENCH_COLD, 40), which reads the year again.
//   npm run bench:sla     (builds first; about a minute; loopback and a temporary SQLite file only)
// Knobs: BENCH_OUTAGES (10000), BENCH_OTHER_SITES (100, with 1,000 outages each: a table of other
// sites' history around the one measured), BENCH_SECONDS (10), BENCH_CONNECTIONS ("1,4,16"),
// BENCH_MYSQL_URL (mysql://root@127.0.0.1:3306/any: also measure on MySQL, in a database made and
// dropped by the bench), BENCH_DOCS (1: write the figures into docs/benchmarks.md).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { openDb } from '../dist/lib/store/db.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { recordCheck } from '../dist/lib/monitoring/record/record-check.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
import { createKey } from '../dist/lib/store/keys.js'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { freePort, seededRandom, start, stop, writeFigures } from './processes.mjs'
import { runWrk, setCpus, cpuSeconds, wrkVersion } from './wrk.mjs'

const OUTAGES = Number(process.env.BENCH_OUTAGES ?? 10_000)
const OTHER_SITES = Number(process.env.BENCH_OTHER_SITES ?? 100)
const OTHER_OUTAGES = 1000
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,4,16').split(',').map(Number)
const MYSQL = process.env.BENCH_MYSQL_URL
const DOCS = process.env.BENCH_DOCS !== '0'
const GOAL_P99_MS = 20
/** Requests measured one at a time, each right after a change that makes the service read the year again. */
const COLD_REQUESTS = Number(process.env.BENCH_COLD ?? 40)
const DAY = 86_400_000
const YEAR = 365 * DAY

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

const dir = mkdtempSync(join(os.tmpdir(), 'bench-sla-'))
const children = []
const cleanups = []
// The service checks its sites on schedule; a loopback target answers those probes so nothing leaves the machine.
const target = spawn(
  process.execPath,
  [
    '-e',
    `const s = require('node:http').createServer((q, r) => r.end('ok')); s.listen(0, '127.0.0.1', () => console.log(s.address().port))`
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] }
)
children.push(target)

/**
 * `count` outages of one site spread over the year before `now`, each 30 s to 20 min long, the
 * newest still ongoing: rows as the recorder writes them.
 */
function outageRows(siteId, count, now, seed) {
  const next = seededRandom(seed)
  const slot = YEAR / count
  const rows = []
  for (let i = 0; i < count; i++) {
    const start = now - YEAR + i * slot + next() * (slot / 2)
    const last = i === count - 1
    const end = start + 30_000 + next() * Math.min(20 * 60_000, slot / 2 - 30_000)
    rows.push({
      site_id: siteId,
      started_at: new Date(Math.round(start)),
      ended_at: last ? null : new Date(Math.round(end)),
      open_site_id: last ? siteId : null
    })
  }
  return rows
}

async function seed(databaseUrl, now) {
  const db = openDb(databaseUrl)
  try {
    await migrateLatest(db)
    const domains = ['sla.bench.test', ...Array.from({ length: OTHER_SITES }, (_, i) => `o${i}.bench.test`)]
    await addSites({ db, now: new Date(now - YEAR - DAY), entries: domains.map((domain) => ({ domain, name: domain })) })
    const ids = (await db('sites').orderBy('id').pluck('id')).map(Number)
    // First checks a year and a minute ago, so the whole year is monitored.
    for (const siteId of ids) {
      await recordCheck({
        db,
        check: {
          siteId,
          checkedAt: new Date(now - YEAR - 60_000),
          status: 'up',
          blocked: false,
          partial: false,
          responseMs: 50,
          locationsAnswered: 3,
          locationsTotal: 3,
          source: 'schedule',
          locations: []
        }
      })
    }
    for (const [i, siteId] of ids.entries()) {
      const rows = outageRows(siteId, i === 0 ? OUTAGES : OTHER_OUTAGES, now, i + 1)
      await db.transaction(async (trx) => {
        for (let j = 0; j < rows.length; j += 500) await trx('outages').insert(rows.slice(j, j + 500))
      })
    }
    const key = generateKey()
    await createKey({ db, name: 'bench', keyHash: hashKey(key), rateLimit: 1_000_000_000, scopes: 'read', now: new Date(now) })
    const total = Number((await db('outages').count({ n: '*' }))[0].n)
    return { key, total }
  } finally {
    await db.destroy()
  }
}

async function mysqlDatabase() {
  const name = `bench_sla_${process.pid}`
  const admin = openDb(MYSQL)
  await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`)
  await admin.destroy()
  cleanups.push(async () => {
    const db = openDb(MYSQL)
    await db.raw(`DROP DATABASE IF EXISTS \`${name}\``)
    await db.destroy()
  })
  const url = new URL(MYSQL)
  url.pathname = `/${name}`
  return url.toString()
}

async function measure(engine, databaseUrl, targetPort, closedPort) {
  const now = Date.now()
  const seeded = await seed(databaseUrl, now)
  const env = {
    DATABASE_URL: databaseUrl,
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closedPort},:80:127.0.0.1:${targetPort}`,
    // A day between scheduled checks: nothing but the requests measured runs meanwhile.
    CHECK_INTERVAL_S: '86400',
    PORT: '0',
    LOG_LEVEL: 'warn'
  }
  const sut = await start('./monitor-sut.mjs', env)
  children.push(sut.child)
  const pinned = setCpus(sut.child.pid, '0')
  const headers = { authorization: `Bearer ${seeded.key}` }
  const windows = [
    ['a year', new Date(now - YEAR).toISOString(), new Date(now).toISOString()],
    ['30 days', new Date(now - 30 * DAY).toISOString(), new Date(now).toISOString()]
  ]
  const rows = []
  for (const [label, from, to] of windows) {
    const path = `/api/v1/sites/sla.bench.test/sla?from=${from}&to=${to}`
    const res = await fetch(`${sut.uri}${path}`, { headers })
    const text = await res.text()
    const body = JSON.parse(text)
    if (res.status !== 200 || !(body.incidents > 0) || body.outages.length !== body.incidents) {
      throw new Error(`unexpected answer: ${res.status} ${text.slice(0, 300)}`)
    }
    // One unmeasured warm-up run, then one per number of connections.
    await runWrk({ url: sut.uri, paths: [path], connections: 1, seconds: 2, cpu: pinned ? 1 : null, headers })
    for (const connections of CONNECTIONS) {
      const before = cpuSeconds(sut.child.pid)
      const r = await runWrk({ url: sut.uri, paths: [path], connections, seconds: SECONDS, cpu: pinned ? 1 : null, headers, timeoutS: 10 })
      const cpuMs = ((cpuSeconds(sut.child.pid) - before) * 1000) / Math.max(1, r.requests)
      rows.push({ engine, label, connections, incidents: body.incidents, bytes: text.length, pinned, cpuMs, ...r })
      console.error(
        `  ${engine}, ${label} (${body.incidents} outages, ${fmt(text.length / 1024)} KiB), ${connections} connection(s): ` +
          `${fmt(r.rps)}/s, p50 ${fmt(r.p50Ms, 1)} ms, p99 ${fmt(r.p99Ms, 1)} ms, ${fmt(cpuMs, 1)} ms CPU each, errors ${r.non2xx + r.socketErrors}`
      )
    }
  }
  // The first answer after a change, when the copy of the site's closed outages is read again from
  // the store: a rename (as `sites import` or the API may make) forces it, one sequential request each.
  const cold = []
  const path = `/api/v1/sites/sla.bench.test/sla?from=${windows[0][1]}&to=${windows[0][2]}`
  const db = openDb(databaseUrl)
  try {
    for (let i = 0; i < COLD_REQUESTS; i++) {
      await db('sites')
        .where({ domain: 'sla.bench.test' })
        .update({ name: `SLA bench ${i}` })
      const started = performance.now()
      const res = await fetch(`${sut.uri}${path}`, { headers })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`unexpected answer after a rename: ${res.status}`)
      cold.push(performance.now() - started)
    }
  } finally {
    await db.destroy()
  }
  cold.sort((a, b) => a - b)
  console.error(
    `  ${engine}, a year, the first answer after a change (${COLD_REQUESTS} in turn): p50 ${fmt(cold[Math.floor(cold.length / 2)], 1)} ms, max ${fmt(cold.at(-1), 1)} ms`
  )
  const stats = await new Promise((resolve) => {
    sut.child.once('message', resolve)
    sut.child.send('stats')
  })
  await stop(sut.child)
  return { rows, cold, total: seeded.total, rss: stats.rss, delay: stats.delay }
}

try {
  const targetPort = await new Promise((resolve) => target.stdout.once('data', (d) => resolve(Number(String(d).trim()))))
  const closedPort = await freePort()
  console.error(
    `bench/sla: one site with ${fmt(OUTAGES)} outages over a year (and ${OTHER_SITES} others with ${fmt(OTHER_OUTAGES)} each), wrk ${SECONDS} s per run`
  )
  const results = [await measure('SQLite', `sqlite:${join(dir, 'bench.sqlite')}`, targetPort, closedPort)]
  if (MYSQL) results.push(await measure('MySQL', await mysqlDatabase(), targetPort, closedPort))

  // How fast this machine ran plain JavaScript during the run: 200,000 Date#toISOString calls, in
  // CPU time (the median of five), to put the figures beside runs on other machines.
  const reference = []
  for (let i = 0; i < 5; i++) {
    const before = process.cpuUsage()
    for (let j = 0; j < 200_000; j++) new Date(1.7e12 + j * 1000).toISOString()
    const used = process.cpuUsage(before)
    reference.push((used.user + used.system) / 1000)
  }
  reference.sort((a, b) => a - b)
  const load = os.loadavg()[0]
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const lines = []
  for (const result of results) {
    for (const r of result.rows) {
      const goal = r.label === 'a year' ? (r.p99Ms < GOAL_P99_MS ? 'yes' : '**no**') : ''
      lines.push(
        `| ${r.engine} | ${r.label} | ${fmt(r.incidents)} | ${fmt(r.bytes / 1024)} KiB | ${r.connections} | ${fmt(r.rps)} | ${fmt(r.p50Ms, 1)} | ${fmt(r.p99Ms, 1)} | ${fmt(r.cpuMs, 1)} | ${r.non2xx + r.socketErrors} | ${goal} |`
      )
    }
  }
  const pinned = results.every((x) => x.rows.every((r) => r.pinned))
  const table = [
    `Run ${when}: ${os.availableParallelism?.() ?? os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), shared with other work, Node ${process.version}, wrk ${wrkVersion()} (1 thread, ` +
      `keep-alive), ${SECONDS} s per run after a 2 s warm-up; ${pinned ? 'service on CPU 0, wrk on CPU 1 (taskset)' : 'not pinned'}. ` +
      `One site with ${fmt(OUTAGES)} outages over the year (the newest ongoing) among ${OTHER_SITES} others with ${fmt(OTHER_OUTAGES)} each ` +
      `(${results.map((x) => `${fmt(x.total)} outage rows in ${x.rows[0].engine}`).join(', ')}); every request asks for the same window; the closed outages' records come from the copy the service keeps between requests (\`lib/routes/sla-history.ts\`), checked against the store on every request, and the figures and the ongoing outage are computed afresh.`,
    '',
    `| engine | window | outages listed | body | connections | req/s | p50 (ms) | p99 (ms) | service CPU ms / request | errors | p99 < ${GOAL_P99_MS} ms |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...lines,
    '',
    `The first answer after a change (the copy read again from the store; ${COLD_REQUESTS} requests in turn, each after a rename), a year: ` +
      results
        .map(
          (x) =>
            `${x.rows[0].engine} p50 ${fmt(x.cold[Math.floor(x.cold.length / 2)], 1)} ms, p99 ${fmt(x.cold[Math.ceil(x.cold.length * 0.99) - 1], 1)} ms`
        )
        .join('; ') +
      '.',
    '',
    `Service RSS after the runs: ${results.map((x) => `${x.rows[0].engine} ${fmt(x.rss / 1024 / 1024)} MB`).join(', ')}. ` +
      `Machine at the end: load average ${fmt(load, 1)} (1 min) on ${os.availableParallelism?.() ?? os.cpus().length} cores; ` +
      `reference loop (200,000 \`Date#toISOString\`): ${fmt(reference[2], 0)} ms CPU.`
  ].join('\n')
  console.log(`\n${table}\n`)
  if (DOCS) writeFigures('benchmarks.md', 'bench/sla', table)
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  for (const c of cleanups) await c().catch(() => {})
  rmSync(dir, { recursive: true, force: true })
}
