import type { Knex } from 'knex'

// Alerting: channels (where messages go), policies (when and to which channels), the alerts they
// raise (one per outage or notice and policy), the notifications each alert's steps made (one per
// step and channel) and the messages those were composed into (the delivery log and outbox).
//
// - Channel secrets (tokens, webhook URLs, passwords) are one AES-256-GCM ciphertext of a JSON
//   object (lib/webhooks/secret-box.ts); `config` holds only what may be shown back.
// - `alert_cursor` is the last event id turned into alerts: moved in the same transaction as the
//   alerts it made, so an event is judged once across instances and after a crash.
// - A notification is unique per alert, step and channel: a step is never sent twice.
// - A message is sent by whoever holds its lease (`claimed_until`, `claimed_by`), as webhook
//   deliveries are; `body` is the message's content (mediumtext: a grouped one may list 1,000 alerts).
// - `sites.alert_policy_id` / `status_pages.alert_policy_id` attach a policy (none: the default
//   one); `sites.depends_on_site_id` names a parent whose outage silences the site's alerts. No
//   foreign keys on those: deleting a policy or a site's removal clears them in code.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('alert_channels', (t) => {
    t.increments('id').unsigned().primary()
    t.string('name', 100).notNullable()
    t.string('kind', 16).notNullable()
    t.text('config').notNullable()
    t.text('secret').nullable()
    // Where this channel's failing is reported (another channel), if anywhere.
    t.integer('report_to').unsigned().nullable()
    t.integer('failures').unsigned().notNullable().defaultTo(0)
    t.datetime('failing_since', { precision: 3 }).nullable()
    t.string('last_error', 300).nullable()
    // When the next Alertmanager re-send of its firing alerts is due (other kinds: null).
    t.datetime('refresh_at', { precision: 3 }).nullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.datetime('changed_at', { precision: 3 }).notNullable()
  })
  await knex.schema.createTable('alert_policies', (t) => {
    t.increments('id').unsigned().primary()
    t.string('name', 100).notNullable().unique({ indexName: 'alert_policies_name' })
    t.text('channels').notNullable()
    t.text('events').notNullable()
    t.integer('after_min').unsigned().notNullable().defaultTo(0)
    t.integer('remind_every_min').unsigned().nullable()
    t.text('escalate').notNullable()
    t.boolean('on_resolved').notNullable().defaultTo(true)
    t.integer('group_window_s').unsigned().notNullable()
    // 1 for the default policy, NULL otherwise: the unique index allows one default, NULLs many times.
    t.integer('is_default').unsigned().nullable().unique({ indexName: 'alert_policies_one_default' })
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.datetime('changed_at', { precision: 3 }).notNullable()
  })
  await knex.schema.createTable('alert_cursor', (t) => {
    t.integer('id').unsigned().primary()
    t.bigInteger('last_event_id').unsigned().notNullable()
  })
  // Alerting starts with the events that follow: history raises no alert.
  const seq: { last_id?: unknown } | undefined = await knex('event_sequence').where({ id: 1 }).first('last_id')
  await knex('alert_cursor').insert({ id: 1, last_event_id: Number(seq?.last_id ?? 0) })
  await knex.schema.createTable('alerts', (t) => {
    t.bigIncrements('id').unsigned().primary()
    t.integer('policy_id').unsigned().notNullable().references('id').inTable('alert_policies').onDelete('CASCADE')
    t.integer('site_id').unsigned().notNullable()
    t.string('kind', 16).notNullable()
    t.string('dedup', 120).notNullable()
    t.text('subject').notNullable()
    t.string('detail', 300).nullable()
    t.datetime('started_at', { precision: 3 }).notNullable()
    t.datetime('ended_at', { precision: 3 }).nullable()
    t.datetime('opened_at', { precision: 3 }).nullable()
    t.integer('reminders').unsigned().notNullable().defaultTo(0)
    t.integer('escalated').unsigned().notNullable().defaultTo(0)
    // Channels the alert has reached (JSON ids): its reminders and resolution go to all of them.
    t.text('reached').notNullable()
    t.boolean('done').notNullable().defaultTo(false)
    t.datetime('next_due_at', { precision: 3 }).nullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.unique(['policy_id', 'dedup'], { indexName: 'alerts_one_per_policy' })
    t.index(['next_due_at'], 'alerts_due')
    t.index(['site_id', 'kind', 'done'], 'alerts_site')
  })
  await knex.schema.createTable('alert_notifications', (t) => {
    t.bigIncrements('id').unsigned().primary()
    t.bigInteger('alert_id').unsigned().notNullable().references('id').inTable('alerts').onDelete('CASCADE')
    t.integer('policy_id').unsigned().notNullable()
    t.integer('channel_id').unsigned().notNullable().references('id').inTable('alert_channels').onDelete('CASCADE')
    t.string('step', 24).notNullable()
    t.string('what', 16).notNullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    // The message it went out in (null: not composed yet), and the incident key it belongs to there.
    t.bigInteger('message_id').unsigned().nullable()
    t.string('incident', 64).nullable()
    t.unique(['alert_id', 'step', 'channel_id'], { indexName: 'alert_notifications_once' })
    t.index(['channel_id', 'message_id'], 'alert_notifications_pending')
  })
  await knex.schema.createTable('alert_messages', (t) => {
    t.bigIncrements('id').unsigned().primary()
    t.integer('channel_id').unsigned().notNullable().references('id').inTable('alert_channels').onDelete('CASCADE')
    t.integer('policy_id').unsigned().nullable()
    t.string('kind', 16).notNullable()
    t.string('title', 300).notNullable()
    t.integer('items').unsigned().notNullable().defaultTo(0)
    t.text('body', 'mediumtext').notNullable()
    t.string('status', 16).notNullable()
    t.integer('attempts').unsigned().notNullable().defaultTo(0)
    t.integer('last_http_code').unsigned().nullable()
    t.string('last_error', 300).nullable()
    // A short, cleaned excerpt of what the receiver answered last.
    t.string('answer', 300).nullable()
    t.datetime('next_attempt_at', { precision: 3 }).notNullable()
    t.datetime('claimed_until', { precision: 3 }).nullable()
    t.string('claimed_by', 100).nullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.datetime('delivered_at', { precision: 3 }).nullable()
    t.index(['channel_id', 'id'], 'alert_messages_channel')
    t.index(['status', 'id'], 'alert_messages_pending')
    t.index(['created_at'], 'alert_messages_created_at')
  })
  await knex.schema.alterTable('sites', (t) => {
    t.integer('alert_policy_id').unsigned().nullable()
    t.integer('depends_on_site_id').unsigned().nullable()
  })
  await knex.schema.alterTable('status_pages', (t) => {
    t.integer('alert_policy_id').unsigned().nullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('status_pages', (t) => {
    t.dropColumn('alert_policy_id')
  })
  await knex.schema.alterTable('sites', (t) => {
    t.dropColumn('depends_on_site_id')
    t.dropColumn('alert_policy_id')
  })
  await knex.schema.dropTable('alert_messages')
  await knex.schema.dropTable('alert_notifications')
  await knex.schema.dropTable('alerts')
  await knex.schema.dropTable('alert_cursor')
  await knex.schema.dropTable('alert_policies')
  await knex.schema.dropTable('alert_channels')
}
