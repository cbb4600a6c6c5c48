// bench/record: CPU per recorded check. Records BENCH_CHECKS checks for BENCH_SITES sites through
// the CheckRecorder into a fresh MySQL database, round by round (every site once per round, as the
// scheduler hands them over), and reports the process CPU time per recorded check.
//   npm run build && node bench/record.mjs
// Knobs: BENCH_SITES (2000), BENCH_CHECKS (20000), BENCH_MYSQL_URL (default TEST_MYSQL_URL or
// mysql://root@127.0.0.1:3306/test). About 2% of the checks are down, so outages open and close.
import { randomBytes } from 'node:crypto'
import { CheckRecorder } from '../dist/lib/monitoring/record/recorder.js'
import { SiteStates } from '../dist/lib/monitoring/state/site-state.js'
import { createLogger } from '../dist/lib/logger.js'
import { openDb } from '../dist/lib/store/db.js'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { addSites } from '../dist/lib/monitoring/add-sites.js'

const SITES = Number(process.env.BENCH_SITES ?? 2000)
const CHECKS = Number(process.env.BENCH_CHECKS ?? 20_000)
const BASE = process.env.BENCH_MYSQL_URL ?? process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'
const T0 = Date.parse('2026-11-22T06:00:00.000Z')
const MIN = 60_000

const name = `site_status_bench_${randomBytes(4).toString('hex')}`
const admin = openDb(BASE)
await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`)
const url = new URL(BASE)
url.pathname = `/${name}`
const db = openDb(url.toString())
try {
  await migrateLatest(db)
  const entries = Array.from({ length: SITES }, (_, i) => ({ domain: `site-${i}.example.com`, name: null }))
  await addSites({ db, entries, now: new Date(T0 - MIN) })
  const states = new SiteStates({ intervalMs: MIN, publicUrl: 'http://x' })
  await states.refresh(db, new Date(T0))
  const recorder = new CheckRecorder({ db, states, logger: createLogger({ level: 'warn' }) })
  const locations = ['a', 'b', 'c'].map((location) => ({ location, status: 'up', http_code: 200, response_ms: 12.5, error: null }))
  // A fixed pseudo-random pattern: the same checks before and after a change.
  let seed = 42
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
  const rounds = Math.ceil(CHECKS / SITES)
  const cpu = process.cpuUsage()
  const started = process.hrtime.bigint()
  let recorded = 0
  for (let round = 0; round < rounds && recorded < CHECKS; round++) {
    for (let i = 0; i < SITES && recorded < CHECKS; i++, recorded++) {
      const status = random() < 0.02 ? 'down' : 'up'
      recorder.record(
        {
          domain: `site-${i}.example.com`,
          status,
          locations_answered: 3,
          locations_total: 3,
          response_ms: status === 'up' ? 12.5 : null,
          cached: false,
          locations,
          checked_at: new Date(T0 + round * MIN + i * 10).toISOString(),
          partial: false,
          blocked: false
        },
        'schedule'
      )
    }
    if (!(await recorder.flush(120_000))) throw new Error('recording did not finish')
  }
  const used = process.cpuUsage(cpu)
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6
  recorder.close()
  const stored = Number((await db('checks').count({ n: '*' }))[0].n)
  const outages = Number((await db('outages').count({ n: '*' }))[0].n)
  if (stored !== recorded) throw new Error(`${stored} checks stored of ${recorded}`)
  const perCheck = (used.user + used.system) / recorded
  console.log(
    JSON.stringify({
      sites: SITES,
      checks: recorded,
      outages,
      cpu_us_per_check: Math.round(perCheck),
      user_us: Math.round(used.user / recorded),
      system_us: Math.round(used.system / recorded),
      wall_ms: Math.round(wallMs),
      checks_per_s: Math.round(recorded / (wallMs / 1000))
    })
  )
} finally {
  await db.destroy()
  await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``)
  await admin.destroy()
}
