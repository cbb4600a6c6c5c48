// The test databases other suites run on: a copy of the migrated template must be what migrating
// a fresh database gives, and an empty one must stay empty for the tests of the migrations.
import t, { type Test } from 'tap'
import { openDb, type Db } from '../../../lib/store/db.js'
import { migrateDownAll, migrateLatest, pendingMigrations } from '../../../lib/store/migrate.js'
import { migrations } from '../../../migrations/index.js'
import { createMigratedDatabase, createTestDatabase, engines } from '../../helpers/db.js'

async function tables(db: Db, engine: 'sqlite' | 'mysql'): Promise<string[]> {
  if (engine === 'sqlite') {
    const rows: Array<{ name: string }> = await db.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    return rows.map((r) => r.name).sort()
  }
  const [rows] = (await db.raw('SHOW TABLES')) as [Array<Record<string, string>>]
  return rows.map((r) => String(Object.values(r)[0])).sort()
}

/** Every table's definition as the database states it, foreign keys, indexes and counters included. */
async function schema(db: Db, engine: 'sqlite' | 'mysql'): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  if (engine === 'sqlite') {
    const rows: Array<{ name: string; sql: string | null }> = await db.raw(
      "SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
    )
    for (const row of rows) out[row.name] = String(row.sql)
    return out
  }
  for (const table of await tables(db, engine)) {
    const [[row]] = (await db.raw(`SHOW CREATE TABLE \`${table}\``)) as [Array<Record<string, string>>]
    out[table] = String(row?.['Create Table'])
  }
  return out
}

/** Every row of every table but when each migration ran. */
async function rows(db: Db, engine: 'sqlite' | 'mysql'): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {}
  for (const table of await tables(db, engine)) {
    const all = (await db(table).select()) as Array<Record<string, unknown>>
    out[table] = all.map(({ migration_time: _, ...rest }) => rest)
  }
  return out
}

async function open(t: Test, create: () => Promise<{ url: string; cleanup(): Promise<void> }>): Promise<Db> {
  const test = await create()
  const db = openDb(test.url)
  t.teardown(async () => {
    await db.destroy()
    await test.cleanup()
  })
  return db
}

for (const engine of engines()) {
  t.test(`a migrated test database on ${engine} is what migrating a fresh one gives`, async (t) => {
    const fresh = await open(t, () => createTestDatabase(engine))
    t.same(
      await migrateLatest(fresh),
      migrations.map((m) => m.name),
      'the fresh one applies every migration'
    )
    const copy = await open(t, () => createMigratedDatabase(engine))

    t.same(await pendingMigrations(copy), [], 'nothing is pending on the copy')
    t.same(await migrateLatest(copy), [], 'and migrating it applies nothing')
    t.ok((await tables(copy, engine)).length > migrations.length, 'it has the tables')
    t.same(await schema(copy, engine), await schema(fresh, engine), 'the same tables, indexes and foreign keys')
    t.same(await rows(copy, engine), await rows(fresh, engine), 'the same rows: applied migrations and seeded rows')

    const check = (siteId: number) => ({
      site_id: siteId,
      checked_at: new Date(),
      status: 'up',
      blocked: false,
      partial: false,
      locations_answered: 1,
      locations_total: 1,
      source: 'schedule',
      locations: '[]'
    })
    await t.rejects(copy('checks').insert(check(999)), 'a check of no site is refused: foreign keys hold')
    const [siteId] = await copy('sites').insert({ domain: 'one.example.com', name: 'one', added_at: new Date() })
    const [again] = await fresh('sites').insert({ domain: 'one.example.com', name: 'one', added_at: new Date() })
    t.equal(siteId, again, 'ids count on from where the fresh one does')
    await copy('checks').insert(check(Number(siteId)))
    t.equal((await copy('checks').pluck('site_id')).length, 1, 'a check of a site is stored')

    const second = await open(t, () => createMigratedDatabase(engine))
    t.same(await copy('sites').pluck('domain'), ['one.example.com'])
    t.same(await second('sites').pluck('domain'), [], 'each copy is its own database')

    t.same(await migrateDownAll(copy), migrations.map((m) => m.name).reverse(), 'the copy rolls back like a migrated one')
    t.same(await tables(copy, engine), ['knex_migrations', 'knex_migrations_lock'], 'down to no table of ours')
  })

  t.test(`an empty test database on ${engine} stays empty for the tests of the migrations`, async (t) => {
    await open(t, () => createMigratedDatabase(engine))
    const empty = await open(t, () => createTestDatabase(engine))
    t.same(await tables(empty, engine), [], 'no table')
    t.same(
      await pendingMigrations(empty),
      migrations.map((m) => m.name),
      'every migration pending'
    )
  })
}
