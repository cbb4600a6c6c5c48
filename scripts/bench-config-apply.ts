// Monitoring as code at 10,000 sites with settings on the database DATABASE_URL names (MySQL for
// the figures in docs/benchmarks.md): plan, apply, re-apply. Run: node --import tsx scripts/bench-config-apply.ts
import { applyFile, planFile } from '../lib/as-code/apply.js'
import { parseConfigText } from '../lib/rules/config-parse.js'
import { openDb } from '../lib/store/db.js'
import { migrateLatest } from '../lib/store/migrate.js'

const SITES = Number(process.env.BENCH_SITES ?? 10_000)
const url = process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/site_status_bench'
const lines = ['sites:']
for (let i = 0; i < SITES; i++)
  lines.push(
    `  - domain: s${i}.bench.example.com`,
    `    name: Site ${i}`,
    `    interval_s: ${30 + (i % 10) * 30}`,
    '    expect: {status: ["200-299"], max_response_ms: 2000}'
  )
const text = lines.join('\n') + '\n'
const db = openDb(url)
await migrateLatest(db)
const time = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
  const started = performance.now()
  const out = await fn()
  console.log(`${what}: ${((performance.now() - started) / 1000).toFixed(2)} s`)
  return out
}
const parsed = await time('parse and check', () => Promise.resolve(parseConfigText(text, 'bench.yaml', {})))
if (!parsed.ok) throw new Error('bench file refused')
const plan = await time('plan (empty database)', () => planFile({ db, file: parsed.file, prune: false }))
console.log(`  ${plan.items.length} to create`)
await time('apply', () => applyFile({ db, file: parsed.file, prune: false, now: () => new Date() }))
const before = await db('sites').max({ at: 'changed_at' }).first()
const again = await time('re-apply', () => applyFile({ db, file: parsed.file, prune: false, now: () => new Date() }))
const after = await db('sites').max({ at: 'changed_at' }).first()
console.log(
  `  re-apply items: ${again.plan.items.length}, sites rows written: ${JSON.stringify(before) === JSON.stringify(after) ? 0 : 'some'}`
)
await time('plan (all applied)', () => planFile({ db, file: parsed.file, prune: false }))
await db.destroy()
