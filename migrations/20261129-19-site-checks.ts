import type { Knex } from 'knex'
import { dropPlainColumns } from '../lib/store/drop-columns.js'

// A tracked site's own request and assertions (lib/rules/check-spec.ts, http only: the seed's routes
// by domain answer for the web check): the JSON of its normal form, the values of its secret headers
// sealed (lib/monitoring/check-secrets.ts). Null: the plain web check, as before. Bounded by the
// check's own limits (16 KiB body, 20 headers, 2 KiB path), well under a MEDIUMTEXT.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.text('check_spec', 'mediumtext').nullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  await dropPlainColumns(knex, 'sites', ['check_spec'])
}
