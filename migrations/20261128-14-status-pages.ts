import type { Knex } from 'knex'

// Status pages: a slug, a title, an optional description and logo, and an ordered list of tracked
// sites with an optional display name each. A page's sites go with the page (cascade); a site that
// stops being tracked leaves its pages in the same transaction (lib/monitoring/remove-site.ts),
// since sites are kept as rows after removal. `changed_at` moves with every change, so that an
// instance may tell its copy is current.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('status_pages', (t) => {
    t.increments('id').unsigned().primary()
    t.string('slug', 64).notNullable().unique({ indexName: 'status_pages_slug' })
    t.string('title', 200).notNullable()
    t.string('description', 1000).nullable()
    t.string('logo_url', 2048).nullable()
    t.datetime('created_at', { precision: 3 }).notNullable()
    t.datetime('changed_at', { precision: 3 }).notNullable()
  })
  await knex.schema.createTable('status_page_sites', (t) => {
    t.integer('page_id').unsigned().notNullable().references('id').inTable('status_pages').onDelete('CASCADE')
    t.integer('site_id').unsigned().notNullable().references('id').inTable('sites')
    t.integer('position').unsigned().notNullable()
    t.string('display_name', 200).nullable()
    t.primary(['page_id', 'site_id'])
    t.index(['site_id'], 'status_page_sites_site')
  })
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('status_page_sites')
  await knex.schema.dropTable('status_pages')
}
