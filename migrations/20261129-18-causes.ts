import type { Knex } from 'knex'
import { dropPlainColumns } from '../lib/store/drop-columns.js'

// Why a site is not clean: its newest check's failing locations (error text, code, HTTP status)
// on its row, and the same as it stood when each outage opened. JSON text written by
// lib/rules/down-cause.ts, which bounds it (a few KB at most); null when nothing failed.
// `service_urls`: the public URL each serving process announced at start, so the operator tool,
// which may run without the server, prints the links the server serves.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.text('cause').nullable()
  })
  await knex.schema.alterTable('outages', (t) => {
    t.text('cause').nullable()
  })
  await knex.schema.createTable('service_urls', (t) => {
    t.string('name', 32).primary()
    t.string('public_url', 512).notNullable()
    t.datetime('updated_at', { precision: 3 }).notNullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('service_urls')
  await dropPlainColumns(knex, 'outages', ['cause'])
  await dropPlainColumns(knex, 'sites', ['cause'])
}
