import type { Knex } from 'knex'

// Per-site settings (null: not set, the service's default applies): the check interval, and the
// expectations a location judges an answer by and the slow threshold. `slow` and `slow_streak` are
// the slow rule's state (lib/rules/slow.ts), `maintenance_until` the end of the maintenance whose
// start was announced (null: none announced); both are written with the check that changes them,
// under the site's row lock, so that every instance agrees and no event is announced twice.
// Maintenance windows are rows of their own: every instance reads the same ones.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.integer('interval_s').unsigned().nullable()
    t.string('expect_status', 512).nullable()
    t.string('body_contains', 256).nullable()
    t.integer('max_response_ms').unsigned().nullable()
    t.boolean('slow').notNullable().defaultTo(false)
    t.integer('slow_streak').unsigned().notNullable().defaultTo(0)
    t.datetime('maintenance_until', { precision: 3 }).nullable()
  })
  await knex.schema.createTable('maintenance_windows', (t) => {
    t.increments('id').unsigned().primary()
    t.integer('site_id').unsigned().notNullable().references('id').inTable('sites')
    // One-off: its start and end. Weekly: day (0 Sunday), local start time, duration and zone.
    t.datetime('starts_at', { precision: 3 }).nullable()
    t.datetime('ends_at', { precision: 3 }).nullable()
    t.integer('weekly_day').unsigned().nullable()
    t.string('weekly_time', 5).nullable()
    t.integer('weekly_minutes').unsigned().nullable()
    t.string('weekly_zone', 64).nullable()
    t.string('reason', 200).nullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.index(['site_id', 'id'], 'maintenance_windows_site')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('maintenance_windows')
  await knex.schema.alterTable('sites', (t) => {
    t.dropColumn('maintenance_until')
    t.dropColumn('slow_streak')
    t.dropColumn('slow')
    t.dropColumn('max_response_ms')
    t.dropColumn('body_contains')
    t.dropColumn('expect_status')
    t.dropColumn('interval_s')
  })
}
