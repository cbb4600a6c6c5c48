import type { Knex } from 'knex'
import { dropPlainColumns } from '../lib/store/drop-columns.js'

// A monitor of kind tcp, tls or dns (issue 47) owns a `sites` row of that kind, as a heartbeat
// does: domain `monitor:<slug>` (no domain holds a colon), its check in `check_spec`, and the host
// it probes here. Outages, uptime, SLA, maintenance, events, alerts and the schedule are keyed by
// the row's id, as a site's. Null for web sites and heartbeats.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.string('target', 253).nullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex('sites').whereIn('kind', ['tcp', 'tls', 'dns']).delete()
  await dropPlainColumns(knex, 'sites', ['target'])
}
