import type { Knex } from 'knex'

/**
 * Drops columns that no index, key or constraint names, keeping every row of the table and of the
 * tables that refer to it. On SQLite with `ALTER TABLE ... DROP COLUMN` (SQLite 3.35 and later):
 * knex would copy the table and drop the old one, and inside a migration's transaction, where
 * `foreign_keys` cannot be turned off, that drop deletes every row that refers to it by an
 * `ON DELETE CASCADE` key (the heartbeats of `sites` rows, the pings of heartbeats).
 */
export async function dropPlainColumns(knex: Knex, table: string, columns: readonly string[]): Promise<void> {
  if ((knex.client as { config: { client: string } }).config.client === 'better-sqlite3') {
    for (const column of columns) await knex.raw('ALTER TABLE ?? DROP COLUMN ??', [table, column])
    return
  }
  await knex.schema.alterTable(table, (t) => {
    t.dropColumns(...columns)
  })
}
