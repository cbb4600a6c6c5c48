import type { Knex } from 'knex'
import type { Db } from './db.js'
import { migrations } from '../../migrations/index.js'

/**
 * Migrations come from a static list rather than a directory scan, so the names Knex records are
 * the same whether the code runs from `.ts` sources (tests) or the `.js` build (production).
 */
const source: Knex.MigrationSource<(typeof migrations)[number]> = {
  getMigrations: () => Promise.resolve([...migrations]),
  getMigrationName: (m) => m.name,
  getMigration: (m) => Promise.resolve(m)
}

const options: Knex.MigratorConfig = { migrationSource: source, tableName: 'knex_migrations' }

/** Applies every pending migration; returns the names applied. */
export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(options)) as [number, string[]]
  return applied
}

/** Rolls back every applied migration (tests and operators resetting a database). */
export async function migrateDownAll(db: Db): Promise<string[]> {
  const [, reverted] = (await db.migrate.rollback(options, true)) as [number, string[]]
  return reverted
}

export async function pendingMigrations(db: Db): Promise<string[]> {
  const [, pending] = (await db.migrate.list(options)) as [unknown[], Array<{ name: string }>]
  return pending.map((m) => m.name)
}

/** Rolls back the newest applied migration; returns its name (tests of one migration's down). */
export async function migrateDownOne(db: Db): Promise<string[]> {
  const [, reverted] = (await db.migrate.down(options)) as [number, string[]]
  return reverted
}

/** Applies the next pending migration; returns its name. */
export async function migrateUpOne(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.up(options)) as [number, string[]]
  return applied
}
