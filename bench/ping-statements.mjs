// bench/ping-statements: where a batch of pings spends its time on MySQL. 10,000 heartbeats as
// bench/heartbeats seeds them, then 40 transactions of B random success pings each (recordPings,
// what the ping route's group commit runs), one after another, each statement timed by knex's
// query events (BEGIN and COMMIT are not among them: the rest of a transaction's time is theirs
// and the client's).
//   npm run build && B=64 node bench/ping-statements.mjs   (MySQL at BENCH_MYSQL_URL, as bench/processes.mjs)
import { createHash, randomBytes } from 'node:crypto'
import { migrateLatest } from '../dist/lib/store/migrate.js'
import { recordPings } from '../dist/lib/heartbeats/pings.js'
import { scratchMysql } from './processes.mjs'

const N = 10_000
const BATCH = Number(process.env.B ?? 64)
const mysql = await scratchMysql('pings_stmt')
try {
  const db = mysql.db
  await migrateLatest(db)
  const now = new Date()
  const tokens = []
  for (let from = 0; from < N; from += 500) {
    await db.transaction(async (trx) => {
      const part = Array.from({ length: 500 }, (_, k) => from + k)
      await trx('sites').insert(
        part.map((i) => ({
          domain: `heartbeat:job-${i}`,
          name: `Job ${i}`,
          kind: 'heartbeat',
          added_at: now,
          changed_at: now,
          status: 'up',
          checked_at: now,
          first_checked_at: now
        }))
      )
      const ids = new Map(
        (
          await trx('sites')
            .whereIn(
              'domain',
              part.map((i) => `heartbeat:job-${i}`)
            )
            .select('id', 'domain')
        ).map((r) => [r.domain, r.id])
      )
      await trx('heartbeats').insert(
        part.map((i) => {
          const token = randomBytes(24).toString('base64url')
          tokens[i] = token
          return {
            site_id: ids.get(`heartbeat:job-${i}`),
            slug: `job-${i}`,
            name: `Job ${i}`,
            token_hash: createHash('sha256').update(token).digest('hex'),
            every_s: 86400,
            grace_s: 3600,
            max_runtime_s: null,
            paused: false,
            state: 'up',
            failed: false,
            last_ping_at: now,
            last_ping_kind: 'success',
            last_success_at: now,
            open_runs: '[]',
            last_message: null,
            last_run_ms: null,
            next_deadline: new Date(now.getTime() + 86400000),
            created_at: now,
            changed_at: now
          }
        })
      )
    })
  }
  const times = new Map()
  const started = new Map()
  db.on('query', (q) => started.set(q.__knexQueryUid, [process.hrtime.bigint(), q.sql]))
  db.on('query-response', (_r, q) => {
    const s = started.get(q.__knexQueryUid)
    if (!s) return
    const kind = s[1].trim().split(/\s+/).slice(0, 3).join(' ').replace(/`/g, '').slice(0, 40)
    const ms = Number(process.hrtime.bigint() - s[0]) / 1e6
    const t = times.get(kind) ?? { n: 0, ms: 0 }
    t.n++
    t.ms += ms
    times.set(kind, t)
  })
  const ROUNDS = 40
  let total = 0
  for (let r = 0; r < ROUNDS; r++) {
    const pings = Array.from({ length: BATCH }, () => ({ token: tokens[Math.floor(Math.random() * N)], kind: 'success', rid: null }))
    const t0 = process.hrtime.bigint()
    await recordPings({ db, pings, now: () => new Date() })
    total += Number(process.hrtime.bigint() - t0) / 1e6
  }
  console.log(`batch ${BATCH}: ${(total / ROUNDS).toFixed(1)} ms a transaction, ${((total / ROUNDS / BATCH) * 1000).toFixed(0)} µs a ping`)
  for (const [k, t] of [...times].sort((a, b) => b[1].ms - a[1].ms)) console.log(`${(t.ms / ROUNDS).toFixed(2).padStart(8)} ms/batch  ${k}`)
} finally {
  await mysql.drop()
}
