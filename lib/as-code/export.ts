import type { ConfigFile } from '../rules/config-file.js'
import { configText } from '../rules/config-plan.js'
import type { Db } from '../store/db.js'
import { readStoredConfig } from '../store/config-state.js'

/**
 * Today's tracked sites and status pages as a configuration file, hand-made ones included, so that
 * a team starts from what it has: applying it changes nothing. Sites and pages hold no secret
 * today; when a resource that does is exported, its secrets are written as `${NAME}`.
 */
export async function exportConfig({ db }: { db: Db }): Promise<ConfigFile> {
  const stored = await readStoredConfig({ db })
  return {
    sites: stored.sites.map(({ managed: _managed, ...site }) => site),
    pages: stored.pages.map(({ managed: _managed, ...page }) => page)
  }
}

/** The export as the file's text, its first line pointing editors at the schema. */
export async function exportConfigText({ db, schemaUrl }: { db: Db; schemaUrl: string | null }): Promise<string> {
  return configText(await exportConfig({ db }), schemaUrl)
}
