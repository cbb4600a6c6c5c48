// bench/import: how long `site-status sites import` takes for 10,000 lines, process start-up
// included, on SQLite and on MySQL. The goal is the operator's: an import of 10,000 sites within
// 30 s (docs/decisions.md). Median of BENCH_ROUNDS rounds, each into a fresh database.
//   npm run build && node bench/import.mjs
// Knobs: BENCH_LINES (10000), BENCH_ROUNDS (5), BENCH_MYSQL_URL (default TEST_MYSQL_URL or
// mysql://root@127.0.0.1:3306/test; BENCH_MYSQL_URL= skips MySQL).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDb } from '../dist/lib/store/db.js'

const LINES = Number(process.env.BENCH_LINES ?? 10_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const MYSQL = process.env.BENCH_MYSQL_URL ?? process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'
const GOAL_MS = 30_000
const CLI = new URL('../dist/lib/cli/index.js', import.meta.url).pathname

const dir = mkdtempSync(join(tmpdir(), 'bench-import-'))
const file = join(dir, 'sites.txt')
writeFileSync(
  file,
  Array.from({ length: LINES }, (_, i) => (i % 3 === 0 ? `site-${i}.example.com,Site ${i}` : `site-${i}.example.com`)).join('\n') + '\n'
)

function importOnce(databaseUrl) {
  const started = performance.now()
  const child = spawn(process.execPath, [CLI, 'sites', 'import', file], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', () => {})
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      const ms = performance.now() - started
      if (code !== 0 || !out.startsWith(`added ${LINES},`)) reject(new Error(`import exited ${code}: ${out.trim()}`))
      else resolve(ms)
    })
  })
}

async function mysqlDatabase() {
  const name = `site_status_bench_${randomBytes(4).toString('hex')}`
  const admin = openDb(MYSQL)
  await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`)
  const url = new URL(MYSQL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``)
      await admin.destroy()
    }
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const rows = []
try {
  for (const engine of MYSQL ? ['sqlite', 'mysql'] : ['sqlite']) {
    const times = []
    for (let round = 0; round < ROUNDS; round++) {
      if (engine === 'sqlite') times.push(await importOnce(`sqlite:${join(dir, `round-${round}.sqlite`)}`))
      else {
        const db = await mysqlDatabase()
        try {
          times.push(await importOnce(db.url))
        } finally {
          await db.drop()
        }
      }
    }
    rows.push({ engine, median: median(times), worst: Math.max(...times) })
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(`bench/import: ${LINES} lines, ${ROUNDS} rounds, process start-up included`)
console.log('| engine | median | worst | goal < 30 s |')
console.log('|---|---:|---:|---|')
for (const r of rows)
  console.log(
    `| ${r.engine} | ${(r.median / 1000).toFixed(2)} s | ${(r.worst / 1000).toFixed(2)} s | ${r.worst < GOAL_MS ? 'met' : 'NOT met'} |`
  )
process.exitCode = rows.every((r) => r.worst < GOAL_MS) ? 0 : 1
