import type { ConfigFile } from '../rules/config-file.js'
import { configText } from '../rules/config-plan.js'
import type { Db } from '../store/db.js'
import { readStoredConfig, type OpenSealed } from '../store/config-state.js'

/**
 * Today's state as a configuration file, hand-made resources included, so that a team starts from
 * what it has: applying it (with the secrets it names set) changes nothing. Secrets are written
 * as `${NAME}` names (lib/rules/config-text.ts), never as values: `open` only tells which secret
 * fields a channel has.
 */
export async function exportConfig({ db, open = null }: { db: Db; open?: OpenSealed | null }): Promise<ConfigFile> {
  const stored = await readStoredConfig({ db, open })
  const strip = <T extends { managed: boolean }>({ managed: _managed, ...rest }: T): Omit<T, 'managed'> => rest
  return {
    sites: stored.sites.map(strip),
    monitors: stored.monitors.map(strip),
    pages: stored.pages.map(strip),
    webhooks: stored.webhooks.map(strip),
    heartbeats: stored.heartbeats.map(strip),
    channels: stored.channels.map(strip),
    alert_policies: stored.alert_policies.map(strip)
  }
}

/** The export as the file's text, its first line pointing editors at the schema. */
export async function exportConfigText({
  db,
  schemaUrl,
  open = null
}: {
  db: Db
  schemaUrl: string | null
  open?: OpenSealed | null
}): Promise<string> {
  return configText(await exportConfig({ db, open }), schemaUrl)
}
