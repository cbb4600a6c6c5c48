import type { Knex } from 'knex'

// The certificate the newest check saw (its expiry and issuer), for the status record after a
// restart; and what `certificate.expiring` already announced for the site (the expiry it concerned
// and the lowest threshold announced), written in the same transaction as the event, so that
// neither a restart nor a second instance announces a threshold twice.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.datetime('tls_expires_at', { precision: 3 }).nullable()
    t.string('tls_issuer', 512).nullable()
    t.datetime('tls_notice_expires_at', { precision: 3 }).nullable()
    t.integer('tls_notice_days').unsigned().nullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.dropColumn('tls_notice_days')
    t.dropColumn('tls_notice_expires_at')
    t.dropColumn('tls_issuer')
    t.dropColumn('tls_expires_at')
  })
}
