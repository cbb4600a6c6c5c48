import type { Knex } from 'knex'

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('sites', (t) => {
    t.increments('id').unsigned().primary()
    t.string('domain', 253).notNullable().unique()
    t.string('name', 200).notNullable()
    // Start of the current tracking period: monitored time for uptime counts from here.
    t.datetime('added_at', { precision: 3 }).notNullable()
    // Set when the operator stops tracking; the row and its history stay.
    t.datetime('removed_at', { precision: 3 }).nullable()
    // Current state, kept true on every recorded check so status reads need no scan.
    t.string('status', 16).notNullable().defaultTo('unavailable')
    t.boolean('blocked').notNullable().defaultTo(false)
    t.boolean('partial').notNullable().defaultTo(false)
    t.double('response_ms').nullable()
    t.datetime('checked_at', { precision: 3 }).nullable()
    t.index(['removed_at', 'domain'], 'sites_removed_at_domain')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sites')
}
