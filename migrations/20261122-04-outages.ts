import type { Knex } from 'knex'

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('outages', (t) => {
    t.bigIncrements('id').unsigned().primary()
    t.integer('site_id').unsigned().notNullable().references('id').inTable('sites').onDelete('CASCADE')
    t.datetime('started_at', { precision: 3 }).notNullable()
    t.datetime('ended_at', { precision: 3 }).nullable()
    // Equals site_id while the outage is open and null once closed: the unique index makes
    // "at most one open outage per site" a database guarantee on both engines.
    t.integer('open_site_id').unsigned().nullable().unique({ indexName: 'outages_one_open_per_site' })
    t.index(['started_at', 'id'], 'outages_started_at_id')
    t.index(['site_id', 'started_at', 'id'], 'outages_site_started_at_id')
    t.index(['ended_at', 'started_at', 'id'], 'outages_ended_at_started_at_id')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('outages')
}
