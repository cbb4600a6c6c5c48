import type { Knex } from 'knex'

// A heartbeat is a monitor that waits for pings. It owns a `sites` row of kind `heartbeat`, so that
// its outages, uptime, SLA, maintenance windows, events and alerts are the sites' own machinery,
// keyed by that row's id; the schedule and the probes read `http` rows only. The row's `domain`
// is `heartbeat:<slug>`, which no domain can be. `heartbeats` holds the rest: the token's hash,
// the schedule, the state the rules left, and `next_deadline`, the next time its state would
// change without a ping, which the deadline loop claims rows by.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.string('kind', 16).notNullable().defaultTo('http')
  })
  await knex.schema.createTable('heartbeats', (t) => {
    t.increments('id').unsigned().primary()
    t.integer('site_id').unsigned().notNullable().unique().references('id').inTable('sites').onDelete('CASCADE')
    t.string('slug', 64).notNullable().unique({ indexName: 'heartbeats_slug' })
    t.string('name', 200).notNullable()
    // SHA-256 of the ping token, hex: the token itself is shown once, on creation and rotation.
    t.string('token_hash', 64).notNullable().unique({ indexName: 'heartbeats_token_hash' })
    t.integer('every_s').unsigned().notNullable()
    t.integer('grace_s').unsigned().notNullable()
    t.integer('max_runtime_s').unsigned().nullable()
    t.boolean('paused').notNullable().defaultTo(false)
    t.string('state', 16).notNullable().defaultTo('new')
    t.boolean('failed').notNullable().defaultTo(false)
    t.datetime('last_ping_at', { precision: 3 }).nullable()
    t.string('last_ping_kind', 16).nullable()
    t.datetime('last_success_at', { precision: 3 }).nullable()
    // Runs started and not ended, JSON `[{rid, at}]`, at most ten (lib/rules/heartbeat.ts).
    t.text('open_runs').notNullable()
    // The last POST body (at most 10 KiB), shown to read keys only.
    t.text('last_message').nullable()
    t.integer('last_run_ms').unsigned().nullable()
    t.datetime('next_deadline', { precision: 3 }).nullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.datetime('changed_at', { precision: 3 }).notNullable()
    t.index(['next_deadline'], 'heartbeats_next_deadline')
  })
  await knex.schema.createTable('heartbeat_pings', (t) => {
    t.bigIncrements('id').unsigned().primary()
    t.integer('heartbeat_id').unsigned().notNullable().references('id').inTable('heartbeats').onDelete('CASCADE')
    t.string('kind', 16).notNullable()
    t.string('rid', 64).nullable()
    // Start to end of the run this ping ended, when it ended one.
    t.integer('run_ms').unsigned().nullable()
    t.datetime('at', { precision: 3 }).notNullable()
    t.index(['heartbeat_id', 'id'], 'heartbeat_pings_heartbeat')
    t.index(['at'], 'heartbeat_pings_at')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('heartbeat_pings')
  await knex.schema.dropTable('heartbeats')
  await knex('sites').where({ kind: 'heartbeat' }).delete()
  await knex.schema.alterTable('sites', (t) => {
    t.dropColumn('kind')
  })
}
