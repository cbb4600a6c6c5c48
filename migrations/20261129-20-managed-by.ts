import type { Knex } from 'knex'
import { dropPlainColumns } from '../lib/store/drop-columns.js'

// Monitoring as code: `managed_by` names what made a site or a status page (null: made by hand,
// by the API or the operator tool; 'config': made by applying a file), so that `apply --prune`
// removes only what an earlier apply made. `config_lock` is the one row concurrent applies claim
// (a lease, so that a killed apply frees it once `locked_until` passes) across instances and the
// operator tool alike.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.string('managed_by', 32).nullable()
  })
  await knex.schema.alterTable('status_pages', (t) => {
    t.string('managed_by', 32).nullable()
  })
  await knex.schema.createTable('config_lock', (t) => {
    t.integer('id').unsigned().primary()
    t.string('holder', 100).nullable()
    t.datetime('locked_until', { precision: 3 }).nullable()
  })
  await knex('config_lock').insert({ id: 1, holder: null, locked_until: null })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('config_lock')
  await dropPlainColumns(knex, 'status_pages', ['managed_by'])
  await dropPlainColumns(knex, 'sites', ['managed_by'])
}
