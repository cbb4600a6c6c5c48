// bench/status-page: `GET /status/{slug}` for a page of 50 sites with a year of history, beside the
// site page `GET /sites/{domain}` in the same run, while the monitor checks 10,000 sites on MySQL
// (as bench/monitor runs it: every name sent by CONNECT_TO to a loopback target). Goal: the status
// page's p99 under 20 ms (issue 36).
//   npm run bench:pages     (builds first; about four minutes; loopback and the local MySQL only)
// Seeded directly into the tables: the page's sites first checked a year ago, BENCH_OUTAGES closed
// outages each spread over that year, and a day of checks each (the site page's chart); the page is
// made through `POST /api/v1/pages`. Then, with the scheduler running: paced windows of both pages
// at once (each wrk connection waits 10 ms after every answer, as dashboards and visitors would ask),
// then each page flat out in turn. Requests carry a browser's Accept-Encoding (gzip).
// Knobs: BENCH_SITES (10000), BENCH_PAGE_SITES (50), BENCH_OUTAGES (100 a site), BENCH_INTERVAL_S
// (60), BENCH_WARMUP_S (30), BENCH_RUN_S (120: the paced windows), BENCH_WINDOW_S (15),
// BENCH_FLAT_S (10), BENCH_CONNECTIONS (4 paced, each page), BENCH_FLAT_CONNECTIONS (16),
// BENCH_MYSQL_URL (default TEST_MYSQL_URL or mysql://root@127.0.0.1:3306/test), BENCH_DOCS (1:
// rewrite the figures in docs/benchmarks.md).
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { generateKey, hashKey } from '../dist/lib/keys.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'
import { insertChecks } from '../dist/lib/store/checks.js'
import { createKey } from '../dist/lib/store/keys.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { ask, BENCH_MYSQL, currentCommit, freePort, median, scratchMysql, seededRandom, start, stop, writeFigures } from './processes.mjs'
import { runWrk, wrkVersion } from './wrk.mjs'

const SITES = Number(process.env.BENCH_SITES ?? 10_000)
const PAGE_SITES = Number(process.env.BENCH_PAGE_SITES ?? 50)
const OUTAGES = Number(process.env.BENCH_OUTAGES ?? 100)
const INTERVAL_S = Number(process.env.BENCH_INTERVAL_S ?? 60)
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 30)
const RUN_S = Number(process.env.BENCH_RUN_S ?? 120)
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 15)
const FLAT_S = Number(process.env.BENCH_FLAT_S ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4)
const FLAT_CONNECTIONS = Number(process.env.BENCH_FLAT_CONNECTIONS ?? 16)
const DOCS = (process.env.BENCH_DOCS ?? '1') === '1'
const GOAL_P99_MS = 20
const SLUG = 'bench'
const DAY = 86_400_000
const YEAR = 365 * DAY
/** A browser's request: the pages are kept gzipped for it. */
const BROWSER = { 'accept-encoding': 'gzip, deflate, br' }

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** `count` closed outages of one site over the year before `now`, 1 to 90 minutes each, as the recorder writes them. */
function outageRows(siteId, count, now, seed) {
  const next = seededRandom(seed)
  const slot = YEAR / count
  return Array.from({ length: count }, (_, i) => {
    const start = now - YEAR + i * slot + next() * (slot / 2)
    return {
      site_id: siteId,
      started_at: new Date(Math.round(start)),
      ended_at: new Date(Math.round(start + 60_000 + next() * 89 * 60_000)),
      open_site_id: null
    }
  })
}

// Other work on the machine shows in the figures: the load before the bench starts is reported with them.
const loadBefore = os.loadavg()[0]
const commit = currentCommit()
// The target every name is sent to: 'ok' to every probe.
const target = spawn(
  process.execPath,
  [
    '-e',
    `const s = require('node:http').createServer((q, r) => r.end('ok'))
  s.keepAliveTimeout = 0
  s.listen(0, '127.0.0.1', () => process.send({ port: s.address().port }))`
  ],
  { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }
)
const targetPort = await new Promise((resolve) => target.once('message', (m) => resolve(m.port)))
const closed = await freePort()

const scratch = await scratchMysql('bench_pages')
const { db } = scratch
let sut = null
const cleanup = async () => {
  if (sut !== null && sut.child.exitCode === null) sut.child.kill('SIGKILL')
  target.kill()
  await scratch.drop()
}

try {
  await migrateLatest(db)
  const now = Date.now()
  const domains = Array.from({ length: SITES }, (_, i) => `s${i}.bench.test`)
  for (let i = 0; i < SITES; i += 1000) {
    await addSites({
      db,
      now: new Date(now - YEAR - DAY),
      entries: domains.slice(i, i + 1000).map((domain, j) => ({ domain, name: i + j < PAGE_SITES ? `Service ${i + j}` : null }))
    })
  }
  const pageDomains = domains.slice(0, PAGE_SITES)
  const ids = (await db('sites').whereIn('domain', pageDomains).orderBy('id').pluck('id')).map(Number)
  console.error(`bench/status-page: seeding a year of history for ${ids.length} sites`)
  await db('sites')
    .whereIn('id', ids)
    .update({ first_checked_at: new Date(now - YEAR) })
  for (const [i, siteId] of ids.entries()) {
    const rows = outageRows(siteId, OUTAGES, now, i + 1)
    for (let j = 0; j < rows.length; j += 500) await db('outages').insert(rows.slice(j, j + 500))
    // The last day at the interval, for the site page's response-time chart; the monitor adds the rest.
    const checks = Array.from({ length: Math.floor(DAY / (INTERVAL_S * 1000)) }, (_, k) => ({
      siteId,
      checkedAt: new Date(now - DAY + k * INTERVAL_S * 1000),
      status: 'up',
      blocked: false,
      partial: false,
      responseMs: 40 + ((k * 7 + i) % 60),
      locationsAnswered: 3,
      locationsTotal: 3,
      source: 'schedule',
      locations: []
    }))
    await insertChecks({ db, checks })
  }
  const manageKey = generateKey()
  await createKey({ db, name: 'bench', keyHash: hashKey(manageKey), rateLimit: 1_000_000, scopes: 'manage', now: new Date(now) })

  const env = {
    DATABASE_URL: scratch.url,
    ALLOW_PRIVATE_TARGETS: '1',
    CONNECT_TO: `:443:127.0.0.1:${closed},:80:127.0.0.1:${targetPort}`,
    CHECK_INTERVAL_S: String(INTERVAL_S),
    PORT: '0',
    LOG_LEVEL: 'warn'
  }
  sut = await start('./monitor-sut.mjs', env)
  const created = await fetch(`${sut.uri}/api/v1/pages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${manageKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      slug: SLUG,
      title: 'Bench status',
      description: 'Fifty services with a year of history.',
      // Every other site under a display name of the page's own.
      sites: pageDomains.map((domain, i) => ({ domain, ...(i % 2 === 0 ? { name: `Public service ${i}` } : {}) }))
    })
  })
  if (created.status !== 201) throw new Error(`POST /api/v1/pages: ${created.status} ${await created.text()}`)
  const statusPaths = [`/status/${SLUG}`]
  const sitePaths = pageDomains.map((d) => `/sites/${d}`)
  const sizes = {}
  for (const [name, path] of [
    ['status', statusPaths[0]],
    ['site', sitePaths[1]]
  ]) {
    const res = await fetch(`${sut.uri}${path}`)
    const html = await res.text()
    if (res.status !== 200 || !html.includes('<html')) throw new Error(`${path}: ${res.status} ${html.slice(0, 300)}`)
    sizes[name] = Buffer.byteLength(html)
    sizes[`${name}Gzip`] = await new Promise((resolve, reject) => {
      http
        .get(`${sut.uri}${path}`, { headers: BROWSER }, (r) => {
          let n = 0
          r.on('data', (c) => (n += c.length))
          r.on('end', () => resolve(r.headers['content-encoding'] === 'gzip' ? n : NaN))
        })
        .on('error', reject)
    })
  }
  console.error(
    `bench/status-page: ${SITES} sites every ${INTERVAL_S} s on MySQL; ${WARMUP_S} s warm-up, ${RUN_S} s of paced windows, then ${FLAT_S} s flat out each`
  )
  await sleep(WARMUP_S * 1000)
  const first = await ask(sut.child, 'stats')
  const startedAt = performance.now()

  // Paced: both pages at once, window after window.
  const paced = { status: [], site: [] }
  const pace = 'function delay() return 10 end'
  while ((performance.now() - startedAt) / 1000 + WINDOW_S <= RUN_S) {
    const [status, site] = await Promise.all([
      runWrk({ url: sut.uri, paths: statusPaths, headers: BROWSER, connections: CONNECTIONS, seconds: WINDOW_S, script: pace }),
      runWrk({ url: sut.uri, paths: sitePaths, headers: BROWSER, connections: CONNECTIONS, seconds: WINDOW_S, script: pace })
    ])
    paced.status.push(status)
    paced.site.push(site)
    const s = await ask(sut.child, 'stats')
    console.error(
      `  ${((performance.now() - startedAt) / 1000).toFixed(0)} s: status page ${fmt(status.rps)}/s p50 ${fmt(status.p50Ms, 1)} p99 ${fmt(status.p99Ms, 1)} ms; ` +
        `site page ${fmt(site.rps)}/s p50 ${fmt(site.p50Ms, 1)} p99 ${fmt(site.p99Ms, 1)} ms; started ${s.scheduler.started}, on time ${s.scheduler.onTime}, late ${s.scheduler.late}, rss ${fmt(s.rss / 2 ** 20)} MB`
    )
  }
  const pacedEnd = await ask(sut.child, 'stats')
  const pacedS = (performance.now() - startedAt) / 1000
  // Flat out: each page alone in turn, the monitor still running.
  const flat = {}
  for (const [name, paths] of [
    ['status', statusPaths],
    ['site', sitePaths]
  ]) {
    flat[name] = await runWrk({ url: sut.uri, paths, headers: BROWSER, connections: FLAT_CONNECTIONS, seconds: FLAT_S })
    console.error(`  flat out, ${name} page: ${fmt(flat[name].rps)}/s p50 ${fmt(flat[name].p50Ms, 1)} p99 ${fmt(flat[name].p99Ms, 1)} ms`)
  }
  const last = await ask(sut.child, 'stats')
  const peakRss = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${sut.child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
  await stop(sut.child)

  const sched = last.scheduler
  const onTime = sched.started === 0 ? 0 : sched.onTime / sched.started
  const cpu = (a, b, s) => (((b.cpu.user + b.cpu.system - a.cpu.user - a.cpu.system) / 1e6 / s) * 100).toFixed(0)
  const window = (ws) => ({
    rps: median(ws.map((w) => w.rps)),
    p50: median(ws.map((w) => w.p50Ms)),
    p99: median(ws.map((w) => w.p99Ms)),
    worst: Math.max(...ws.map((w) => w.p99Ms)),
    errors: ws.reduce((n, w) => n + w.non2xx + w.socketErrors, 0)
  })
  const ps = window(paced.status)
  const pp = window(paced.site)
  const errors = ps.errors + pp.errors + Object.values(flat).reduce((n, w) => n + w.non2xx + w.socketErrors, 0)
  const load = os.loadavg()[0]
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const pacedRow = (label, w, bytes, gzip) =>
    `| ${label} (${fmt(bytes / 1024, 1)} KiB of HTML, ${fmt(gzip / 1024, 1)} KiB gzipped) | paced: ${CONNECTIONS} connections, 10 ms between answers, both pages at once | ${fmt(w.rps)} | ${fmt(w.p50, 2)} | ${fmt(w.p99, 2)} / ${fmt(w.worst, 2)} |`
  const flatRow = (label, w) =>
    `| ${label} | flat out: ${FLAT_CONNECTIONS} connections, alone | ${fmt(w.rps)} | ${fmt(w.p50Ms, 2)} | ${fmt(w.p99Ms, 2)} |`
  const met = ps.worst < GOAL_P99_MS ? 'met' : ps.p99 < GOAL_P99_MS ? '**met by the median window, not the worst**' : '**not met**'
  const table = [
    `Run ${when} at ${commit}: ${os.availableParallelism?.() ?? os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, wrk ${wrkVersion()} (1 thread), ` +
      `MySQL (${BENCH_MYSQL.replace(/\/\/[^@]*@/, '//')}). ${fmt(SITES)} sites checked every ${INTERVAL_S} s throughout (loopback target); a page of ${PAGE_SITES} sites ` +
      `with a year of history (${fmt(OUTAGES)} outages a site, first checks a year ago, a day of checks each); ${WARMUP_S} s after start, ` +
      `${paced.status.length} paced windows of ${WINDOW_S} s, then ${FLAT_S} s flat out for each page; requests with \`Accept-Encoding: gzip\`, ` +
      `the site pages of the page's ${PAGE_SITES} sites in turn. 1-minute load average before the run ${loadBefore.toFixed(2)}, at its end ${load.toFixed(2)} (the run's own load included).`,
    '',
    '| page | load | req/s (median window) | p50 (ms) | p99 (ms): median / worst window |',
    '|---|---|---:|---:|---:|',
    pacedRow('`GET /status/{slug}`', ps, sizes.status, sizes.statusGzip),
    pacedRow('`GET /sites/{domain}`', pp, sizes.site, sizes.siteGzip),
    flatRow('`GET /status/{slug}`', flat.status),
    flatRow('`GET /sites/{domain}`', flat.site),
    '',
    '| figure | today | goal |',
    '|---|---|---|',
    `| status page p99 under the paced load, median / worst window | ${fmt(ps.p99, 1)} / ${fmt(ps.worst, 1)} ms | < ${GOAL_P99_MS} ms: ${met} |`,
    `| checks started on time (scheduler's count, whole run) | ${fmt(onTime * 100, 2)}% of ${fmt(sched.started)} | |`,
    `| service CPU during the paced windows; peak RSS | ${cpu(first, pacedEnd, pacedS)}%; ${fmt(peakRss / 2 ** 20)} MB | |`,
    `| non-2xx answers and socket errors | ${errors} | 0 |`
  ].join('\n')
  console.log(`\n${table}\n`)
  if (DOCS) writeFigures('benchmarks.md', 'bench/status-page', table)
} finally {
  await cleanup()
}
