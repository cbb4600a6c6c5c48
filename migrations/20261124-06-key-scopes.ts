import type { Knex } from 'knex'

// What a key may do: a comma-separated subset of read, check and manage. Keys issued before scopes
// existed could read and check, so that is the default they keep.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.string('scopes', 100).notNullable().defaultTo('read,check')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    t.dropColumn('scopes')
  })
}
