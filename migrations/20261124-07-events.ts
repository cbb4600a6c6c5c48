import type { Knex } from 'knex'

// The outbox: every outage or site change is announced by a row written in the same transaction.
// Ids come from `event_sequence`, whose one row each writer updates first and holds until it
// commits: writers commit in id order, so a reader that has seen id N has seen every id below it,
// and streams and webhooks can resume from "after N" without gaps (an auto-increment id can
// commit after a higher one).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('events', (t) => {
    t.bigInteger('id').unsigned().primary()
    t.string('type', 40).notNullable()
    // The site the event concerns, for a site's page; kept when the site is removed.
    t.integer('site_id').unsigned().nullable()
    // The payload as announced (JSON), fixed at write time.
    t.text('data').notNullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.index(['site_id', 'id'], 'events_site_id')
    t.index(['created_at'], 'events_created_at')
  })
  await knex.schema.createTable('event_sequence', (t) => {
    t.integer('id').unsigned().primary()
    t.bigInteger('last_id').unsigned().notNullable()
  })
  await knex('event_sequence').insert({ id: 1, last_id: 0 })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('event_sequence')
  await knex.schema.dropTable('events')
}
