import type { Knex } from 'knex'
import { dropPlainColumns } from '../lib/store/drop-columns.js'

// Cron schedules for heartbeats: a heartbeat is due either `every_s` after its last success or at
// the next occurrence of `cron` in the IANA zone `zone` (lib/rules/heartbeat.ts). A cron heartbeat
// keeps `every_s` at 0, which no simple schedule can be (30 s at least): the column stays NOT NULL,
// since changing it would rebuild the table on SQLite, its pings' foreign key included.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('heartbeats', (t) => {
    t.string('cron', 100).nullable()
    t.string('zone', 64).nullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  // A cron heartbeat has no schedule without these columns: it is removed as the API removes one
  // (its `sites` row kept as history, its domain freed).
  const cron: Array<{ id: number; site_id: number; slug: string }> = await knex('heartbeats')
    .whereNotNull('cron')
    .select('id', 'site_id', 'slug')
  for (const row of cron) {
    await knex('heartbeat_pings').where({ heartbeat_id: row.id }).delete()
    await knex('status_page_sites').where({ site_id: row.site_id }).delete()
    await knex('heartbeats').where({ id: row.id }).delete()
    await knex('sites')
      .where({ id: row.site_id })
      .update({ removed_at: new Date(), domain: `heartbeat:${row.slug}~${row.site_id}` })
  }
  await dropPlainColumns(knex, 'heartbeats', ['cron', 'zone'])
}
