import type { Knex } from 'knex'

// Several instances on one MySQL database share the schedule through the sites' rows: `due_at` is a
// site's next check not yet claimed, `lease_owner` and `lease_until` say which instance claimed the
// one before and until when it answers for it (one interval), so that a dead instance's claims are
// taken over. `state_at` is when the row's current state was last written, so that every instance
// can read the states changed since its last look. `instances` holds each instance's heartbeat.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.datetime('due_at', { precision: 3 }).nullable()
    t.string('lease_owner', 191).nullable()
    t.datetime('lease_until', { precision: 3 }).nullable()
    t.datetime('state_at', { precision: 3 }).nullable()
    t.index(['removed_at', 'due_at'], 'sites_due_at')
    t.index(['lease_owner', 'lease_until'], 'sites_lease')
    t.index(['state_at'], 'sites_state_at')
  })
  await knex.schema.createTable('instances', (t) => {
    t.string('id', 191).primary()
    t.datetime('started_at', { precision: 3 }).notNullable()
    t.datetime('seen_at', { precision: 3 }).notNullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('instances')
  await knex.schema.alterTable('sites', (t) => {
    t.dropIndex(['state_at'], 'sites_state_at')
    t.dropIndex(['lease_owner', 'lease_until'], 'sites_lease')
    t.dropIndex(['removed_at', 'due_at'], 'sites_due_at')
    t.dropColumn('state_at')
    t.dropColumn('lease_until')
    t.dropColumn('lease_owner')
    t.dropColumn('due_at')
  })
}
