import type { Knex } from 'knex'

// When a site was last added, renamed, resumed or removed: the service re-reads its list of tracked
// sites only when the newest of these (or the row count) moved, instead of every site every 10 s.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.datetime('changed_at', { precision: 3 }).nullable()
    t.index(['changed_at'], 'sites_changed_at')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.dropIndex(['changed_at'], 'sites_changed_at')
    t.dropColumn('changed_at')
  })
}
