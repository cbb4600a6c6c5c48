import type { Knex } from 'knex'
import { dropPlainColumns } from '../lib/store/drop-columns.js'

// Monitoring as code for webhooks, heartbeats, alert channels and alert policies: `managed_by`
// names what made each (null: by hand; 'config': an apply), as on sites and status pages
// (migration 20), so that `apply --prune` removes only what an earlier apply made.
const TABLES = ['webhooks', 'heartbeats', 'alert_channels', 'alert_policies'] as const

export async function up(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    await knex.schema.alterTable(table, (t) => {
      t.string('managed_by', 32).nullable()
    })
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...TABLES].reverse()) {
    await dropPlainColumns(knex, table, ['managed_by'])
  }
}
