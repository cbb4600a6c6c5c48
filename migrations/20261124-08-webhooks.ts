import type { Knex } from 'knex'

// Webhooks and their delivery log. A webhook's `cursor` is the last event id fanned out to it: the
// fan-out inserts its deliveries and moves the cursor in one transaction, so an event committed
// before a crash is fanned out after the restart. A delivery is sent by whoever holds its lease
// (`claimed_until`, `claimed_by`), taken by a conditional UPDATE that works on both engines.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhooks', (t) => {
    t.increments('id').unsigned().primary()
    t.string('url', 2048).notNullable()
    // JSON arrays; null means every event type / every domain.
    t.text('events').nullable()
    t.text('domains').nullable()
    // AES-256-GCM ciphertext of the signing secret (lib/webhooks/secret-box.ts): a dump alone never signs.
    t.string('secret', 200).notNullable()
    t.bigInteger('cursor').unsigned().notNullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    // Set when the receiver answered 410 Gone: nothing more is sent.
    t.datetime('disabled_at', { precision: 3 }).nullable()
    t.string('disabled_reason', 200).nullable()
  })
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.bigIncrements('id').unsigned().primary()
    t.integer('webhook_id').unsigned().notNullable().references('id').inTable('webhooks').onDelete('CASCADE')
    // No foreign key: events are kept 7 days, the delivery log 30.
    t.bigInteger('event_id').unsigned().notNullable()
    t.string('type', 40).notNullable()
    t.integer('attempts').unsigned().notNullable().defaultTo(0)
    t.string('status', 16).notNullable()
    t.integer('last_http_code').unsigned().nullable()
    t.string('last_error', 300).nullable()
    t.datetime('next_attempt_at', { precision: 3 }).notNullable()
    // The lease: the instance named by claimed_by sends it until claimed_until.
    t.datetime('claimed_until', { precision: 3 }).nullable()
    t.string('claimed_by', 64).nullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.datetime('delivered_at', { precision: 3 }).nullable()
    t.unique(['webhook_id', 'event_id'], { indexName: 'webhook_deliveries_one_per_event' })
    t.index(['status', 'next_attempt_at'], 'webhook_deliveries_due')
    t.index(['webhook_id', 'id'], 'webhook_deliveries_webhook_id')
    t.index(['created_at'], 'webhook_deliveries_created_at')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_deliveries')
  await knex.schema.dropTable('webhooks')
}
