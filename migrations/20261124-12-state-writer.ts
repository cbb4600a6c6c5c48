import type { Knex } from 'knex'

// Which process wrote a site's current state (`state_by`, a token per process): every instance
// reads the states written since its last look, and one it wrote itself is already in its memory.
// Read back, those were most of what the freshness poll read: each state once per poll while it
// stayed in the poll's overlap, five times in all (60,000 sites a minute: 5,000 rows a second).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.string('state_by', 64).nullable()
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.dropColumn('state_by')
  })
}
