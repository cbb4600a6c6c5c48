import type { Knex } from 'knex'

// When the current tracking period's first check was recorded: monitored time for uptime and the
// SLA starts there (time before it is unknown, not up), read from the site's row instead of a scan
// of its checks per request. The outages index below covers an SLA's outage ranges, so a year of
// 10,000 outages is one index range read without touching the rows.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sites', (t) => {
    t.datetime('first_checked_at', { precision: 3 }).nullable()
  })
  // The oldest check of the current tracking period still stored; checks are pruned after their
  // retention, so an outage (which opened at a check) may be older, and a site whose checks are all
  // gone keeps at least its newest check's time. Monitored time may come out short, never long.
  await knex.raw(
    `update sites set first_checked_at = (
       select min(c.checked_at) from checks c where c.site_id = sites.id and c.checked_at >= sites.added_at)`
  )
  await knex.raw(
    `update sites set first_checked_at = (
       select min(o.started_at) from outages o where o.site_id = sites.id and o.started_at >= sites.added_at)
     where exists (
       select 1 from outages o where o.site_id = sites.id and o.started_at >= sites.added_at
         and (sites.first_checked_at is null or o.started_at < sites.first_checked_at))`
  )
  await knex('sites')
    .whereNull('first_checked_at')
    .whereNotNull('checked_at')
    .update({ first_checked_at: knex.ref('checked_at') })
  // The outages listing's (site, start, id) index with the end added: the same order for a domain's
  // listing, and it now holds every column an SLA reads. Made before the old one goes: MySQL needs
  // an index on site_id for the foreign key at all times.
  await knex.schema.alterTable('outages', (t) => {
    t.index(['site_id', 'started_at', 'id', 'ended_at'], 'outages_site_started_at_id_ended_at')
  })
  await knex.schema.alterTable('outages', (t) => {
    t.dropIndex(['site_id', 'started_at', 'id'], 'outages_site_started_at_id')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('outages', (t) => {
    t.index(['site_id', 'started_at', 'id'], 'outages_site_started_at_id')
  })
  await knex.schema.alterTable('outages', (t) => {
    t.dropIndex(['site_id', 'started_at', 'id', 'ended_at'], 'outages_site_started_at_id_ended_at')
  })
  await knex.schema.alterTable('sites', (t) => {
    t.dropColumn('first_checked_at')
  })
}
