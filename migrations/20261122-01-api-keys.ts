import type { Knex } from 'knex'

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    t.increments('id').unsigned().primary()
    t.string('name', 100).notNullable()
    // SHA-256 of the key, hex: the key itself is never stored.
    t.string('key_hash', 64).notNullable().unique()
    // Requests per minute; null means the server's RATE_LIMIT_PER_MIN.
    t.integer('rate_limit').unsigned().nullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.datetime('revoked_at', { precision: 3 }).nullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys')
}
