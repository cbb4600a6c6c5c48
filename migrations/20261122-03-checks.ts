import type { Knex } from 'knex'

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('checks', (t) => {
    t.bigIncrements('id').unsigned().primary()
    t.integer('site_id').unsigned().notNullable().references('id').inTable('sites').onDelete('CASCADE')
    t.datetime('checked_at', { precision: 3 }).notNullable()
    t.string('status', 16).notNullable()
    t.boolean('blocked').notNullable()
    t.boolean('partial').notNullable()
    t.double('response_ms').nullable()
    t.integer('locations_answered').unsigned().notNullable()
    t.integer('locations_total').unsigned().notNullable()
    // 'schedule' or 'demand': who asked for the check.
    t.string('source', 16).notNullable()
    // Each location's result as JSON: one row per check keeps writes cheap at scale.
    t.text('locations').notNullable()
    t.index(['site_id', 'checked_at'], 'checks_site_checked_at')
    t.index(['checked_at'], 'checks_checked_at')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('checks')
}
